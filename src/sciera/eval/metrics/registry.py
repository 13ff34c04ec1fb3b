"""The metric registry: string specs (``"ndcg@10"``, ``"rp"``, ``"f1"``) -> definitions.

A spec is ``name`` or ``name@K``. The registry is keyed by the spec *pattern*:
``"ndcg@k"`` for the cutoff form, ``"ndcg"`` for the form without one. So
``"precision@5"`` is ranking precision at 5 while ``"precision"`` is token
precision of an answer; ``"nrs"`` means ``"nrs@5"``; ``"rp@30"`` fixes N = 30
candidates while ``"rp"`` takes N from the caller.

Each definition has a *kind* that says which evaluator accepts it:
``query`` metrics score one ranked list against judgments
(:func:`sciera.eval.metrics.evaluate`), ``answer`` metrics score a predicted
answer against reference answers (``evaluate_answers``; the BioASQ
exact-answer specs take the shapes described in :mod:`.bioasq`), ``evidence``
metrics score extracted evidence against its source passages
(``evaluate_evidence``), ``label`` metrics score predicted labels against
gold labels over the whole corpus (``evaluate_labels``; ``macro_f1``), and ``record``
metrics read how a question was run from its results record (``evaluate_records``:
``evidence_recall`` over everything retrieved, ``search_calls`` and ``completion``),
``verification`` metrics score claim-verification predictions against gold SciFact claims
over all claims (``evaluate_verification``; SciFact's official four scores, :mod:`.scifact`),
and ``verdict`` metrics count a question's gold passages and distractors the verify stage
decided, pooled over passages (``evaluate_verdicts``; :mod:`.verdicts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sciera import text
from sciera.eval.metrics import bioasq, generation, ranking, robustness, scifact, verdicts

Kind = Literal["query", "answer", "evidence", "label", "record", "verification", "verdict"]


@dataclass(frozen=True, slots=True)
class QueryInput:
    """Everything a query-level metric may look at for one query."""

    ranked: Sequence[str]
    qrels: Mapping[str, float]
    distractors: frozenset[str] = frozenset()
    n_candidates: int | None = None

    @property
    def gold(self) -> list[str]:
        return [doc for doc, g in self.qrels.items() if g >= ranking.REL_THRESHOLD]


QueryFn = Callable[[QueryInput, int | None], float]


def _one(_: QueryInput) -> float:
    return 1.0


@dataclass(frozen=True, slots=True)
class MetricDef:
    """One registered metric.

    ``compute`` takes (QueryInput, k) for ``query`` metrics, (prediction,
    reference) for ``answer`` metrics, (passages, evidence) for ``evidence``
    metrics and (gold labels, predicted labels), aligned over all questions, for
    ``label`` metrics, (gold claims, predictions) for ``verification`` metrics (see
    :mod:`.scifact`), and (a results record, the question's judgments) for ``record``
    metrics, which return None for a record they do not apply to, and (a results record,
    the question's judgments, its distractors) for ``verdict`` metrics, which return
    (decided, passages) counts or None (see :mod:`.verdicts`). ``weight`` (query metrics) gives a
    query's weight in the mean; a query with weight 0 is left out (CDR weighs each query by its pair
    count). ``exact`` (answer metrics) means the metric scores the structured
    exact answer (``sciera.generate.base.exact_answer``), not the free text,
    when a run recorded one.
    """

    pattern: str
    kind: Kind
    compute: Callable[..., float]
    description: str
    default_k: int | None = None
    weight: Callable[[QueryInput], float] = field(default=_one)
    exact: bool = False
    lower_better: bool = False  # a table marks its lowest value best (distractor_decided)

    @property
    def mean_of_queries(self) -> bool:
        """Whether the run's value is the plain mean of per-query values (not CDR's
        pair-weighted pool), so a paired test over queries tests that very value."""
        if self.kind in ("answer", "record"):
            return True
        return self.kind == "query" and self.weight is _one


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A parsed spec: the definition plus the K (or N for ``rp@N``) it was given."""

    label: str
    definition: MetricDef
    k: int | None


