"""Evaluate a first-stage retriever on a query set with relevance judgments.

    from sciera.eval.retrieval import evaluate_retrieval
    result = evaluate_retrieval("corpora/scifact", "../shared/data/scifact",
                                "../shared/data/scifact/qrels/test.tsv", retriever="bm25")
    result.metrics  # {"ndcg@10": ..., "recall@100": ..., "map@10": ..., "mrr@10": ...}

Units. Judgments are per document, retrieval is per passage:

- ``unit="document"`` (default) aggregates each passage ranking to documents with
  Max-P (:func:`sciera.retrieve.maxp.maxp`: a document scores its best passage),
  then scores the documents against the judgments as they are. Passages are
  retrieved ``passage_depth`` deep (default ``10 * depth``) so that ``depth``
  distinct documents are usually available.
- ``unit="passage"`` scores the passage ranking itself; every passage inherits
  its document's grade, so a relevant document with three passages counts as
  three relevant passages (recall and the nDCG ideal use them all). These
  numbers are stricter and not comparable with published document-level ones.

The run is a ``{qid: {id: score}}`` mapping and is scored with trec_eval
semantics (ties by id descending), so :func:`write_trec_run` output evaluated by
trec_eval gives the same numbers. Only queries that have judgments are searched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sciera.errors import InputError, ScieraError
from sciera.eval.metrics import evaluate, evaluate_per_query, trec_order
from sciera.eval.metrics.evaluate import parse_metrics
from sciera.settings import Settings
from sciera.types import Passage, Ranking

Unit = Literal["document", "passage"]
UNITS: tuple[str, ...] = ("document", "passage")
Run = dict[str, dict[str, float]]
Qrels = Mapping[str, Mapping[str, int]]
Progress = Callable[[int, int], None]  # (queries done, total)

DEFAULT_METRICS: tuple[str, ...] = ("ndcg@10", "recall@100", "map@10", "mrr@10")
MIN_DEPTH = 100


@dataclass(frozen=True, slots=True)
class RetrievalEval:
    """Scores of one retriever on one query set, with the run that produced them."""

    retriever: str
    unit: str
    depth: int
    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]
    run: Mapping[str, Mapping[str, float]] = field(repr=False)
    search_seconds: float

    @property
    def queries(self) -> int:
        return len(self.per_query)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "retriever": self.retriever,
            "unit": self.unit,
            "depth": self.depth,
            "queries": self.queries,
            "search_seconds": round(self.search_seconds, 3),
            "metrics": dict(self.metrics),
        }
        if per_query:
            out["per_query"] = {q: dict(v) for q, v in self.per_query.items()}
        return out


def run_depth(metrics: Iterable[str]) -> int:
    """How deep to retrieve: the largest cutoff asked for, at least 100."""
    cutoffs = [s.k for s in parse_metrics(metrics, "query") if s.k is not None]
    return max([MIN_DEPTH, *cutoffs])


def rankings_to_run(
    qids: Sequence[str], rankings: Sequence[Ranking], unit: Unit, depth: int
) -> Run:
    """``{qid: {id: score}}`` from passage rankings; documents via Max-P, cut to ``depth``."""
    from sciera.retrieve.maxp import maxp

    run: Run = {}
    for qid, ranking in zip(qids, rankings, strict=True):
        if unit == "document":
            ranking = maxp(ranking, depth)
            run[qid] = {item.passage.doc_id: item.score for item in ranking}
        else:
            run[qid] = {item.passage_id: item.score for item in ranking.top(depth)}
    return run


def passage_qrels(qrels: Qrels, passages: Iterable[Passage]) -> dict[str, dict[str, int]]:
    """Judgments lifted to passages: each passage of a judged document gets its grade."""
    by_doc: dict[str, list[str]] = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append(p.passage_id)
    return {
        qid: {pid: grade for doc, grade in judged.items() for pid in by_doc.get(doc, ())}
        for qid, judged in qrels.items()
    }


def search_run(
    retriever: Any,
    queries: Mapping[str, str],
    depth: int,
    unit: Unit = "document",
    passage_depth: int | None = None,
    batch_size: int = 64,
    progress: Progress | None = None,
) -> tuple[Run, float]:
    """Run ``retriever.search_many`` over ``queries`` in batches; returns (run, seconds)."""
    if unit not in UNITS:
        raise ScieraError(f"unknown unit {unit!r}; choose one of {list(UNITS)}")
    k = (passage_depth or 10 * depth) if unit == "document" else depth
    qids = list(queries)
    run: Run = {}
    seconds = 0.0
    for start in range(0, len(qids), batch_size):
        batch = qids[start : start + batch_size]
        began = time.perf_counter()
        rankings = retriever.search_many([queries[q] for q in batch], k)
        seconds += time.perf_counter() - began
        run.update(rankings_to_run(batch, rankings, unit, depth))
        if progress is not None:
            progress(min(start + batch_size, len(qids)), len(qids))
    return run, seconds


def _queries_for(qrels: Qrels, queries: Mapping[str, str], source: str) -> dict[str, str]:
    missing = [q for q in qrels if q not in queries]
    if missing:
        raise ScieraError(
            f"{source}: {len(missing)} judged queries have no text, e.g. {missing[:5]}"
        )
    return {q: queries[q] for q in qrels}


def evaluate_retrieval(
    corpus_dir: str | Path,
    queries_path: str | Path,
    qrels_path: str | Path,
    retriever: str | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    unit: Unit = "document",
    depth: int | None = None,
    passage_depth: int | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    reranker: str | None = None,
    rerank_depth: int | None = None,
    reranker_options: Mapping[str, Any] | None = None,
) -> RetrievalEval:
    """Search every judged query with ``retriever`` over ``corpus_dir`` and score the run.

    With ``reranker`` (a name in :mod:`sciera.rerank.registry`, built with
    ``reranker_options``) the first ``rerank_depth`` candidates (default
    ``settings.rerank.depth``; documents by Max-P with ``unit="document"``) are reranked
    and the rest of the first-stage list follows them (:mod:`sciera.rerank.reranked`).

    ``queries_path`` is a BEIR folder or queries.jsonl; ``qrels_path`` a BEIR or
    TREC qrels file. ``retriever`` defaults to ``settings.retrieve.retriever``;
    ``depth`` defaults to :func:`run_depth` of ``metrics``.
    """
    from sciera.corpus import PassageStore, load_beir_queries, load_qrels
    from sciera.retrieve import open_retriever
    from sciera.settings import load_settings

    settings = settings or load_settings()
    name = retriever or settings.retrieve.retriever

    depth = depth or run_depth(metrics)
    parse_metrics(metrics, "query")  # fail on a bad spec before any search
    qrels: Qrels = load_qrels(qrels_path)
    queries = _queries_for(qrels, load_beir_queries(queries_path), str(queries_path))
    searcher = open_retriever(corpus_dir, name, settings)
    if reranker is not None:
        from sciera.rerank.registry import make_reranker
        from sciera.rerank.reranked import RerankedRetriever

        rr = make_reranker(reranker, settings, **dict(reranker_options or {}))
        depth_n = rerank_depth or settings.rerank.depth
        searcher = RerankedRetriever(searcher, rr, depth=depth_n, unit=unit)
        name = searcher.name
    run, seconds = search_run(searcher, queries, depth, unit, passage_depth, progress=progress)
    if unit == "passage":
        with PassageStore.open(corpus_dir) as store:
            qrels = passage_qrels(qrels, store.iter_passages())
    return RetrievalEval(
        retriever=name,
        unit=unit,
        depth=depth,
        metrics=evaluate(run, qrels, metrics),
        per_query=evaluate_per_query(run, qrels, metrics),
        run=run,
        search_seconds=seconds,
    )


def write_trec_run(path: str | Path, run: Mapping[str, Mapping[str, float]], tag: str) -> int:
    """Write ``qid Q0 id rank score tag`` lines in trec_eval order; returns lines written.

    Scores are written with full precision (``repr``) so trec_eval re-sorts them
    exactly as they were scored here.
    """
    if not tag or any(c.isspace() for c in tag):
        raise ScieraError(f"run tag must be one word, got {tag!r}")
    lines = 0
    with open(path, "w", encoding="utf-8") as fh:
        for qid, scores in run.items():
            for rank, doc in enumerate(trec_order(scores), start=1):
                fh.write(f"{qid} Q0 {doc} {rank} {scores[doc]!r} {tag}\n")
                lines += 1
    return lines


def read_trec_run(path: str | Path) -> Run:
    """``{qid: {id: score}}`` from a TREC run file; like trec_eval, ignores the rank column."""
    run: Run = {}
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            cols = line.split()
            if len(cols) != 6:
                raise InputError(path, line_no, "record", f"expected 6 columns, got {len(cols)}")
            qid, _, doc, _, score, _ = cols
            try:
                value = float(score)
            except ValueError:
                raise InputError(path, line_no, "score", f"not a number: {score!r}") from None
            if doc in run.setdefault(qid, {}):
                raise InputError(path, line_no, "docid", f"duplicate {doc!r} for query {qid!r}")
            run[qid][doc] = value
    return run
