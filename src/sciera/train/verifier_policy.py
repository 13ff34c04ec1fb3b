"""The verifier's decision policy, chosen on the dev claims: the claim-level refusal table
and ``strong``, which sentences are cited (``min_cited``) and quoted (``min_quoted``), and
the combined verdict's gate (its relevance weight and threshold). Pure choices over a
selector and a verdict model; :mod:`sciera.train.verifier_calibrate` runs them for the
trained verdict, :mod:`sciera.train.verifier_stages` for the combined one."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sciera.train.verifier_data import VerifierData
from sciera.train.verifier_data import folds as make_folds
from sciera.train.verifier_eval import SELECT, scifact_scores, verify_claims
from sciera.train.verifier_job import Progress
from sciera.types import NOT_ENOUGH_INFO, Verification
from sciera.verify.aggregate import aggregate
from sciera.verify.base import RationaleSelector, VerdictModel
from sciera.verify.verifier import VerifyPolicy

GRID = {
    "min_rationale": (0.3, 0.4, 0.5, 0.6, 0.7),
    "fallback": (0, 1, 2),
    "min_confidence": (0.0, 0.4, 0.5, 0.6, 0.7),
}
STRONG_GRID = tuple(round(0.3 + 0.05 * i, 2) for i in range(14))  # 0.3 .. 0.95
MIN_PRECISION = 0.70  # the bar for the decisions verify gives
# the combined verdict's gate: the evidence score's relevance weight and its threshold
WEIGHT_GRID = (0.25, 0.4, 0.5, 0.6, 0.75, 1.0)
GATE_GRID = tuple(round(0.3 + 0.05 * i, 2) for i in range(9))  # 0.3 .. 0.7
CITE_GRID: tuple[float | None, ...] = (None, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
# the citer's P(rationale) a sentence needs to be quoted; None: quote as min_cited cites
QUOTE_GRID: tuple[float | None, ...] = (None, 0.1, 0.2, 0.3, 0.4, 0.5)
Score = Callable[[VerifyPolicy, Sequence[str]], Mapping[str, float]]


def open_candidates(data: VerifierData, ids: Sequence[str], k: int) -> dict[str, list[str]]:
    """The open setting: the top ``k`` abstracts the pipeline reads (reranked) when known,
    else the first stage's."""
    if data.reranked:
        return {cid: [d for d, _ in data.reranked.get(cid, [])[:k]] for cid in ids}
    return {cid: data.retrieved.get(cid, [])[:k] for cid in ids}


def relevance(data: VerifierData) -> dict[str, dict[str, float]]:
    return {cid: dict(rows) for cid, rows in data.reranked.items()}


def union_candidates(data: VerifierData, ids: Sequence[str], k: int) -> dict[str, list[str]]:
    return {cid: data.candidates(cid, k) for cid in ids}


def claim_table(
    data: VerifierData, ids: Sequence[str], results: Mapping[str, Verification]
) -> list[dict[str, float]]:
    """For each ``strong`` of :data:`STRONG_GRID`: the share of answerable claims (with
    evidence) refused (NOT ENOUGH INFO) and the precision of the decisions given (SUPPORT,
    CONTRADICT or CONFLICTING matching the claim's gold label)."""
    rows = []
    for strong in STRONG_GRID:
        refused = answerable = decided = right = 0
        for cid in ids:
            gold = data.claims[cid].label
            gold = NOT_ENOUGH_INFO if gold == "NOT_ENOUGH_INFO" else gold
            v = results[cid]
            label = aggregate(v.claim, v.verdicts, strong).label
            if gold != NOT_ENOUGH_INFO:
                answerable += 1
                refused += label == NOT_ENOUGH_INFO
            if label != NOT_ENOUGH_INFO:
                decided += 1
                right += label == gold
        rows.append(
            {
                "strong": strong,
                "refusal_rate": refused / answerable if answerable else 0.0,
                "precision": right / decided if decided else 0.0,
                "decided": decided,
                "answerable": answerable,
            }
        )
    return rows