def _rp(q: QueryInput, n: int | None) -> float:
    n_candidates = n if n is not None else q.n_candidates
    if n_candidates is None:
        raise ValueError("rp needs the number of reranker candidates: use rp@N or n_candidates=")
    return ranking.relative_position(q.ranked, q.qrels, n_candidates)


def _cdr(q: QueryInput, _: int | None) -> float:
    wins, pairs = robustness.discrimination_counts(q.ranked, q.gold, q.distractors)
    return wins / pairs if pairs else 0.0


def _cdr_pairs(q: QueryInput) -> float:
    return float(len(q.gold) * len(q.distractors))


def _ranking(fn: Callable[..., float]) -> QueryFn:
    def compute(q: QueryInput, k: int | None) -> float:
        return fn(q.ranked, q.qrels, k)

    return compute


def _nrs(q: QueryInput, k: int | None) -> float:
    return robustness.noise_robustness(q.ranked, q.distractors, k or 5)


def _evidence_recall(rec: Mapping[str, Any], qrels: Mapping[str, float]) -> float | None:
    """Share of the judged relevant items among everything retrieved: the first stage's
    list (before any reranker filters it), or everything an agent's searches returned."""
    if not any(g >= ranking.REL_THRESHOLD for g in qrels.values()):
        return None
    retrieved = [row[0] for row in rec.get("first", ())]
    return ranking.recall(retrieved, qrels, len(retrieved))


def _search_calls(rec: Mapping[str, Any], _: Mapping[str, float]) -> float:
    """An agent's searches; a single-shot pipeline makes one retrieval."""
    return float(rec["agent"]["search_calls"]) if "agent" in rec else 1.0


def _completion(rec: Mapping[str, Any], _: Mapping[str, float]) -> float | None:
    """1 when an answer ended the run (an agent stopped by a limit scores 0); None for a
    pipeline that does not answer."""
    if "agent" in rec:
        return float(rec["agent"]["stopped_by"] == "answer")
    return 1.0 if rec.get("answer") else None


def _exact(pattern: str, fn: Callable[..., float], description: str) -> MetricDef:
    return MetricDef(pattern, "answer", fn, description, exact=True)


