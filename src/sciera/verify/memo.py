"""Memoized verification backends: a policy search or a benchmark asks the same (claim,
abstract) scores and (claim, input) label probabilities many times; these answer each once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sciera.verify.base import AbstractText, CitingSelector, Probs, VerdictInput


class MemoSelector:
    """A selector's ``score_many`` (and its citer's ``cite_many``, when it is a
    :class:`~sciera.verify.base.CitingSelector`) per (claim, abstract)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "memo")
        self.cache: dict[tuple[str, str, str], Any] = {}

    def _many(
        self, kind: str, claim: str, abstracts: Sequence[AbstractText], call: Any
    ) -> list[Any] | None:
        todo = [a for a in abstracts if (kind, claim, a.doc_id) not in self.cache]
        if todo:
            got = call(claim, todo)
            if got is None:
                return None
            for a, s in zip(todo, got, strict=True):
                self.cache[(kind, claim, a.doc_id)] = s
        return [self.cache[(kind, claim, a.doc_id)] for a in abstracts]

    def score_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]]:
        return self._many("read", claim, abstracts, self.inner.score_many) or []

    def cite_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]] | None:
        if not isinstance(self.inner, CitingSelector):
            return None
        return self._many("cite", claim, abstracts, self.inner.cite_many)


class MemoVerdict:
    """A verdict model's ``predict_many`` per (claim, input)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "memo")
        self.cache: dict[tuple[str, VerdictInput], Probs] = {}

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]) -> list[Probs]:
        todo = [v for v in dict.fromkeys(inputs) if (claim, v) not in self.cache]
        if todo:
            for v, p in zip(todo, self.inner.predict_many(claim, todo), strict=True):
                self.cache[(claim, v)] = p
        return [self.cache[(claim, v)] for v in inputs]
