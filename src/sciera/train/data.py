"""Training examples for relevance models: labelled queries with hard negatives mined by
the project's own first stage.

For every training query the first stage (``hybrid`` by default, Max-P to documents)
returns its top ``depth`` documents, each represented by its best passage. Gold documents
(qrels grade > 0) are positives, represented by the passage the first stage found for them
or, when it missed them, their first passage; every other retrieved document is a hard
negative. Abstracts the :class:`~sciera.train.splits.SplitGuard` forbids are dropped from
both sides, and a query it forbids stops the run.

Mining is resumable: each query's candidates are appended to a JSONL file as they come,
keyed by the store fingerprint and the first-stage configuration, so a rerun mines only
what is missing and a changed corpus or retriever is mined anew.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.corpus.store import PassageStore
from sciera.settings import Settings
from sciera.train.splits import SplitGuard

Progress = Callable[[str, int, int], None]
BATCH = 32


@dataclass(frozen=True, slots=True)
class TrainQuery:
    """One labelled query: its positives and its first-stage candidates, best first."""

    qid: str
    text: str
    positives: tuple[str, ...]  # passage ids
    candidates: tuple[tuple[str, float], ...]  # (passage id, first-stage score), rank order
    gold_docs: frozenset[str]
    hard: tuple[str, ...] = ()  # negatives every group carries (SSLI distractors)

    @property
    def negatives(self) -> list[str]:
        return [pid for pid, _ in self.candidates if _doc(pid) not in self.gold_docs]


def _doc(passage_id: str) -> str:
    return passage_id.split("#", 1)[0]


def mining_key(fingerprint: str, retriever: str, depth: int, settings: Settings) -> str:
    """What a mined candidate list depends on: the corpus, the retriever and its settings."""
    conf = {
        "store": fingerprint,
        "retriever": retriever,
        "depth": depth,
        "bm25": settings.bm25.model_dump(mode="json"),
        "embed": settings.embed.model_dump(mode="json"),
        "retrieve": settings.retrieve.model_dump(mode="json"),
    }
    return hashlib.sha256(json.dumps(conf, sort_keys=True).encode()).hexdigest()[:16]


def _read_cache(path: Path, key: str) -> dict[str, list[list[Any]]]:
    done: dict[str, list[list[Any]]] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a crash: mined again
        if rec.get("key") == key:
            done[rec["qid"]] = rec["candidates"]
    return done


def mine_candidates(
    corpus_dir: str | Path,
    queries: Mapping[str, str],
    *,
    settings: Settings,
    retriever: str = "hybrid",
    depth: int = 30,
    cache: str | Path | None = None,
    progress: Progress | None = None,
) -> dict[str, list[list[Any]]]:
    """``{qid: [[passage_id, score], ...]}``: the first stage's top ``depth`` documents
    (Max-P) for each query, resumed from and appended to ``cache``."""
    from sciera.retrieve import open_retriever
    from sciera.retrieve.maxp import MaxPRetriever, passage_depth

    with PassageStore.open(corpus_dir) as store:
        fingerprint = store.fingerprint()
    key = mining_key(fingerprint, retriever, depth, settings)
    path = Path(cache) if cache is not None else None
    done = _read_cache(path, key) if path is not None else {}
    todo = [q for q in queries if q not in done]
    if progress:
        progress("mining negatives", len(queries) - len(todo), len(queries))
    if todo:
        inner = open_retriever(corpus_dir, retriever, settings)
        first = MaxPRetriever(inner, depth=passage_depth(settings.retrieve.passage_depth, depth))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            rankings = first.search_many([queries[q] for q in chunk], depth)
            lines = []
            for qid, ranking in zip(chunk, rankings, strict=True):
                done[qid] = [[it.passage_id, float(it.score)] for it in ranking]
                lines.append(json.dumps({"key": key, "qid": qid, "candidates": done[qid]}))
            if path is not None:
                with path.open("a", encoding="utf-8") as out:
                    out.write("\n".join(lines) + "\n")
            if progress:
                progress(
                    "mining negatives", len(queries) - len(todo) + start + len(chunk), len(queries)
                )
    return {q: done[q] for q in queries}


def build_queries(
    store: PassageStore,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    mined: Mapping[str, Sequence[Sequence[Any]]],
    guard: SplitGuard,
) -> tuple[list[TrainQuery], dict[str, int]]:
    """Labelled :class:`TrainQuery` records and counts of what was left out and why."""
    skipped = {
        "no_query_text": 0,
        "no_positive": 0,
        "forbidden_positive_docs": 0,
        "forbidden_candidates": 0,
        "gold_missing_from_store": 0,
    }
    out: list[TrainQuery] = []
    for qid in sorted(qrels):
        if qid not in queries:
            skipped["no_query_text"] += 1
            continue
        problem = guard.query_problem(qid, queries[qid])
        if problem is not None:  # e.g. a training claim worded exactly like a test claim
            skipped[problem] = skipped.get(problem, 0) + 1
            continue
        gold_all = {d for d, g in qrels[qid].items() if g > 0}
        gold = set(guard.allowed_docs(sorted(gold_all)))
        skipped["forbidden_positive_docs"] += len(gold_all) - len(gold)
        cands = [(str(p), float(s)) for p, s in mined.get(qid, [])]
        allowed = set(guard.allowed_docs({_doc(p) for p, _ in cands}))
        kept = [(p, s) for p, s in cands if _doc(p) in allowed and _doc(p) not in gold_all - gold]
        skipped["forbidden_candidates"] += len(cands) - len(kept)
        found = {_doc(p): p for p, _ in kept}
        want = {d: found.get(d, f"{d}#0") for d in sorted(gold)}
        have = store.find_passages(list(want.values()))
        skipped["gold_missing_from_store"] += len(want) - len(have)
        positives = tuple(p for p in want.values() if p in have)
        if not positives:
            skipped["no_positive"] += 1
            continue
        out.append(TrainQuery(qid, queries[qid], positives, tuple(kept), frozenset(gold_all)))
    return out, skipped


def passage_texts(store: PassageStore, records: Sequence[TrainQuery]) -> dict[str, str]:
    """``passage_id -> contents`` (title + text) of every passage the records mention."""
    ids = {p for r in records for p in r.positives} | {p for r in records for p, _ in r.candidates}
    found = store.find_passages(sorted(ids))
    return {pid: p.contents for pid, p in found.items()}