_DEFS: list[MetricDef] = [
    MetricDef("ndcg@k", "query", _ranking(ranking.ndcg), "nDCG at K (trec_eval ndcg_cut)"),
    MetricDef("ndcg", "query", _ranking(ranking.ndcg), "nDCG, no cutoff (trec_eval ndcg)"),
    MetricDef("map@k", "query", _ranking(ranking.average_precision), "MAP at K (map_cut)"),
    MetricDef("map", "query", _ranking(ranking.average_precision), "MAP, no cutoff (map)"),
    MetricDef("mrr@k", "query", _ranking(ranking.reciprocal_rank), "reciprocal rank in top K"),
    MetricDef("mrr", "query", _ranking(ranking.reciprocal_rank), "reciprocal rank (recip_rank)"),
    MetricDef("recall@k", "query", _ranking(ranking.recall), "recall at K (recall_K)"),
    MetricDef("precision@k", "query", _ranking(ranking.precision), "precision at K (P_K)"),
    MetricDef("hit@k", "query", _ranking(ranking.hit_rate), "HitRate@K (SPEC)"),
    MetricDef("rp", "query", _rp, "Relative Position %, N from n_candidates= (SPEC)"),
    MetricDef("rp@k", "query", _rp, "Relative Position % with N = K candidates (SPEC)"),
    MetricDef("nrs", "query", _nrs, "Noise Robustness Score at 5 (SPEC)", default_k=5),
    MetricDef("nrs@k", "query", _nrs, "Noise Robustness Score at K (SPEC)"),
    MetricDef(
        "cdr", "query", _cdr, "Context Discrimination Rate, pooled over pairs", None, _cdr_pairs
    ),
    MetricDef("em", "answer", generation.exact_match, "exact match after SQuAD normalization"),
    MetricDef("f1", "answer", generation.token_f1, "token F1 (SQuAD)"),
    MetricDef("precision", "answer", generation.token_precision, "token precision (SQuAD)"),
    MetricDef("recall", "answer", generation.token_recall, "token recall (SQuAD)"),
    MetricDef("rouge_l", "answer", generation.rouge_l, "ROUGE-L F-measure"),
    MetricDef("rouge_su4", "answer", generation.rouge_su4, "ROUGE-SU4 F-measure"),
    _exact("yesno_accuracy", bioasq.yesno_accuracy, "BioASQ yes/no accuracy"),
    _exact("factoid_strict", bioasq.factoid_strict, "BioASQ factoid strict accuracy"),
    _exact("factoid_lenient", bioasq.factoid_lenient, "BioASQ factoid lenient accuracy"),
    _exact("factoid_mrr", bioasq.factoid_mrr, "BioASQ factoid MRR (top 5)"),
    _exact("list_precision", bioasq.list_precision, "BioASQ list precision"),
    _exact("list_recall", bioasq.list_recall, "BioASQ list recall"),
    _exact("list_f1", bioasq.list_f1, "BioASQ list F-measure"),
    MetricDef("macro_f1", "label", bioasq.yesno_macro_f1, "yes/no(/maybe) macro-F1 (corpus)"),
    MetricDef("cr", "evidence", text.compression_ratio, "compression ratio (EviOmni)"),
    MetricDef(
        "evidence_recall",
        "record",
        _evidence_recall,
        "recall of everything retrieved before reranking (an agent: over all its searches)",
    ),
    MetricDef("search_calls", "record", _search_calls, "retrieval calls per question"),
    MetricDef("completion", "record", _completion, "share of runs ended by an answer"),
    *(
        MetricDef(
            f"{level}_{stat}",
            "verification",
            scifact.level_metric(level, stat),
            f"SciFact {level.replace('_', ' ')} {stat} over all claims (Wadden et al. 2020)",
        )
        for level in scifact.LEVELS
        for stat in ("precision", "recall", "f1")
    ),
    MetricDef(
        "abstract_off_evidence",
        "verification",
        scifact.off_evidence_share,
        "share of the abstracts decided SUPPORT/CONTRADICT that are not evidence for the claim",
        lower_better=True,
    ),
    MetricDef(
        "claim_refused",
        "verification",
        scifact.claim_refused,
        "share of the answerable claims (gold evidence) whose overall verdict is NOT ENOUGH INFO",
        lower_better=True,
    ),
    MetricDef(
        "claim_precision",
        "verification",
        scifact.claim_precision,
        "share of the claims given an overall verdict whose verdict is the gold label",
    ),
    MetricDef(
        "distractor_decided",
        "verdict",
        verdicts.distractor_decided,
        "share of distractors the verify stage decided (SUPPORT/CONTRADICT), pooled",
        lower_better=True,
    ),
    MetricDef(
        "gold_decided",
        "verdict",
        verdicts.gold_decided,
        "share of gold documents the verify stage decided (SUPPORT/CONTRADICT), pooled",
    ),
]

METRICS: dict[str, MetricDef] = {d.pattern: d for d in _DEFS}
"""Spec pattern -> definition. ``@k`` in a pattern stands for any positive integer cutoff."""


def lower_better(label: str) -> bool:
    """Whether a table column named ``label`` is best at its lowest (False for a column
    that is no metric spec: a judge's, a cost)."""
    try:
        return parse_metric(label).definition.lower_better
    except ValueError:
        return False


def valid_specs() -> list[str]:
    return sorted(p.replace("@k", "@K") for p in METRICS)


def parse_metric(spec: str) -> MetricSpec:
    """Parse ``"name"`` or ``"name@K"`` (case-insensitive); unknown specs raise ValueError."""
    text = spec.strip().lower()
    name, sep, cutoff = text.partition("@")
    k: int | None = None
    if sep:
        if not cutoff.isdigit() or int(cutoff) < 1:
            raise ValueError(f"bad cutoff in metric {spec!r}: expected name@K with K >= 1")
        k = int(cutoff)
    definition = METRICS.get(f"{name}@k" if sep else name)
    if definition is None:
        raise ValueError(f"unknown metric {spec!r}; valid metrics: {', '.join(valid_specs())}")
    if k is None:
        k = definition.default_k
    return MetricSpec(label=text, definition=definition, k=k)
