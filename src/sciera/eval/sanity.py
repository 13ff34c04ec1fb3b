"""``sciera eval judge-sanity``: how often the judges get controlled cases right.

For every question with a reference long answer (PubMedQA's LONG_ANSWER), the reference
is set against each of its corruptions (:mod:`sciera.eval.corruptions`). A judge is right
when the reference beats a harmful corruption (a finding dropped, negated, or replaced by
an unrelated cited claim) and does not lose to the padded copy:

- the pairwise judge: the battle (both orders) is won by the reference; for ``padded``, a
  tie also counts as right. Its position bias over these battles is reported too;
- the rubric coverage judge (with ``rubrics``): the reference's coverage is higher than the
  corruption's; for ``padded``, the copy's coverage is at most :data:`PADDED_TOLERANCE`
  above the reference's.

Every judgment is appended to ``OUT/judgments.jsonl`` as soon as it is made (the runner's
fsync'd :class:`~sciera.eval.resultlog.QueryLog`, keyed by a digest of the judge, the
question and the texts), so a stopped run resumes.
``OUT/pairs.jsonl`` holds the cases; ``OUT/sanity.json`` and ``sanity.md`` the accuracies.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError
from sciera.eval.corruptions import HARMFUL, KINDS, corrupt, key_sentence, sentences
from sciera.eval.resultlog import QueryLog
from sciera.progress import Deadline

PADDED_TOLERANCE = 0.05
JUDGMENTS_FILE = "judgments.jsonl"


def long_reference(data: Any, qid: str) -> str:
    """The question's long reference answer ("" when it has only a label such as yes/no)."""
    refs = [a for a in data.answers.get(qid, ()) if len(a.split()) > 3]
    return refs[0] if refs else ""


def sanity_pairs(data: Any) -> list[dict[str, str]]:
    """Every (question, corruption) case; the unrelated finding comes from the next
    question with a reference (in id order, wrapping around)."""
    from sciera.eval.rubrics import grounding

    qids = [q for q in data.queries if long_reference(data, q)]
    findings = {}
    for q in qids:
        parts = sentences(long_reference(data, q))
        findings[q] = parts[key_sentence(parts, grounding(data, q))] if parts else ""
    out = []
    for i, q in enumerate(qids):
        ref, ground = long_reference(data, q), grounding(data, q)
        other = findings[qids[(i + 1) % len(qids)]] if len(qids) > 1 else ""
        for kind in KINDS:
            text = corrupt(kind, ref, ground, other)
            if text is not None and text != ref:
                out.append(
                    {
                        "qid": q,
                        "question": data.queries[q],
                        "kind": kind,
                        "reference": ref,
                        "corrupted": text,
                    }
                )
    return out


