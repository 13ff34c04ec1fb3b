"""The citer's card section is read with one-line errors before any model loads, and the
trained selector is a citing selector (model-free)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.errors import ScieraError
from sciera.verify.base import AbstractText, CitingSelector
from sciera.verify.citer import Citer, per_abstract
from sciera.verify.trained import TrainedSelector


def test_a_broken_citer_section_is_one_line(tmp_path):
    with pytest.raises(ScieraError, match="no 'adapters'"):
        Citer.load(tmp_path, {"base": "scifact-minilm"})
    with pytest.raises(ScieraError, match="no 'base'"):
        Citer.load(tmp_path, {"adapters": "a.safetensors"})
    with pytest.raises(ScieraError, match=r"a\.safetensors: the citer's adapter file is missing"):
        Citer.load(tmp_path, {"base": "scifact-minilm", "adapters": "a.safetensors"})


def test_the_trained_selector_cites_through_its_network():
    class Net:
        citer = None

    class Fixed:
        def score_many(self, claim, abstracts):
            return [[0.25] * len(a.sentences) for a in abstracts]

    selector = TrainedSelector.__new__(TrainedSelector)
    selector.network = Net()
    assert isinstance(selector, CitingSelector)
    one = [AbstractText("d", "", ("a.", "b."))]
    assert selector.cite_many("c", one) is None  # no citer: the head's scores cite
    selector.network.citer = Fixed()
    assert selector.cite_many("c", one) == [[0.25, 0.25]]
    assert [list(x) for x in per_abstract([1, 2, 3], [*one, AbstractText("e", "", ("c",))])] == [
        [1.0, 2.0],
        [3.0],
    ]


def test_the_memo_answers_each_abstract_once_and_keeps_no_citer_as_none():
    from sciera.verify.memo import MemoSelector

    class Counting:
        name = "counting"

        def __init__(self, citer):
            self.calls, self.citer = [], citer

        def score_many(self, claim, abstracts):
            self.calls.append(("read", [a.doc_id for a in abstracts]))
            return [[0.5] * len(a.sentences) for a in abstracts]

        def cite_many(self, claim, abstracts):
            self.calls.append(("cite", [a.doc_id for a in abstracts]))
            return [[0.75] * len(a.sentences) for a in abstracts] if self.citer else None

    a, b = AbstractText("a", "", ("x.",)), AbstractText("b", "", ("y.", "z."))
    inner = Counting(citer=True)
    memo = MemoSelector(inner)
    assert memo.score_many("c", [a]) == [[0.5]]
    assert memo.score_many("c", [a, b]) == [[0.5], [0.5, 0.5]]
    assert memo.cite_many("c", [b]) == [[0.75, 0.75]]
    assert memo.cite_many("c", [a, b]) == [[0.75], [0.75, 0.75]]
    assert inner.calls == [("read", ["a"]), ("read", ["b"]), ("cite", ["b"]), ("cite", ["a"])]
    assert MemoSelector(Counting(citer=False)).cite_many("c", [a]) is None

    class Plain:
        name = "plain"

        def score_many(self, claim, abstracts):
            return [[0.1] for _ in abstracts]

    assert MemoSelector(Plain()).cite_many("c", [a]) is None


def test_an_ensemble_citer_scores_by_its_members_mean_logit(monkeypatch):
    import numpy as np

    from sciera.verify import citer as citer_module

    class Tok:
        sep_token = "[SEP]"

    # each "model" is a number: its logit for every pair is that number plus the pair's index
    monkeypatch.setattr(
        citer_module,
        "pair_logits",
        lambda model, tok, pairs, *a: np.arange(len(pairs), dtype=float) + model,
    )
    one = [AbstractText("d", "", ("a.", "b.")), AbstractText("e", "", ("c.",))]
    single = Citer(1.0, Tok())
    ensemble = Citer(1.0, Tok(), members=[3.0, 5.0])
    assert [list(x) for x in single.logits("c", one)] == [[1.0, 2.0], [3.0]]
    assert [list(x) for x in ensemble.logits("c", one)] == [[3.0, 4.0], [5.0]]
    assert ensemble.models == [1.0, 3.0, 5.0] and ensemble.model == 1.0
    with pytest.raises(ScieraError, match="names no adapter file"):
        Citer.load(Path("/x"), {"base": "scifact-minilm", "adapters": []})
    with pytest.raises(ScieraError, match=r"b\.safetensors: the citer's adapter file is missing"):
        Citer.load(Path("/x"), {"base": "scifact-minilm", "adapters": ["b.safetensors"]})
