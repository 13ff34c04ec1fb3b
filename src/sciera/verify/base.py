"""The two protocols of claim verification (SciFact's pipeline, as in VeriSci and
MultiVerS: rationale selection, then label prediction, each evaluated on its own).

- :class:`RationaleSelector`: (claim, the sentences of one abstract, its title) ->
  P(rationale) for each sentence.
- :class:`VerdictModel`: (claim or question, rationale sentences, title) -> calibrated
  probabilities over SUPPORT / CONTRADICT / NOT ENOUGH INFO (in
  :data:`sciera.types.VERDICT_LABELS` order).

Both take a whole claim's abstracts at once (``*_many``), so a backend batches one forward
pass over them; the single-abstract forms are for callers with one abstract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

Probs = tuple[float, float, float]
"""P(SUPPORT), P(CONTRADICT), P(NOT ENOUGH INFO)."""
UNIFORM: Probs = (1 / 3, 1 / 3, 1 / 3)
"""No opinion: the same probability for every label."""


def kind_of(text: str) -> str:
    """``question`` for text ending in a question mark, else ``claim``: a question's third
    label is "maybe" (the evidence does not settle it), a claim's NOT ENOUGH INFO."""
    return "question" if text.rstrip().endswith("?") else "claim"


@dataclass(frozen=True, slots=True)
class AbstractText:
    """An abstract as verification reads it: its id, title and sentence list (rationale
    indices point into ``sentences``), and its calibrated P(relevant) to the claim when a
    reranker gave one (``None``: not known, e.g. the contexts of a question)."""

    doc_id: str
    title: str
    sentences: tuple[str, ...]
    relevance: float | None = None


@dataclass(frozen=True, slots=True)
class VerdictInput:
    """What a verdict model reads for one abstract: the rationale sentences (verbatim, in
    abstract order) and the abstract's title."""

    sentences: tuple[str, ...]
    title: str = ""


@runtime_checkable
class RationaleSelector(Protocol):
    """P(rationale) of each sentence of each abstract for one claim."""

    name: str

    def score_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]]:
        """One list per abstract, one probability per sentence, in sentence order."""
        ...


@runtime_checkable
class CitingSelector(RationaleSelector, Protocol):
    """A selector that may score *which sentences are cited* with another model than the
    one that picks what the verdict reads (:mod:`sciera.verify.citer`)."""

    def cite_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]] | None:
        """P(rationale) for citing, as :meth:`score_many`; ``None``: cite by its scores."""
        ...


@runtime_checkable
class VerdictModel(Protocol):
    """Calibrated label probabilities for a claim (or a yes/no question) given rationales."""

    name: str

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]) -> list[Probs]:
        """One (P(SUPPORT), P(CONTRADICT), P(NOT ENOUGH INFO)) per input, summing to 1."""
        ...


def score_one(
    selector: RationaleSelector, claim: str, sentences: Sequence[str], title: str = ""
) -> list[float]:
    """P(rationale) of each sentence of one abstract."""
    return selector.score_many(claim, [AbstractText("", title, tuple(sentences))])[0]


def predict_one(
    model: VerdictModel, claim: str, rationales: Sequence[str], title: str = ""
) -> Probs:
    """The label probabilities for one abstract's rationale sentences."""
    return model.predict_many(claim, [VerdictInput(tuple(rationales), title)])[0]
