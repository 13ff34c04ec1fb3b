"""Evaluate whole runs: per-query scores and their means, by metric spec.

Query-level conventions (trec_eval with ``-c``):

- The queries evaluated are the queries *in the judgments*. A query that is in
  the run but not in the judgments is ignored; a query in the judgments but not
  in the run (or with an empty list) is scored on an empty ranking, i.e. 0 for
  every ranking metric. A query whose judgments hold only grade-0 documents is
  kept and scores 0.
- A run is ``{qid: {doc_id: score}}`` (ordered as trec_eval orders it: score
  descending, ties by doc id descending) or ``{qid: [doc_id, ...]}`` already in
  rank order. Duplicate doc ids in a list are an error.
- The mean is over evaluated queries, except CDR which is pooled over
  (gold, distractor) pairs (see :mod:`.robustness`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from sciera.eval.metrics.bioasq import label_of
from sciera.eval.metrics.ranking import trec_order
from sciera.eval.metrics.registry import Kind, MetricSpec, QueryInput, parse_metric
from sciera.eval.metrics.scifact import scifact_counts
from sciera.eval.metrics.verdicts import Counts, pooled
from sciera.text import Tokenizer

Run = Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]]
Qrels = Mapping[str, Mapping[str, float]]

_EVALUATORS: dict[str, str] = {
    "query": "evaluate()",
    "answer": "evaluate_answers()",
    "evidence": "evaluate_evidence()",
    "label": "evaluate_labels()",
    "record": "evaluate_records()",
    "verification": "evaluate_verification()",
    "verdict": "evaluate_verdicts()",
}


def ranked_list(qid: str, docs: Mapping[str, float] | Sequence[str]) -> list[str]:
    """One query's ranking as a list of doc ids, best first."""
    if isinstance(docs, Mapping):
        return trec_order(docs)
    if isinstance(docs, str):
        raise TypeError(f"query {qid!r}: ranking must be a list of doc ids, not a string")
    ranked = list(docs)
    if len(set(ranked)) != len(ranked):
        dups = sorted(d for d, n in Counter(ranked).items() if n > 1)
        raise ValueError(f"query {qid!r}: doc ids appear more than once in the ranking: {dups}")
    return ranked