def _key(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


def _get_or_make(log: QueryLog, key: str, make: Any, meta: Mapping[str, str]) -> dict:
    """The logged line under ``key``, else ``make()`` logged at once with its seconds."""
    if key not in log:
        start = time.perf_counter()
        result = make()
        log.append({"key": key, **meta, "result": result, "seconds": time.perf_counter() - start})
    return log.records[key]


def _cost(line: Mapping[str, Any], tokens: float) -> tuple[str, float, float] | None:
    """(key, seconds, prompt tokens) of one judgment; None for a line logged without
    seconds."""
    return (line["key"], line["seconds"], tokens) if "seconds" in line else None


def _cost_summary(costs: Sequence[tuple[str, float, float] | None]) -> dict[str, float]:
    """Means per judgment; a judgment several cases share (a reference's coverage) once."""
    from sciera.eval.judges.base import mean_cost

    once = {c[0]: (c[1], c[2]) for c in costs if c is not None}
    return mean_cost(once.values(), "judgment")


def run_sanity(
    data: Any,
    out: Path,
    *,
    pairwise: Any = None,
    coverage: Any = None,
    limit_minutes: float | None = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Judge every case with the given judges (each optional) and write the summary."""
    if pairwise is None and coverage is None:
        raise ScieraError("judge-sanity needs a judge: the pairwise judge, rubrics, or both")
    pairs = sanity_pairs(data)
    if not pairs:
        raise ScieraError("no question has a long reference answer to corrupt")
    out.mkdir(parents=True, exist_ok=True)
    (out / "pairs.jsonl").write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs), encoding="utf-8"
    )
    deadline = Deadline(limit_minutes)
    rows = []
    with QueryLog.open(out / JUDGMENTS_FILE, key="key") as log:
        for n, p in enumerate(pairs, start=1):
            if deadline.passed():
                break
            rows.append(_judge_case(p, log, pairwise, coverage))
            if progress is not None:
                progress(n, len(pairs))
    summary = summarize(rows, pairwise, coverage, len(pairs))
    (out / "sanity.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    (out / "sanity.md").write_text(markdown(summary), encoding="utf-8")
    return summary


def _judge_case(p: Mapping[str, str], log: QueryLog, pairwise: Any, coverage: Any) -> dict:
    from sciera.eval.judges.pairwise import Battle

    row: dict[str, Any] = {"qid": p["qid"], "kind": p["kind"]}
    meta = {"qid": p["qid"], "kind": p["kind"]}
    if pairwise is not None:
        key = _key(
            "pairwise",
            pairwise.prompt_version,
            pairwise.llm.model_id,
            str(pairwise.max_words),
            p["question"],
            p["reference"],
            p["corrupted"],
        )
        line = _get_or_make(
            log,
            key,
            lambda: pairwise.battle(p["question"], p["reference"], p["corrupted"]).to_dict(),
            {**meta, "judge": "pairwise"},
        )
        row["battle"] = Battle.from_dict(line["result"])
        row["pairwise_cost"] = _cost(line, row["battle"].prompt_tokens)
    if coverage is not None:
        scores, costs = [], []
        for which in ("reference", "corrupted"):
            text = p[which]
            key = _key(
                "coverage",
                coverage.prompt_version,
                coverage.llm.model_id,
                str(coverage.max_words),
                p["question"],
                text,
            )
            line = _get_or_make(
                log,
                key,
                lambda text=text: coverage.judge(p["question"], "", text).to_dict(),
                {**meta, "judge": "rubric_coverage", "text": which},
            )
            scores.append(line["result"])
            costs.append(_cost(line, line["result"].get("prompt_tokens") or 0))
        row["coverage"], row["coverage_cost"] = scores, costs
    return row


def pairwise_right(kind: str, outcome: str) -> bool:
    return outcome == "x" if kind in HARMFUL else outcome in ("x", "tie")


def coverage_right(kind: str, ref: float, bad: float) -> bool:
    return ref > bad if kind in HARMFUL else bad <= ref + PADDED_TOLERANCE


def summarize(
    rows: Sequence[Mapping[str, Any]], pairwise: Any, coverage: Any, cases: int
) -> dict[str, Any]:
    from sciera.eval.judges.pairwise import position_bias

    out: dict[str, Any] = {
        "cases": cases,
        "judged_cases": len(rows),
        "complete": len(rows) == cases,
        "questions": len({r["qid"] for r in rows}),
    }
    if pairwise is not None:
        battles = [r["battle"] for r in rows]
        out["pairwise"] = {
            "model_id": pairwise.llm.model_id,
            "prompt_version": pairwise.prompt_version,
            **_accuracy(
                [(r["kind"], r["battle"].outcome) for r in rows if r["battle"].score_x is not None],
                lambda kind, outcome: pairwise_right(kind, outcome),
                failed=sum(1 for b in battles if b.score_x is None),
                ties=lambda kind, outcome: outcome == "tie",
            ),
            "position_bias": position_bias(b for b in battles if b.score_x is not None),
            "cost": _cost_summary([r["pairwise_cost"] for r in rows]),
        }
    if coverage is not None:
        judged = [
            (r["kind"], (r["coverage"][0]["score"], r["coverage"][1]["score"]))
            for r in rows
            if not r["coverage"][0]["failed"] and not r["coverage"][1]["failed"]
        ]
        out["rubric_coverage"] = {
            "model_id": coverage.llm.model_id,
            "prompt_version": coverage.prompt_version,
            **_accuracy(
                judged,
                lambda kind, s: coverage_right(kind, s[0], s[1]),
                failed=len(rows) - len(judged),
            ),
            "cost": _cost_summary([c for r in rows for c in r["coverage_cost"]]),
        }
    return out


def _accuracy(cases: Sequence[tuple[str, Any]], right: Any, failed: int, ties: Any = None) -> dict:
    by_kind: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        mine = [v for k, v in cases if k == kind]
        if not mine:
            continue
        row = {"n": float(len(mine)), "accuracy": sum(right(kind, v) for v in mine) / len(mine)}
        if ties is not None:
            row["ties"] = sum(ties(kind, v) for v in mine) / len(mine)
        by_kind[kind] = row
    harmful = [(k, v) for k, v in cases if k in HARMFUL]
    return {
        "failed": failed,
        "by_kind": by_kind,
        "harmful_accuracy": (
            sum(right(k, v) for k, v in harmful) / len(harmful) if harmful else 0.0
        ),
        "harmful_n": len(harmful),
    }


def markdown(summary: Mapping[str, Any]) -> str:
    lines = [
        f"# Judge sanity ({summary['questions']} questions, {summary['judged_cases']} of "
        f"{summary['cases']} cases)\n",
        "A judge is right when the reference beats a harmful corruption and does not lose "
        "to the padded copy.\n",
        "| judge | " + " | ".join(KINDS) + " | harmful, pooled | failed |",
        "|---|" + "---:|" * (len(KINDS) + 2),
    ]
    for name in ("pairwise", "rubric_coverage"):
        if name not in summary:
            continue
        s = summary[name]
        cells = [
            f"{s['by_kind'][k]['accuracy']:.2f} ({s['by_kind'][k]['n']:.0f})"
            if k in s["by_kind"]
            else "–"
            for k in KINDS
        ]
        lines.append(
            f"| {name} ({s['model_id']}) | "
            + " | ".join(cells)
            + f" | {s['harmful_accuracy']:.2f} ({s['harmful_n']}) | {s['failed']} |"
        )
    if "pairwise" in summary:
        b = summary["pairwise"]["position_bias"]
        lines.append(
            f"\nPairwise position bias: the first-shown answer won {b['first_wins']:.2f} of "
            f"{b['decisive_verdicts']:.0f} decisive verdicts; orders agreed in "
            f"{b['order_agreement']:.2f} of battles."
        )
    for name, unit in (("pairwise", "battle (both orders)"), ("rubric_coverage", "judged answer")):
        c = summary.get(name, {}).get("cost") or {}
        if c:
            lines.append(
                f"\nCost of {name}: {c['seconds_per_judgment']:.1f} s and "
                f"{c['prompt_tokens_per_judgment']:.0f} prompt tokens per {unit} "
                f"({c['timed_judgments']:.0f} timed)."
            )
    return "\n".join(lines) + "\n"
