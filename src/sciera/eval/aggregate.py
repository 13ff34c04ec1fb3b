"""Scores of a results directory: per repeat, then mean ± std over repeats.

For each pipeline, setting and *complete* repeat (every question logged), the final rankings are
scored with :class:`~sciera.eval.evaluators.RankingEvaluator` (query metrics by
:func:`sciera.eval.metrics.evaluate`, the evaluator training picks epochs with), SciFact claim
predictions with :class:`~sciera.eval.evaluators.ClaimEvaluator`, answers with
``evaluate_answers`` (the free text, or the recorded exact answer for the BioASQ specs; records
logged before exact answers were stored fall back to the text), predicted labels (the exact
answers) against the dataset's gold labels with ``evaluate_labels`` (``macro_f1``) and evidence
with ``evaluate_evidence``, record metrics (an agent's search calls, completion) with
``evaluate_records``, the verify stage's decisions on gold passages and distractors with
``evaluate_verdicts`` (pooled over passages); judges give their mean over judged answers plus a
``<judge>_failures`` count and the mean of each number in their details (``<judge>:<key>``, e.g.
``rubric_coverage:full``, ``rubric_coverage:words``); costs are means per question:
``s/q <stage>`` and ``tok/q`` (LLM prompt + completion tokens of the pipeline, judges excluded);
``s/q judge:<name>`` and ``tok/q judge:<name>``: each judge's.

On datasets with distractors (SSLI) tied scores are ordered by
:func:`~sciera.eval.metrics.ranking.neutral_order`, not trec_eval's doc-id order.

Across repeats a cell is the mean and the sample standard deviation (n - 1 in
the denominator; 0 for a single repeat).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sciera.eval.evaluators import ClaimEvaluator, RankingEvaluator
from sciera.eval.metrics import (
    evaluate_answers,
    evaluate_evidence,
    evaluate_labels,
    evaluate_records,
    evaluate_verdicts,
    parse_metric,
)
from sciera.eval.metrics.ranking import neutral_order
from sciera.eval.runstore import Results, final_run

COST_PREFIX = "s/q "
TOKENS = "tok/q"
JUDGE_STAGE = "judge:"
STAGE_ORDER = ("first_stage", "rerank", "evidence", "generate", "agent")


@dataclass(frozen=True, slots=True)
class Cell:
    mean: float
    std: float
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Row:
    pipeline: str
    setting: str
    queries: int
    repeats: int
    cells: Mapping[str, Cell] = field(default_factory=dict)


def mean_std(values: Sequence[float]) -> Cell:
    """Mean and sample standard deviation (0.0 for one value)."""
    if not values:
        raise ValueError("no values")
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return Cell(mean, std, tuple(values))


def settings_of(results: Results) -> list[str]:
    found = sorted(set(results.dataset.get("settings", {}).values()))
    return found or ["all"]


def qids_of(results: Results, setting: str) -> list[str]:
    by_q = results.dataset.get("settings", {})
    return [q for q in results.dataset["queries"] if setting == "all" or by_q.get(q) == setting]


def complete_repeats(results: Results, pipeline: str) -> list[int]:
    wanted = set(results.dataset["queries"])
    return [r for r, recs in sorted(results.records[pipeline].items()) if wanted <= set(recs)]


@dataclass(frozen=True, slots=True)
class RankingInputs:
    """What query metrics score for one repeat: the final run and its judgments."""

    run: Mapping[str, Any]
    qrels: Mapping[str, Mapping[str, float]]
    distractors: Mapping[str, Sequence[str]]
    n_candidates: Mapping[str, int]


def ranking_inputs(
    results: Results, recs: Mapping[str, Mapping[str, Any]], qids: Sequence[str]
) -> RankingInputs:
    ds = results.dataset
    distractors = {q: ds.get("distractors", {}).get(q, []) for q in qids}
    scored = final_run(recs)
    # pools with distractors: ties in neutral order (trec_eval's id order favours `ssli:` ids)
    run: Mapping[str, Any] = (
        {q: neutral_order(q, docs) for q, docs in scored.items()}
        if any(distractors.values())
        else scored
    )
    return RankingInputs(
        run,
        {q: ds["qrels"][q] for q in qids if q in ds["qrels"]},
        distractors,
        {q: int(r.get("rerank_input", len(r["first"]))) for q, r in recs.items()},
    )


def answer_references(results: Results, qids: Sequence[str]) -> dict[str, Any]:
    answers = results.dataset.get("answers", {})
    return {q: answers[q] for q in qids if answers.get(q)}


def answer_predictions(recs: Mapping[str, Mapping[str, Any]], exact: bool) -> dict[str, Any]:
    """The logged answers: the exact answers (for BioASQ specs and labels; the text in
    records logged before exact answers were stored), else the free text."""
    answers = {q: r["answer"] for q, r in recs.items() if r.get("answer")}
    if exact:
        return {q: a.get("exact", a["text"]) for q, a in answers.items()}
    return {q: a["text"] for q, a in answers.items()}


def repeat_scores(
    results: Results, records: Mapping[str, Mapping[str, Any]], qids: Sequence[str]
) -> dict[str, float]:
    """Every column for one repeat over ``qids`` (columns that cannot be scored are left out)."""
    ds = results.dataset
    recs = {q: records[q] for q in qids}
    specs = [parse_metric(m) for m in results.metrics]
    out: dict[str, float] = {}
    rank = ranking_inputs(results, recs, qids)
    query_specs = tuple(s.label for s in specs if s.definition.kind == "query")
    if query_specs and rank.qrels:
        ranking = RankingEvaluator(
            rank.qrels,
            query_specs,
            query_specs[0],
            rank.distractors,
            rank.n_candidates,
            skip_unscorable=True,  # e.g. cdr without any (gold, distractor) pair
        )
        out.update(ranking.score(rank.run))
    texts, exacts = answer_predictions(recs, exact=False), answer_predictions(recs, exact=True)
    refs = answer_references(results, qids)
    for s in specs:
        if s.definition.kind == "answer" and exacts and refs:
            preds = exacts if s.definition.exact else texts
            out.update(evaluate_answers(preds, refs, [s.label]))
    label_specs = [s.label for s in specs if s.definition.kind == "label"]
    gold = {q: ds["labels"][q] for q in qids if q in ds.get("labels", {})}
    if label_specs and exacts and gold:
        out.update(evaluate_labels(gold, exacts, label_specs))
    evidence_specs = [s.label for s in specs if s.definition.kind == "evidence"]
    with_ev = {q: r for q, r in recs.items() if "evidence_text" in r}
    if evidence_specs and with_ev:
        out.update(
            evaluate_evidence(
                {q: r["evidence_sources"] for q, r in with_ev.items()},
                {q: r["evidence_text"] for q, r in with_ev.items()},
                evidence_specs,
            )
        )
    verify_specs = [s.label for s in specs if s.definition.kind == "verification"]
    claims = ds.get("claims", {})
    if verify_specs and claims:
        gold = [claims[q] for q in qids if q in claims]
        preds = [
            {**r["verification"], **({"label": r["verify"]["label"]} if "verify" in r else {})}
            for q, r in recs.items()
            if q in claims and "verification" in r
        ]
        out.update(ClaimEvaluator(gold, tuple(verify_specs)).score(preds))
    record_specs = [s.label for s in specs if s.definition.kind == "record"]
    if record_specs:
        out.update(evaluate_records(recs, record_specs, ds["qrels"]))
    verdict_specs = [s.label for s in specs if s.definition.kind == "verdict"]
    if verdict_specs:
        out.update(evaluate_verdicts(recs, verdict_specs, ds["qrels"], rank.distractors))
    out.update(_judge_columns(recs))
    out.update(_cost_columns(recs))
    return out


def _judge_columns(recs: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    from sciera.eval.judges import JudgeScore, summarize_scores

    by_judge: dict[str, list[JudgeScore]] = {}
    for r in recs.values():
        for name, score in r.get("judges", {}).items():
            by_judge.setdefault(name, []).append(JudgeScore.from_dict(score))
    out: dict[str, float] = {}
    for name, scores in by_judge.items():
        summary = summarize_scores(scores)
        if summary["judged"]:
            out[name] = summary["mean"]
        out[f"{name}_failures"] = summary["failures"]
        details: dict[str, list[float]] = {}
        for s in scores:
            if not s.failed:
                for key, value in s.details.items():
                    details.setdefault(key, []).append(value)
        out.update({f"{name}:{k}": sum(v) / len(v) for k, v in sorted(details.items())})
    return out


def _cost_columns(recs: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """Seconds per stage; the pipeline's LLM tokens in ``tok/q``, each judge's apart in
    ``tok/q judge:<name>`` (a judge is what the evaluation costs, not the pipeline)."""
    n = len(recs)
    seconds: dict[str, float] = {}
    tokens: dict[str, float] = {}
    for r in recs.values():
        for stage, row in r.get("cost", {}).items():
            seconds[stage] = seconds.get(stage, 0.0) + row.get("seconds", 0.0)
            if "prompt_tokens" in row:
                column = f"{TOKENS} {stage}" if stage.startswith(JUDGE_STAGE) else TOKENS
                used = row["prompt_tokens"] + row.get("completion_tokens", 0)
                tokens[column] = tokens.get(column, 0.0) + used
    ordered = sorted(seconds, key=lambda s: (*STAGE_ORDER, s).index(s))
    out = {f"{COST_PREFIX}{s}": seconds[s] / n for s in ordered}
    out.update({column: total / n for column, total in sorted(tokens.items())})
    return out


def aggregate(results: Results) -> list[Row]:
    """One row per (pipeline, setting) over the pipeline's complete repeats."""
    rows: list[Row] = []
    for setting in settings_of(results):
        qids = qids_of(results, setting)
        for pipeline in results.pipelines:
            repeats = complete_repeats(results, pipeline)
            per_repeat = [
                repeat_scores(results, results.records[pipeline][r], qids) for r in repeats
            ]
            columns = list(dict.fromkeys(c for scores in per_repeat for c in scores))
            cells = {
                c: mean_std([s[c] for s in per_repeat if c in s])
                for c in columns
                if all(c in s for s in per_repeat)
            }
            rows.append(Row(pipeline, setting, len(qids), len(repeats), cells))
    return rows


def is_cost(column: str) -> bool:
    return column.startswith((COST_PREFIX, TOKENS)) or column.endswith("_failures")
