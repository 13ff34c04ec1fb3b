"""Flat per-sentence scores split back into one array per abstract."""

import numpy as np
import pytest

from sciera.verify.base import AbstractText
from sciera.verify.trained import per_abstract


def _abstract(doc: str, n: int) -> AbstractText:
    return AbstractText(doc, "", tuple(f"sentence {i}." for i in range(n)))


def test_splits_in_order_of_the_abstracts() -> None:
    parts = per_abstract(
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [_abstract("a", 2), _abstract("b", 3), _abstract("c", 1)]
    )
    assert [p.tolist() for p in parts] == [[1.0, 2.0], [3.0, 4.0, 5.0], [6.0]]


def test_no_abstracts_is_no_arrays() -> None:
    assert per_abstract(np.array([]), []) == []


def test_an_abstract_without_sentences_gets_an_empty_array() -> None:
    parts = per_abstract([1.0, 2.0], [_abstract("a", 0), _abstract("b", 2)])
    assert [p.tolist() for p in parts] == [[], [1.0, 2.0]]


def test_a_count_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="3 values for 2 sentences"):
        per_abstract([1.0, 2.0, 3.0], [_abstract("a", 2)])
