"""The retriever protocol, the passage source retrievers read from, and the shared
step that turns ``(passage_id, score)`` hits into :class:`~sciera.types.Ranking` s."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from sciera.errors import StaleIndexError
from sciera.types import Passage, Ranking

Hits = list[tuple[str, float]]
"""One query's ``(passage_id, score)`` pairs, best first."""


@runtime_checkable
class Retriever(Protocol):
    """First-stage retrieval: a query in, the top-``k`` passages out (best first)."""

    name: str

    def search(self, query: str, k: int) -> Ranking: ...

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]: ...


@runtime_checkable
class PassageSource(Protocol):
    """Where retrievers fetch full passages by id (the corpus ``PassageStore``)."""

    def get_passages(self, ids: Sequence[str]) -> list[Passage]: ...


class MemoryPassages:
    """A :class:`PassageSource` over passages held in memory (tests, small corpora)."""

    def __init__(self, passages: Iterable[Passage]) -> None:
        self._by_id = {p.passage_id: p for p in passages}

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[Passage]:
        return iter(self._by_id.values())

    def get_passages(self, ids: Sequence[str]) -> list[Passage]:
        """Passages in the order of ``ids``; an unknown id raises KeyError (like the store)."""
        missing = [i for i in ids if i not in self._by_id]
        if missing:
            raise KeyError(f"unknown passage id {missing[0]!r}")
        return [self._by_id[i] for i in ids]


def rankings_from_hits(
    queries: Sequence[str], hits: Sequence[Hits], source: PassageSource, stage: str
) -> list[Ranking]:
    """Fetch every hit's passage in one batch and build one Ranking per query.

    Raises :class:`StaleIndexError` when the index names a passage the source lacks.
    """
    wanted = list(dict.fromkeys(pid for per_query in hits for pid, _ in per_query))
    try:
        found = {p.passage_id: p for p in source.get_passages(wanted)} if wanted else {}
    except KeyError as exc:
        raise StaleIndexError(
            f"the {stage} index refers to a passage missing from the store ({exc}); "
            "rebuild it with `sciera index --corpus DIR`"
        ) from exc
    return [
        Ranking.from_scores(query, [(found[pid], score) for pid, score in per_query], stage)
        for query, per_query in zip(queries, hits, strict=True)
    ]
