"""Retrieval restricted to sections of full-text papers (``--section methods,results``).

:class:`SectionRetriever` wraps a first stage and keeps only passages whose top-level
section is one of the wanted kinds (:func:`~sciera.corpus.fulltext.sections.section_kinds`:
"Materials and methods" is ``methods``; "Results and discussion" is both) or whose
heading is one of the wanted words. A passage of an abstract-only document (no section)
counts as ``abstract``. It asks the inner retriever for more passages than ``k`` (five
times, then twenty times, up to ``max_depth``) so that ``k`` passages usually survive;
ranks are renumbered, scores and provenance kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from sciera.corpus.fulltext.sections import parse_section_filter, section_kinds
from sciera.errors import ScieraError
from sciera.retrieve.base import Retriever
from sciera.types import Passage, Ranking, ScoredPassage


def parse_sections(spec: str | Sequence[str]) -> frozenset[str]:
    """``"methods,results"`` (or a list of kinds) as a set of kinds; a one-line error
    naming an unknown kind."""
    text = spec if isinstance(spec, str) else ",".join(spec)
    try:
        return parse_section_filter(text)
    except ValueError as exc:
        raise ScieraError(f"--section: {exc}") from None


def in_sections(passage: Passage, kinds: frozenset[str]) -> bool:
    """Whether ``passage``'s section is one of ``kinds``."""
    if not passage.section:
        return "abstract" in kinds
    return bool(section_kinds(passage.section) & kinds) or passage.section.lower() in kinds


class FilterRetriever:
    """Wraps a retriever to return only the passages :meth:`keeps` accepts, asking the
    inner stage for five, then twenty times ``k``, then ``max_depth`` passages until ``k``
    survive (or the inner stage has no more)."""

    def __init__(self, inner: Retriever, label: str, max_depth: int = 2000) -> None:
        self.inner, self.max_depth = inner, max_depth
        self.name = f"{inner.name}+{label}"

    def keeps(self, passage: Passage) -> bool:
        raise NotImplementedError

    def _keep(self, ranking: Ranking, k: int) -> Ranking:
        kept = [it for it in ranking if self.keeps(it.passage)][:k]
        items = tuple(
            ScoredPassage(it.passage, it.score, rank=i + 1, provenance=it.provenance)
            for i, it in enumerate(kept)
        )
        return Ranking(ranking.query, items, ranking.stage, ranking.calibrated)

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        out: list[Ranking | None] = [None] * len(queries)
        todo = list(range(len(queries)))
        for factor in (5, 20, None):
            depth = self.max_depth if factor is None else min(k * factor, self.max_depth)
            rankings = self.inner.search_many([queries[i] for i in todo], depth)
            left = []
            for i, ranking in zip(todo, rankings, strict=True):
                kept = self._keep(ranking, k)
                out[i] = kept
                if len(kept) < k and len(ranking) >= depth and depth < self.max_depth:
                    left.append(i)  # too few survived and the inner stage had more
            todo = left
            if not todo:
                break
        return [r for r in out if r is not None]

    def search(self, query: str, k: int) -> Ranking:
        return self.search_many([query], k)[0]


class SectionRetriever(FilterRetriever):
    """Wraps a retriever to return only passages of the wanted section kinds."""

    def __init__(self, inner: Retriever, kinds: frozenset[str], max_depth: int = 2000) -> None:
        if not kinds:
            raise ScieraError("--section: name at least one section kind")
        super().__init__(inner, "sections", max_depth)
        self.kinds = kinds

    def keeps(self, passage: Passage) -> bool:
        return in_sections(passage, self.kinds)


def keep_sections(retriever: Retriever, sections: Sequence[str] | None) -> Retriever:
    """``retriever`` keeping only passages of ``sections`` (kinds, checked: a one-line
    error names an unknown one), or ``retriever`` itself when none are given."""
    if not sections:
        return retriever
    return SectionRetriever(retriever, parse_sections(sections))
