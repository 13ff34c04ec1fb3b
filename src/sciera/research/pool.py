"""The passages a run gathered, as the final answer's candidates: each passage once (its
best score), passages the injection guard flagged left out, best-scored first (ties: the
order they were found)."""

from __future__ import annotations

from collections.abc import Iterable

from sciera.types import Passage, Ranking, ScoredPassage


class EvidencePool:
    def __init__(self) -> None:
        self._best: dict[str, tuple[float, int, Passage]] = {}
        self._excluded: set[str] = set()

    def add(self, items: Iterable[ScoredPassage]) -> None:
        for it in items:
            seen = self._best.get(it.passage_id)
            order = seen[1] if seen else len(self._best)
            if seen is None or it.score > seen[0]:
                self._best[it.passage_id] = (it.score, order, it.passage)

    def exclude(self, passage_ids: Iterable[str]) -> None:
        self._excluded.update(passage_ids)

    def score_of_doc(self, doc_id: str) -> float | None:
        """The best score any passage of ``doc_id`` got so far."""
        scores = [s for s, _, p in self._best.values() if p.doc_id == doc_id]
        return max(scores) if scores else None

    def __len__(self) -> int:
        return len(self._best.keys() - self._excluded)

    def ranking(self, question: str) -> Ranking:
        rows = [r for pid, r in self._best.items() if pid not in self._excluded]
        rows.sort(key=lambda r: (-r[0], r[1]))
        items = tuple(ScoredPassage(p, s, i + 1) for i, (s, _, p) in enumerate(rows))
        return Ranking(question, items, "research")