def parse_metrics(metrics: str | Iterable[str], kind: Kind) -> list[MetricSpec]:
    """Parse specs and check they belong to the evaluator of ``kind``."""
    specs = [parse_metric(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
    if not specs:
        raise ValueError("no metrics requested")
    for spec in specs:
        found = spec.definition.kind
        if found != kind:
            article = "an" if found[0] in "aeiou" else "a"
            raise ValueError(f"{spec.label} is {article} {found} metric; use {_EVALUATORS[found]}")
    return specs


def _query_scores(
    run: Run,
    qrels: Qrels,
    specs: list[MetricSpec],
    distractors: Mapping[str, Collection[str]] | None,
    n_candidates: int | Mapping[str, int] | None,
) -> Iterator[tuple[str, str, float, float]]:
    """Yield (qid, metric label, value, weight) for every query in the judgments."""
    if not qrels:
        raise ValueError("the judgments (qrels) hold no query")
    for qid, judged in qrels.items():
        n = n_candidates.get(qid) if isinstance(n_candidates, Mapping) else n_candidates
        q = QueryInput(
            ranked=ranked_list(qid, run.get(qid, ())),
            qrels=judged,
            distractors=frozenset(distractors.get(qid, ())) if distractors else frozenset(),
            n_candidates=n,
        )
        for spec in specs:
            weight = spec.definition.weight(q)
            if weight > 0:
                yield qid, spec.label, spec.definition.compute(q, spec.k), weight


def evaluate_per_query(
    run: Run,
    qrels: Qrels,
    metrics: str | Iterable[str],
    *,
    distractors: Mapping[str, Collection[str]] | None = None,
    n_candidates: int | Mapping[str, int] | None = None,
) -> dict[str, dict[str, float]]:
    """``{qid: {metric: value}}`` for every query in ``qrels``.

    ``distractors`` maps a query to its distractor passage ids (NRS, CDR);
    ``n_candidates`` is N for ``rp`` (one int, or per query). A query without
    any (gold, distractor) pair has no ``cdr`` entry.
    """
    specs = parse_metrics(metrics, "query")
    out: dict[str, dict[str, float]] = {qid: {} for qid in qrels}
    for qid, label, value, _ in _query_scores(run, qrels, specs, distractors, n_candidates):
        out[qid][label] = value
    return out


def evaluate(
    run: Run,
    qrels: Qrels,
    metrics: str | Iterable[str],
    *,
    distractors: Mapping[str, Collection[str]] | None = None,
    n_candidates: int | Mapping[str, int] | None = None,
) -> dict[str, float]:
    """``{metric: mean over the queries in qrels}``; see the module docstring."""
    specs = parse_metrics(metrics, "query")
    totals = {spec.label: 0.0 for spec in specs}
    weights = {spec.label: 0.0 for spec in specs}
    for _, label, value, weight in _query_scores(run, qrels, specs, distractors, n_candidates):
        totals[label] += weight * value
        weights[label] += weight
    for label, weight in weights.items():
        if weight == 0:
            raise ValueError(f"{label}: no query can be scored (no gold/distractor pair)")
    return {label: totals[label] / weights[label] for label in totals}


def _references(qid: str, refs: str | Sequence[str]) -> list[str]:
    out = [refs] if isinstance(refs, str) else list(refs)
    if not out:
        raise ValueError(f"query {qid!r}: no reference answer")
    return out


def evaluate_answers_per_query(
    predictions: Mapping[str, str | Sequence[str]],
    references: Mapping[str, str | Sequence[str]],
    metrics: str | Iterable[str],
) -> dict[str, dict[str, float]]:
    """Answer metrics per query in ``references``; with several references, the best one.

    A prediction is the answer text, or for the BioASQ specs an exact answer (a
    sequence of strings). A query without a prediction is scored as the empty answer.
    """
    specs = parse_metrics(metrics, "answer")
    out: dict[str, dict[str, float]] = {}
    for qid, refs in references.items():
        pred = predictions.get(qid, "")
        golds = _references(qid, refs)
        out[qid] = {s.label: max(s.definition.compute(pred, g) for g in golds) for s in specs}
    return out


def evaluate_answers(
    predictions: Mapping[str, str | Sequence[str]],
    references: Mapping[str, str | Sequence[str]],
    metrics: str | Iterable[str],
) -> dict[str, float]:
    """Mean of :func:`evaluate_answers_per_query` over the queries in ``references``."""
    return _mean(evaluate_answers_per_query(predictions, references, metrics))


def evaluate_evidence(
    passages: Mapping[str, Sequence[str]],
    evidence: Mapping[str, str],
    metrics: str | Iterable[str] = ("cr",),
    tokenizer: str | Tokenizer = "whitespace",
) -> dict[str, float]:
    """Mean per-query evidence metrics (CR) over the queries in ``passages``."""
    specs = parse_metrics(metrics, "evidence")
    per_query: dict[str, dict[str, float]] = {}
    for qid, texts in passages.items():
        if qid not in evidence:
            raise ValueError(f"query {qid!r}: no evidence given")
        per_query[qid] = {
            s.label: s.definition.compute(texts, evidence[qid], tokenizer) for s in specs
        }
    return _mean(per_query)


def evaluate_labels(
    gold: Mapping[str, str],
    predicted: Mapping[str, str | Sequence[str]],
    metrics: str | Iterable[str] = ("macro_f1",),
) -> dict[str, float]:
    """Corpus-level label metrics over the questions in ``gold``.

    A prediction is a label or an exact answer (read by
    :func:`~sciera.eval.metrics.bioasq.label_of`); a question without one is wrong.
    """
    specs = parse_metrics(metrics, "label")
    if not gold:
        raise ValueError("no question to evaluate")
    golds = list(gold.values())
    preds = [label_of(predicted.get(qid, "")) for qid in gold]
    return {s.label: s.definition.compute(golds, preds) for s in specs}


def evaluate_verification(
    gold: Iterable[Any],
    predictions: Iterable[Any],
    metrics: str | Iterable[str] = ("abstract_label_only_f1", "sentence_label_f1"),
) -> dict[str, float]:
    """SciFact's claim-verification metrics over all ``gold`` claims (SciFact claim records
    or :class:`~sciera.eval.metrics.scifact.GoldClaim`) given ``predictions`` (records in
    SciFact's prediction format or :class:`~sciera.eval.metrics.scifact.ClaimPrediction`);
    a claim without a prediction predicted nothing. See :mod:`.scifact`."""
    specs = parse_metrics(metrics, "verification")
    counts = scifact_counts(gold, predictions)
    every = counts.metrics()
    return {s.label: every[s.definition.pattern] for s in specs}


def _mean(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    if not per_query:
        raise ValueError("no query to evaluate")
    labels = next(iter(per_query.values())).keys()
    return {m: sum(s[m] for s in per_query.values()) / len(per_query) for m in labels}


def evaluate_records_per_query(
    records: Mapping[str, Mapping[str, Any]],
    metrics: str | Iterable[str],
    qrels: Qrels | None = None,
) -> dict[str, dict[str, float]]:
    """``{metric: {qid: value}}`` of ``record`` metrics over results records and the
    questions' judgments (a record a metric does not apply to is absent)."""
    specs = parse_metrics(metrics, "record")
    out: dict[str, dict[str, float]] = {s.label: {} for s in specs}
    for qid, rec in records.items():
        judged = (qrels or {}).get(qid, {})
        for s in specs:
            value = s.definition.compute(rec, judged)
            if value is not None:
                out[s.label][qid] = value
    return out


def evaluate_records(
    records: Mapping[str, Mapping[str, Any]],
    metrics: str | Iterable[str],
    qrels: Qrels | None = None,
) -> dict[str, float]:
    """``{metric: mean over the records it applies to}`` (metrics that apply to none are
    left out)."""
    per_q = evaluate_records_per_query(records, metrics, qrels)
    return {m: sum(v.values()) / len(v) for m, v in per_q.items() if v}


def evaluate_verdicts_per_query(
    records: Mapping[str, Mapping[str, Any]],
    metrics: str | Iterable[str],
    qrels: Qrels,
    distractors: Mapping[str, Collection[str]],
) -> dict[str, dict[str, Counts]]:
    """``{metric: {qid: (decided, passages)}}`` of ``verdict`` metrics over results records
    (a question a metric does not apply to is absent; see :mod:`.verdicts`)."""
    specs = parse_metrics(metrics, "verdict")
    out: dict[str, dict[str, Counts]] = {s.label: {} for s in specs}
    for qid, rec in records.items():
        judged, own = qrels.get(qid, {}), distractors.get(qid, ())
        for s in specs:
            counts = s.definition.compute(rec, judged, own)
            if counts is not None:
                out[s.label][qid] = counts
    return out


def evaluate_verdicts(
    records: Mapping[str, Mapping[str, Any]],
    metrics: str | Iterable[str],
    qrels: Qrels,
    distractors: Mapping[str, Collection[str]],
) -> dict[str, float]:
    """``{metric: decided / passages, pooled over the questions it applies to}`` (metrics
    that apply to none are left out)."""
    per_q = evaluate_verdicts_per_query(records, metrics, qrels, distractors)
    return {m: pooled(v.values()) for m, v in per_q.items() if v}