def choose_strong(rows: Sequence[Mapping[str, float]]) -> float:
    """The ``strong`` with the fewest refusals whose decisions keep precision >=
    :data:`MIN_PRECISION` (ties: the higher precision); else the most precise."""
    ok = [r for r in rows if r["precision"] >= MIN_PRECISION and r["decided"]]
    if ok:
        return float(min(ok, key=lambda r: (r["refusal_rate"], -r["precision"]))["strong"])
    return float(max(rows, key=lambda r: (r["precision"], -r["strong"]))["strong"])


def policy_runs(
    selector: RationaleSelector,
    verdict: VerdictModel,
    data: VerifierData,
    ids: Sequence[str],
    candidates: Mapping[str, Sequence[str]],
    relevance: Mapping[str, Mapping[str, float]],
    progress: Progress | None = None,
    step: str = "verifying the dev claims",
) -> Callable[[VerifyPolicy], dict[str, Verification]]:
    """The claims ``ids`` verified under a policy (open setting), each policy run once;
    ``progress(step, claims done, claims)`` while one runs (the first run of an LLM verdict
    pays its calls)."""
    runs: dict[VerifyPolicy, dict[str, Verification]] = {}
    report = (lambda k, n: progress(step, k, n)) if progress else None

    def run(p: VerifyPolicy) -> dict[str, Verification]:
        if p not in runs:
            runs[p] = verify_claims(
                selector,
                verdict,
                data,
                ids,
                policy=p,
                candidates=candidates,
                relevance=relevance,
                progress=report,
            )
        return runs[p]

    return run


def choose_cited(
    policy: VerifyPolicy,
    ids: Sequence[str],
    score: Callable[[VerifyPolicy, Sequence[str]], Mapping[str, float]],
) -> tuple[VerifyPolicy, list[dict[str, Any]]]:
    """``policy`` with the ``min_cited`` of :data:`CITE_GRID` that ``score`` rates best on
    ``ids`` by :data:`SELECT` (a tie keeps the earlier value, first of all citing what is
    read), and the trials."""
    return _choose(policy, "min_cited", CITE_GRID, ids, score)


def choose_quoted(
    policy: VerifyPolicy,
    ids: Sequence[str],
    score: Callable[[VerifyPolicy, Sequence[str]], Mapping[str, float]],
) -> tuple[VerifyPolicy, list[dict[str, Any]]]:
    """``policy`` with the citer's ``min_quoted`` of :data:`QUOTE_GRID` that ``score`` rates
    best on ``ids`` by :data:`SELECT` (a tie keeps the earlier value, first of all quoting
    as without the citer), and the trials. What the verdict reads does not change with it,
    so neither do the labels: only which sentences are quoted."""
    return _choose(policy, "min_quoted", QUOTE_GRID, ids, score)


def _choose(
    policy: VerifyPolicy,
    name: str,
    grid: Sequence[float | None],
    ids: Sequence[str],
    score: Callable[[VerifyPolicy, Sequence[str]], Mapping[str, float]],
) -> tuple[VerifyPolicy, list[dict[str, Any]]]:
    options = [replace(policy, **{name: value}) for value in grid]
    scores = [score(p, ids) for p in options]
    i = max(range(len(options)), key=lambda k: (scores[k][SELECT], -k))
    trials = [
        {name: getattr(p, name), **{k: round(v, 4) for k, v in m.items()}}
        for p, m in zip(options, scores, strict=True)
    ]
    return options[i], trials


