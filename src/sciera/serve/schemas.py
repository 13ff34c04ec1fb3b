"""Request and response bodies of the HTTP API, with the limits every request is held to.

Requests forbid unknown fields (a misspelt ``k`` is an error, not a silent default) and take
each value as JSON Schema reads the OpenAPI document: a boolean only as ``true``/``false``,
an integer as a number without a fraction (``5`` or ``5.0``, never ``"5"``). The
corpus name is checked against the served corpora by the app (an unknown one is a 404);
everything else is checked here, so a bad request never reaches a model.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from sciera.corpus.fulltext.sections import KINDS
from sciera.rerank.registry import RERANKERS

MAX_QUERY_CHARS = 2000
MAX_K = 100
MAX_DEPTH = 1000

RetrieverName = Literal["bm25", "dense", "hybrid"]
QuestionType = Literal["auto", "yesno", "factoid", "list", "ideal"]
SectionKind = Literal[KINDS]  # type: ignore[valid-type]
Sections = Annotated[
    list[SectionKind] | None,
    Field(
        None,
        min_length=1,
        max_length=len(KINDS),
        description="Retrieve only passages of these sections of full-text papers (a "
        "passage of an abstract-only document counts as abstract); the CLI's --section.",
    ),
]


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty")
    return text.strip()


def _json_integer(value: Any) -> Any:
    """``5.0`` is an integer to JSON Schema: take it as ``5`` (strict mode refuses floats)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[int, BeforeValidator(_json_integer)]

Query = Annotated[
    str,
    Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Not blank."),
    AfterValidator(_not_blank),
]


class _Request(BaseModel):
    # strict: a value of another JSON type than the schema says is refused, not coerced
    # ({"stream": 0.0} or {"k": "5"} are 422s, as the OpenAPI schema promises; JsonInt
    # still takes 5.0, which JSON Schema counts as an integer)
    model_config = ConfigDict(extra="forbid", strict=True)

    corpus: str | None = Field(
        None, max_length=200, description="A served corpus name (default: the first one)."
    )


class SearchRequest(_Request):
    query: Query
    k: JsonInt = Field(10, ge=1, le=MAX_K, description="Passages to return.")
    retriever: RetrieverName | None = Field(
        None, description="First stage (default: the server's settings)."
    )
    sections: Sections = None


class RerankRequest(_Request):
    query: Query
    k: JsonInt = Field(5, ge=1, le=MAX_K, description="Reranked passages to return.")
    depth: JsonInt = Field(30, ge=1, le=MAX_DEPTH, description="First-stage candidates to rerank.")
    reranker: str | None = Field(
        None, description=f"One of {sorted(RERANKERS)} (default: the server's settings)."
    )
    retriever: RetrieverName | None = Field(None, description="First stage for the candidates.")
    sections: Sections = None

    @field_validator("reranker")
    @classmethod
    def _known_reranker(cls, name: str | None) -> str | None:
        if name is not None and name not in RERANKERS:
            raise ValueError(f"unknown reranker {name!r}; choose one of {sorted(RERANKERS)}")
        return name


class AskRequest(_Request):
    question: Query
    stream: bool = Field(
        False, description="Reply with Server-Sent Events (also with Accept: text/event-stream)."
    )
    question_type: QuestionType | None = Field(
        None, description="Answer type (default: the server's settings; auto = detected)."
    )
    sections: Sections = None


class VerifyRequest(_Request):
    claim: Query
    stream: bool = Field(
        False, description="Reply with Server-Sent Events (also with Accept: text/event-stream)."
    )
    sections: Sections = None


class Hit(BaseModel):
    """One ranked passage; ``provenance`` holds each stage's score details."""

    rank: int
    score: float
    passage_id: str
    doc_id: str
    title: str
    section: str = Field("", description="The passage's section in a full-text paper.")
    text: str
    provenance: dict[str, Any] = {}


class SearchResponse(BaseModel):
    query: str
    corpus: str
    retriever: str
    items: list[Hit]


class Filtered(BaseModel):
    """A candidate the filter dropped, and why."""

    passage_id: str
    score: float
    why: str


class RerankResponse(BaseModel):
    query: str
    corpus: str
    first_stage: str
    depth: int
    reranker: str
    items: list[Hit]
    filtered: list[Filtered] = Field(
        default_factory=list,
        description="The candidates the filter dropped (tau over calibrated scores, top_k, "
        "or excluded by the reranker), and why.",
    )
    filter: dict[str, Any] = Field(
        default_factory=dict, description="The filter as applied: tau (None: off), top_k."
    )
    trace: dict[str, Any] | None = Field(
        None, description="The reranker's own trace (DeepEra: intent, every candidate's score)."
    )


class AskResponse(BaseModel):
    """:func:`sciera.pipeline.answer_json`: the answer, its citations and evidence, the trace."""

    question: str
    question_type: str
    text: str
    exact: list[str]
    insufficient: bool
    citations: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    trace: dict[str, Any]


class RationaleOut(BaseModel):
    """A rationale sentence, verbatim, with its index in the abstract's sentence list."""

    index: int
    text: str
    score: float


class AbstractVerdictOut(BaseModel):
    doc_id: str
    title: str
    label: str = Field(description="SUPPORT, CONTRADICT or NOT ENOUGH INFO.")
    confidence: float
    relevance: float | None = Field(
        None, description="The reranker's P(relevant) the relevance gate read (None: none)."
    )
    probs: dict[str, float]
    read: bool = Field(
        True,
        description="Whether the verdict model read the abstract (false: the relevance gate "
        "kept it out first or no sentence was picked, and probs are a placeholder).",
    )
    rationales: list[RationaleOut]


class VerifyResponse(BaseModel):
    """:func:`sciera.verify.stage.verification_json`: the overall verdict (SUPPORT,
    CONTRADICT, NOT ENOUGH INFO or CONFLICTING) and each top-ranked abstract's."""

    claim: str
    label: str
    confidence: float
    conflicting: bool
    supporting: list[str]
    contradicting: list[str]
    abstracts: list[AbstractVerdictOut]


class CorpusInfo(BaseModel):
    name: str
    path: str
    default: bool
    documents: int
    passages: int
    indexes: dict[str, dict[str, Any]] = Field(
        description="Index name -> kind, passages, parameters, build time, stale flag."
    )


class ContextPassage(BaseModel):
    """One passage of a document, in document order, with where it sits in the paper."""

    passage_id: str
    index: int
    section: str = ""
    subsection: str = ""
    kind: str = Field("", description="text, caption or table (empty for an abstract).")
    text: str


class DocumentResponse(BaseModel):
    corpus: str
    doc_id: str
    title: str
    passages: list[ContextPassage]


class ErrorBody(BaseModel):
    error: str
