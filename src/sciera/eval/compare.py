"""Every pipeline against a baseline on the same questions, with paired p-values.

    from sciera.eval.compare import compare_pipelines
    for c in compare_pipelines(load_results("results/scifact"), baseline="bm25"):
        print(c.pipeline, c.metric, c.diff, c.test.p_value)

For each setting and each metric whose table value is a mean over questions (ranking
metrics except the pair-pooled CDR, answer metrics, record metrics such as an agent's
search calls, and every judge's score such as ``rubric_coverage``), a question's score is its
mean over the pipeline's complete repeats; the pipeline and the baseline are then
compared on the questions both scored: the exact McNemar test when every score is
0 or 1 (hit@1 with one repeat, yes/no accuracy), else the paired randomization test
(:mod:`sciera.eval.significance`). SciFact's F1s (``abstract_label_only_f1`` ...) are
over all claims, not means: each claim's counts, summed over the complete repeats, are
swapped between the two pipelines (``f1_randomization``). The verify stage's decided
shares of distractors and gold passages (``distractor_decided``, ``gold_decided``) are pooled
over passages: each question's decided count is paired (McNemar when every count is 0 or 1,
else the randomization test, which on counts tests the pooled difference). The baseline is
the experiment's first pipeline unless named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sciera.errors import ScieraError
from sciera.eval.aggregate import (
    answer_predictions,
    answer_references,
    complete_repeats,
    qids_of,
    ranking_inputs,
    settings_of,
)
from sciera.eval.metrics import (
    evaluate_answers_per_query,
    evaluate_per_query,
    evaluate_records_per_query,
    evaluate_verdicts_per_query,
    parse_metric,
)
from sciera.eval.metrics.registry import MetricSpec
from sciera.eval.runstore import Results
from sciera.eval.significance import (
    PairedTest,
    f1_randomization,
    mcnemar_exact,
    paired_randomization,
)


@dataclass(frozen=True, slots=True)
class Comparison:
    """``pipeline`` minus ``baseline`` on ``metric`` over the same questions."""

    setting: str
    pipeline: str
    baseline: str
    metric: str
    baseline_mean: float
    mean: float
    test: PairedTest

    @property
    def diff(self) -> float:
        return self.mean - self.baseline_mean

    def as_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "pipeline": self.pipeline,
            "baseline": self.baseline,
            "metric": self.metric,
            "baseline_mean": self.baseline_mean,
            "mean": self.mean,
            "diff": self.diff,
            **{
                f"test_{k}" if k in ("n", "exact") else k: v
                for k, v in self.test.as_dict().items()
                if k != "mean_diff"
            },
        }


def per_query_scores(
    results: Results,
    recs: Mapping[str, Mapping[str, Any]],
    qids: Sequence[str],
    specs: Sequence[MetricSpec],
) -> dict[str, dict[str, float]]:
    """``{metric: {qid: value}}`` for one repeat; a question a metric cannot score
    (no judgments, no reference answer) is absent."""
    out: dict[str, dict[str, float]] = {s.label: {} for s in specs}
    rank = ranking_inputs(results, recs, qids)
    query = [s.label for s in specs if s.definition.kind == "query"]
    if query and rank.qrels:
        per_q = evaluate_per_query(
            rank.run,
            rank.qrels,
            query,
            distractors=rank.distractors,
            n_candidates=rank.n_candidates,
        )
        for qid, values in per_q.items():
            for label, value in values.items():
                out[label][qid] = value
    refs = answer_references(results, qids)
    for s in specs:
        if s.definition.kind == "answer" and refs:
            per_a = evaluate_answers_per_query(
                answer_predictions(recs, s.definition.exact), refs, [s.label]
            )
            out[s.label] = {q: v[s.label] for q, v in per_a.items()}
    record = [s.label for s in specs if s.definition.kind == "record"]
    if record:
        out.update(evaluate_records_per_query(recs, record, results.dataset["qrels"]))
    out.update(judge_scores(recs))
    return out


def judge_scores(recs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{judge: {qid: score}}`` of every judge's successful judgments (a failed one is
    absent, so the question drops out of that judge's paired test)."""
    out: dict[str, dict[str, float]] = {}
    for qid, rec in recs.items():
        for name, score in rec.get("judges", {}).items():
            if not score.get("failed") and score.get("score") is not None:
                out.setdefault(name, {})[qid] = float(score["score"])
    return out