@dataclass
class _GateSearch:
    """The combined verdict's gate search over the dev claims: each policy verified once
    (``run``), each (policy, claims) scored once."""

    data: VerifierData
    grid: list[VerifyPolicy]
    run: Callable[[VerifyPolicy], dict[str, Verification]]
    quote: bool
    scored: dict[tuple[VerifyPolicy, tuple[str, ...]], dict[str, float]] = field(
        default_factory=dict
    )

    def score(self, p: VerifyPolicy, ids: Sequence[str]) -> dict[str, float]:
        key = (p, tuple(ids))
        if key not in self.scored:
            self.scored[key] = scifact_scores(self.data, ids, self.run(p))
        return self.scored[key]

    def best(self, ids: Sequence[str]) -> VerifyPolicy:
        grid = self.grid
        return grid[max(range(len(grid)), key=lambda i: (self.score(grid[i], ids)[SELECT], -i))]

    def cite(self, p: VerifyPolicy, ids: Sequence[str]) -> tuple[VerifyPolicy, dict[str, Any]]:
        out, trials = choose_cited(p, ids, self.score)
        if not self.quote:
            return out, {"cite_trials": trials}
        out, quoted = choose_quoted(out, ids, self.score)
        return out, {"cite_trials": trials, "quote_trials": quoted}

    def cross_validate(self, dev: Sequence[str], folds: int, seed: int) -> dict[str, Any]:
        """Both choices made on the other folds, scored on each held fold, pooled."""
        pooled: dict[str, Verification] = {}
        picked = []
        for fold in make_folds(dev, folds, seed):
            rest = [c for c in dev if c not in set(fold)]
            g = self.best(rest)
            p, _ = self.cite(g, rest)
            picked.append(
                {
                    "relevance_weight": g.relevance_weight,
                    "gate": g.min_relevance,
                    "cited": p.min_cited,
                    **({"quoted": p.min_quoted} if self.quote else {}),
                }
            )
            pooled.update({c: self.run(p)[c] for c in fold})
        scores = scifact_scores(self.data, dev, pooled)
        return {"folds": folds, "picked": picked, **{k: round(v, 4) for k, v in scores.items()}}


def choose_combined_policy(
    selector: RationaleSelector,
    verdict: VerdictModel,
    data: VerifierData,
    policy: VerifyPolicy,
    open_k: int,
    folds: int = 5,
    seed: int = 0,
    quote: bool = False,
    progress: Progress | None = None,
) -> tuple[VerifyPolicy, dict[str, Any]]:
    """The gate of the combined verdict, chosen on the dev claims in the open setting: the
    evidence score's ``relevance_weight`` and its threshold ``min_relevance`` (grids
    :data:`WEIGHT_GRID` x :data:`GATE_GRID`, the selector's part of ``policy`` kept) by
    :data:`SELECT`, then, with that gate, which sentences are cited (``min_cited``,
    :data:`CITE_GRID`; the verdict reads the cited ones too), with ``quote`` (the selector
    has a citer) which sentences the citer quotes (``min_quoted``, :data:`QUOTE_GRID`), then
    ``strong``. The report holds the trials and an estimate of what the choice is worth on
    claims it did not see: ``folds``-fold cross-validation over the dev claims (both chosen
    on the other folds, scored on each held fold, pooled)."""
    dev = data.dev_ids
    rel, open_ = relevance(data), open_candidates(data, dev, open_k)
    grid = [
        replace(policy, relevance_weight=w, min_relevance=m, min_cited=None, min_quoted=None)
        for w in WEIGHT_GRID
        for m in GATE_GRID
    ]
    run = policy_runs(
        selector, verdict, data, dev, open_, rel, progress, "combined gate: dev claims verified"
    )
    search = _GateSearch(data, grid, run, quote)
    on_dev = [search.score(p, dev) for p in grid]
    cited, cite_trials = search.cite(search.best(dev), dev)
    table = claim_table(data, dev, run(cited))
    out = replace(cited, strong=choose_strong(table))
    cross_validated = search.cross_validate(dev, folds, seed)
    trials = [
        {
            "relevance_weight": p.relevance_weight,
            "min_relevance": p.min_relevance,
            **{k: round(v, 4) for k, v in m.items()},
        }
        for p, m in zip(grid, on_dev, strict=True)
    ]
    base = replace(policy, relevance_weight=1.0, min_cited=None, min_quoted=None)
    report = {
        "chosen_on": f"{len(dev)} dev claims, open setting (top {open_k})",
        "trials": sorted(trials, key=lambda t: -t[SELECT])[:10],
        **cite_trials,
        "strong_table": table,
        "card_gate": {k: round(v, 4) for k, v in search.score(base, dev).items()},
        "cross_validated": cross_validated,
    }
    return out, report
