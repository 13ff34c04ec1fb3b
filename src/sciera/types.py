"""The data contract shared by every stage: small frozen records, never dicts.

Stages read and return these types only. Records are immutable; a stage that
changes something returns a new record (``dataclasses.replace``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True, slots=True)
class Document:
    """One source record as read from a corpus file (an abstract, a paper)."""

    doc_id: str
    title: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _frozen_map(self.metadata))


def document_of(passage_id: str) -> str:
    """The document a passage id names (``"d#3"`` -> ``"d"``); an id without ``#`` is a
    document id already."""
    return passage_id.rpartition("#")[0] or passage_id


@dataclass(frozen=True, slots=True)
class Passage:
    """A retrievable unit: at most N words of one document, cut on sentence boundaries.

    ``text`` is the passage body without the title; ``contents`` is what gets
    indexed and shown to models (title prepended, as in the deep-research paper).
    """

    passage_id: str  # f"{doc_id}#{index}"
    doc_id: str
    index: int
    title: str
    text: str
    section: str = ""  # a full-text paper's top-level section ("Methods"); "" for abstracts

    @property
    def contents(self) -> str:
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True, slots=True)
class ScoredPassage:
    """A passage with the score and 1-based rank a stage gave it.

    ``provenance`` holds per-stage details (first-stage scores, an LLM's reason,
    DeepEra's filtered flag ...) keyed by stage name.
    """

    passage: Passage
    score: float
    rank: int
    provenance: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "provenance", _frozen_map(self.provenance))

    @property
    def passage_id(self) -> str:
        return self.passage.passage_id


@dataclass(frozen=True, slots=True)
class Ranking:
    """An ordered list of scored passages for one query, best first.

    ``calibrated`` says the scores are calibrated P(relevant) (a threshold such as tau
    means the same for any stage that sets it); otherwise they order passages only.
    """

    query: str
    items: tuple[ScoredPassage, ...]
    stage: str = ""
    calibrated: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[ScoredPassage]:
        return iter(self.items)

    def __getitem__(self, i: int) -> ScoredPassage:
        return self.items[i]

    @property
    def passage_ids(self) -> list[str]:
        return [item.passage_id for item in self.items]

    def top(self, k: int) -> Ranking:
        return Ranking(self.query, self.items[:k], self.stage, self.calibrated)

    @classmethod
    def from_scores(
        cls,
        query: str,
        scored: list[tuple[Passage, float]] | list[tuple[Passage, float, Mapping[str, Any]]],
        stage: str,
    ) -> Ranking:
        """Sort (passage, score[, provenance]) by score descending (ties by id) and rank them."""
        rows = [(p, float(s), (rest[0] if rest else _EMPTY)) for p, s, *rest in scored]
        rows.sort(key=lambda r: (-r[1], r[0].passage_id))
        items = tuple(
            ScoredPassage(p, s, rank=i + 1, provenance=prov) for i, (p, s, prov) in enumerate(rows)
        )
        return cls(query, items, stage)


IntentKind = Literal[
    "definition", "mechanism", "comparison", "causal", "factual", "functional role"
]
INTENT_KINDS: tuple[str, ...] = (
    "definition",
    "mechanism",
    "comparison",
    "causal",
    "factual",
    "functional role",
)


@dataclass(frozen=True, slots=True)
class Intent:
    """DeepEra's structured reading of a question (paper Figure 9)."""

    topic: str
    entity_type: str
    intent: str
    expected_answer_type: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """A passage the answer reads, with its query-conditioned summary and the rationale
    sentences the verifier read from its abstract (verbatim, with their indices).

    The original passage is always kept alongside the summary. ``kept`` is False for a
    passage below the filter's tau that the answer cites because the verifier found
    rationale sentences in its abstract.
    """

    passage: Passage
    score: float
    summary: str = ""
    rationales: tuple[Rationale, ...] = ()
    kept: bool = True

    @property
    def text(self) -> str:
        return self.summary or self.passage.contents


@dataclass(frozen=True, slots=True)
class Citation:
    marker: int  # the [n] used in the answer text
    passage_id: str
    title: str = ""
    sentences: tuple[int, ...] = ()  # the cited abstract's rationale sentences (indices)
    section: str = ""  # the cited passage's section in a full-text paper ("" for abstracts)


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    text: str
    question_type: str
    citations: tuple[Citation, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    insufficient: bool = False
    trace: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class Candidate:
    passage_id: str
    text: str
    is_distractor: bool = False
    distractor_type: str = ""


@dataclass(frozen=True, slots=True)
class QAInstance:
    """One benchmark item in the SciRAG-SSLI format (paper Figure 8)."""

    id: str
    question: str
    answer: str
    gold_passage_ids: tuple[str, ...]
    setting: str  # "base" | "ssli"
    candidates: tuple[Candidate, ...]
    provenance: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


def to_plain(value: Any) -> Any:
    """JSON-ready data: mappings (read-only ones too) to dicts with string keys, tuples and
    lists to lists, dataclasses to their fields; anything else as it is."""
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        from dataclasses import asdict

        return to_plain(asdict(value))
    return value


# Claim verification (SciFact's labels; sciera.verify)
SUPPORT = "SUPPORT"
CONTRADICT = "CONTRADICT"
NOT_ENOUGH_INFO = "NOT ENOUGH INFO"
CONFLICTING = "CONFLICTING"
VERDICT_LABELS: tuple[str, str, str] = (SUPPORT, CONTRADICT, NOT_ENOUGH_INFO)
"""An abstract's verdict on a claim, in the order every probability vector uses."""


@dataclass(frozen=True, slots=True)
class Rationale:
    """One sentence of an abstract chosen as evidence: ``text`` is the sentence verbatim,
    ``index`` its position in the abstract's sentence list, ``score`` P(rationale)."""

    doc_id: str
    index: int
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class AbstractVerdict:
    """What one abstract says about a claim: ``label`` (one of :data:`VERDICT_LABELS`)
    with its calibrated ``confidence``, the probabilities of all three labels (``probs``,
    in :data:`VERDICT_LABELS` order) and the rationale sentences cited for it (the
    decision read them, perhaps with a sentence of context besides), the reranker's
    P(relevant) when the relevance gate read one, and whether the verdict model ``read``
    the abstract (False when the gate kept it out first or no sentence was picked:
    ``probs`` are then a placeholder, all on NOT ENOUGH INFO)."""

    doc_id: str
    title: str
    label: str
    confidence: float
    probs: tuple[float, float, float]
    rationales: tuple[Rationale, ...] = ()
    relevance: float | None = None
    read: bool = True

    @property
    def probabilities(self) -> dict[str, float]:
        """``{label: probability}`` for the three labels."""
        return dict(zip(VERDICT_LABELS, self.probs, strict=True))


@dataclass(frozen=True, slots=True)
class Verification:
    """The verdict of all abstracts on a claim: ``label`` is SUPPORT, CONTRADICT, NOT
    ENOUGH INFO or CONFLICTING (strong abstracts disagree: ``conflicting`` is then True
    and ``supporting`` / ``contradicting`` name them)."""

    claim: str
    verdicts: tuple[AbstractVerdict, ...]
    label: str
    confidence: float
    conflicting: bool = False
    supporting: tuple[str, ...] = ()
    contradicting: tuple[str, ...] = ()