def _mean_over_repeats(
    results: Results, pipeline: str, qids: Sequence[str], specs: Sequence[MetricSpec]
) -> dict[str, dict[str, float]]:
    repeats = complete_repeats(results, pipeline)
    runs = [per_query_scores(results, results.records[pipeline][r], qids, specs) for r in repeats]
    out: dict[str, dict[str, float]] = {}
    labels = dict.fromkeys([s.label for s in specs] + [k for run in runs for k in run])
    for label in labels:
        common = set.intersection(*(set(run.get(label, {})) for run in runs)) if runs else set()
        out[label] = {
            q: sum(run[label][q] for run in runs) / len(runs) for q in qids if q in common
        }
    return out


def paired_test(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """McNemar for 0/1 scores, the randomization test otherwise."""
    if all(v in (0.0, 1.0) for v in (*a, *b)):
        return mcnemar_exact(a, b)
    return paired_randomization(a, b)


def compare_pipelines(results: Results, baseline: str | None = None) -> list[Comparison]:
    """Each pipeline with complete repeats against ``baseline`` (default: the first)."""
    pipelines = results.pipelines
    base = baseline or pipelines[0]
    if base not in pipelines:
        raise ScieraError(
            f"{results.root}: baseline {base!r} is not a pipeline of this experiment "
            f"(pipelines: {', '.join(pipelines)})"
        )
    every = [parse_metric(m) for m in results.metrics]
    specs = [s for s in every if s.definition.mean_of_queries]
    f1s = [s for s in every if s.definition.kind == "verification" and s.label.endswith("_f1")]
    verdicts = [s for s in every if s.definition.kind == "verdict"]
    others = [p for p in pipelines if p != base and complete_repeats(results, p)]
    if not others or not complete_repeats(results, base):
        return []
    out: list[Comparison] = []
    for setting in settings_of(results):
        qids = qids_of(results, setting)
        ref = _mean_over_repeats(results, base, qids, specs)
        for pipeline in others:
            scores = _mean_over_repeats(results, pipeline, qids, specs)
            for label in ref:
                common = [q for q in qids if q in ref[label] and q in scores.get(label, {})]
                if not common:
                    continue
                a = [ref[label][q] for q in common]
                b = [scores[label][q] for q in common]
                test = paired_test(a, b)
                out.append(
                    Comparison(
                        setting, pipeline, base, label, sum(a) / len(a), sum(b) / len(b), test
                    )
                )
            if f1s:
                out.extend(_f1_comparisons(results, setting, base, pipeline, qids, f1s))
            if verdicts:
                out.extend(_verdict_comparisons(results, setting, base, pipeline, qids, verdicts))
    return out


def _claim_counts(results: Results, pipeline: str, qids: Sequence[str]) -> dict[str, Any]:
    """Each gold claim's SciFact counts, summed over the pipeline's complete repeats."""
    from sciera.eval.metrics.scifact import per_claim_counts

    claims = results.dataset.get("claims", {})
    gold = [claims[q] for q in qids if q in claims]
    total: dict[str, Any] = {}
    for r in complete_repeats(results, pipeline):
        recs = results.records[pipeline][r]
        preds = [recs[q]["verification"] for q in qids if "verification" in recs.get(q, {})]
        for q, counts in per_claim_counts(gold, preds).items():
            total[q] = total[q] + counts if q in total else counts
    return total


def _f1_comparisons(
    results: Results,
    setting: str,
    base: str,
    pipeline: str,
    qids: Sequence[str],
    specs: Sequence[MetricSpec],
) -> list[Comparison]:
    """SciFact F1s of ``pipeline`` against ``base``: the claims' counts swapped."""
    ref, other = _claim_counts(results, base, qids), _claim_counts(results, pipeline, qids)
    common = [q for q in qids if q in ref and q in other]
    if not common:
        return []
    out = []
    for s in specs:
        level = s.definition.pattern.removesuffix("_f1")
        a = [ref[q].score(level) for q in common]
        b = [other[q].score(level) for q in common]
        test = f1_randomization(
            [(x.correct, x.predicted, x.gold) for x in a],
            [(x.correct, x.predicted, x.gold) for x in b],
        )
        f1_a = _pooled_f1(a)
        out.append(Comparison(setting, pipeline, base, s.label, f1_a, f1_a + test.mean_diff, test))
    return out


def _verdict_counts(
    results: Results, pipeline: str, qids: Sequence[str], label: str
) -> dict[str, tuple[float, int]]:
    """Each question's (passages decided, averaged over the pipeline's complete repeats,
    passages) of a verdict metric."""
    ds = results.dataset
    distractors = {q: ds.get("distractors", {}).get(q, []) for q in qids}
    repeats = complete_repeats(results, pipeline)
    runs = [
        evaluate_verdicts_per_query(
            {q: results.records[pipeline][r][q] for q in qids}, [label], ds["qrels"], distractors
        )[label]
        for r in repeats
    ]
    common = set.intersection(*(set(run) for run in runs)) if runs else set()
    return {
        q: (sum(run[q][0] for run in runs) / len(runs), runs[0][q][1]) for q in qids if q in common
    }


def _verdict_comparisons(
    results: Results,
    setting: str,
    base: str,
    pipeline: str,
    qids: Sequence[str],
    specs: Sequence[MetricSpec],
) -> list[Comparison]:
    """Verdict metrics (pooled over passages) of ``pipeline`` against ``base``: each
    question's decided count paired (McNemar when every count is 0 or 1, e.g. one
    distractor per question and one repeat; else the randomization test, which on counts
    tests the pooled share's difference)."""
    out = []
    for s in specs:
        ref = _verdict_counts(results, base, qids, s.label)
        other = _verdict_counts(results, pipeline, qids, s.label)
        common = [q for q in qids if q in ref and q in other]
        passages = sum(ref[q][1] for q in common)
        if not passages:
            continue
        a, b = [ref[q][0] for q in common], [other[q][0] for q in common]
        test = paired_test(a, b)
        mean_a, mean_b = sum(a) / passages, sum(b) / passages
        out.append(Comparison(setting, pipeline, base, s.label, mean_a, mean_b, test))
    return out


def _pooled_f1(scores: Sequence[Any]) -> float:
    correct = sum(x.correct for x in scores)
    total = sum(x.predicted + x.gold for x in scores)
    return 2 * correct / total if total else 0.0


def markdown_comparisons(comparisons: Sequence[Comparison]) -> str:
    """A table of differences and two-sided p-values (``*`` marks p < 0.05)."""
    if not comparisons:
        return ""
    base = comparisons[0].baseline
    lines = [
        f"### Against {base}, question by question (paired, two-sided)\n",
        "| pipeline | setting | metric | questions | baseline | pipeline | diff | p | test |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in comparisons:
        star = "*" if c.test.p_value < 0.05 else ""
        lines.append(
            f"| {c.pipeline} | {c.setting} | {c.metric} | {c.test.n} | {c.baseline_mean:.4f} "
            f"| {c.mean:.4f} | {c.diff:+.4f} | {c.test.p_value:.3g}{star} | {c.test.test} |"
        )
    lines.append(
        f"\n`*`: p < 0.05, uncorrected for the {len(comparisons)} comparisons in this table "
        f"(Bonferroni: p < {0.05 / len(comparisons):.2g}). Scores are per-question means "
        "over complete repeats; SciFact's F1s are over all claims (their counts swapped); "
        "the verify stage's decided shares are pooled over passages (their counts paired)."
    )
    return "\n".join(lines) + "\n"
