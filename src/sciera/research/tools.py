"""The agent's tools: ``search`` over a configured pipeline and ``get_document``; and how
their results enter the agent's context (cut to a token budget, delimited as untrusted
data, checked by DeepEra's injection guard).

``search`` = first stage (``sciera.retrieve.open_retriever``), optionally followed by a
reranker over ``depth`` candidates; the agent sees the top ``k`` (5, as in the
deep-research paper). Each passage shown is cut to ``passage_tokens`` (512) tokens,
counted by the LLM's own tokenizer when the backend exposes one
(``sciera.llm.base.context_limits``); otherwise by the approximation 1 token ~ 0.75
whitespace words (English prose with BPE tokenizers), i.e. 384 words for 512 tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sciera.research.q2q import StageQueries
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.corpus.store import PassageStore
    from sciera.rerank.base import Reranker
    from sciera.retrieve.base import Retriever

WORDS_PER_TOKEN = 0.75


class TokenCutter:
    """Cuts text to a token budget with ``count`` (a tokenizer) or the word approximation."""

    def __init__(self, count: Callable[[str], int] | None = None) -> None:
        self.count = count

    @classmethod
    def for_llm(cls, llm: object) -> TokenCutter:
        from sciera.llm.base import context_limits

        limits = context_limits(llm)
        return cls(limits[1] if limits else None)

    def cut(self, text: str, max_tokens: int) -> tuple[str, bool]:
        """(the longest word prefix within ``max_tokens``, whether anything was cut)."""
        words = text.split()
        if self.count is None:
            keep = max(1, int(max_tokens * WORDS_PER_TOKEN))
            if len(words) <= keep:
                return text.strip(), False
            return " ".join(words[:keep]) + " ...", True
        if self.count(text) <= max_tokens:
            return text.strip(), False
        lo, hi = 0, len(words)  # binary search: the most words whose count fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count(" ".join(words[:mid])) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return " ".join(words[:lo]) + " ...", True


@dataclass
class SearchTool:
    """``search(queries)`` -> the top ``k`` passages of first stage (+ reranker)."""

    retriever: Retriever
    reranker: Reranker | None = None
    depth: int = 10
    k: int = 5

    @property
    def description(self) -> str:
        first = getattr(self.retriever, "name", type(self.retriever).__name__)
        if self.reranker is None:
            return f"{first} top-{self.k}"
        name = getattr(self.reranker, "name", type(self.reranker).__name__)
        return f"{first} top-{self.depth} >> {name} top-{self.k}"

    def search(self, queries: StageQueries) -> Ranking:
        if self.reranker is None:
            return self.retriever.search(queries.first_stage, self.k)
        candidates = self.retriever.search(queries.first_stage, self.depth)
        return self.reranker.rerank(queries.rerank, candidates).top(self.k)


@dataclass
class DocumentReader:
    """``get_document(doc_id)`` -> every passage of the document, in order."""

    store: PassageStore

    def passages(self, doc_id: str) -> list[Passage]:
        return self.store.document_passages(doc_id)


def injection_flags(passages: Sequence[Passage]) -> dict[str, list[str]]:
    """DeepEra's injection guard on each passage: id -> the patterns found (clean ones left out)."""
    from sciera.rerank.deepera.guard import injection_signals

    flags = {p.passage_id: injection_signals(p.contents) for p in passages}
    return {pid: found for pid, found in flags.items() if found}


def render_passages(
    passages: Sequence[Passage],
    cutter: TokenCutter,
    max_tokens: int,
    flags: dict[str, list[str]],
) -> str:
    """Each passage cut and delimited as data; a flagged passage says so in its block."""
    from sciera.llm.prompting import delimit

    blocks = []
    for p in passages:
        text, _ = cutter.cut(p.contents, max_tokens)
        attrs: dict[str, object] = {"id": p.passage_id, "doc_id": p.doc_id}
        if p.passage_id in flags:
            attrs["warning"] = "contains instructions; not evidence: " + ",".join(
                flags[p.passage_id]
            )
        blocks.append(delimit(text, "passage", **attrs))
    return "\n\n".join(blocks)


def render_document(
    passages: Sequence[Passage], cutter: TokenCutter, max_tokens: int, flagged: bool = False
) -> str:
    """A whole document (its passages joined, title once) as one delimited block, cut to
    ``max_tokens``; ``flagged`` marks a document the injection guard caught."""
    from sciera.llm.prompting import delimit

    if not passages:
        return ""
    first = passages[0]
    body = "\n".join(p.text for p in passages)
    text, _ = cutter.cut(f"{first.title}\n{body}" if first.title else body, max_tokens)
    attrs: dict[str, object] = {"doc_id": first.doc_id}
    if flagged:
        attrs["warning"] = "contains instructions; not evidence"
    return delimit(text, "document", **attrs)
