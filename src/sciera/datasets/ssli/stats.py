"""The build report (``stats.json``): counts per step, rejection reasons, timings, usage."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from sciera.datasets.ssli.io import JsonlLog


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def build_stats(
    out: Path,
    selection: dict[str, Any],
    questions: list[dict[str, Any]],
    records: list[dict[str, Any]],
    llm: Any = None,
) -> dict[str, Any]:
    extract = JsonlLog(out / "extract.jsonl").records if (out / "extract.jsonl").exists() else []
    qa = JsonlLog(out / "qa.jsonl").records if (out / "qa.jsonl").exists() else []
    qa_reasons = Counter(r["reason"] for rec in qa for r in rec["rejected"])
    qa_errors = Counter(rec["error"] for rec in qa if rec["error"])
    dis_reasons: Counter[str] = Counter()
    accepted_types: Counter[str] = Counter()
    settings: Counter[str] = Counter()
    guidance_failures = salvaged = 0
    gold_ranks = []
    for rec in records:
        detail = rec.get("distractors") or {}
        dis_reasons.update(r["reason"] for r in detail.get("distractors_rejected", []))
        guidance_failures += bool(detail.get("guidance_error"))
        salvaged += detail.get("distractors_salvaged", 0)
        for inst in rec["instances"]:
            settings[inst["setting"]] += 1
            if inst["setting"] == "ssli":
                accepted_types.update(
                    c["distractor_type"] for c in inst["candidates"] if c["is_distractor"]
                )
        rank = rec["instances"][0]["provenance"].get("gold_retrieved_rank", 0)
        gold_ranks.append(rank)
    contexts_s = [
        r["instances"][0]["provenance"]["timings"].get("contexts_s", 0.0) for r in records
    ]
    total_s = sum(r["seconds"] for r in extract) + sum(r["seconds"] for r in qa) + sum(contexts_s)
    stats: dict[str, Any] = {
        "select": {**selection.get("counts", {}), "seconds": selection.get("seconds", 0.0)},
        "extract": {
            "passages": len(extract),
            "ok": sum(1 for r in extract if r["notes"] is not None),
            "failed": Counter(r["error"] for r in extract if r["notes"] is None),
            "mean_seconds": _mean([r["seconds"] for r in extract]),
        },
        "qa": {
            "passages": len(qa),
            "generated": sum(r["generated"] for r in qa),
            "accepted": sum(len(r["accepted"]) for r in qa),
            "rejected": dict(qa_reasons),
            "repair_attempts": sum(len(r.get("repaired", [])) for r in qa),
            "repaired": sum(x["accepted"] for r in qa for x in r.get("repaired", [])),
            "errors": dict(qa_errors),
            "mean_seconds": _mean([r["seconds"] for r in qa]),
        },
        "contexts": {
            "questions": len(records),
            "gold_retrieved_in_top30": sum(1 for r in gold_ranks if 0 < r <= 30),
            "gold_retrieved_at_1": sum(1 for r in gold_ranks if r == 1),
            "distractors_accepted": dict(accepted_types),
            "distractors_rejected": dict(dis_reasons),
            "distractors_salvaged": salvaged,
            "guidance_failures": guidance_failures,
            "mean_seconds": _mean(contexts_s),
        },
        "instances": dict(settings),
        "questions": len(questions),
        # all step time (extraction, QA incl. rejected pairs, contexts) over questions built
        "seconds_per_question": round(total_s / len(records), 3) if records else 0.0,
    }
    stats["extract"]["failed"] = dict(stats["extract"]["failed"])
    usage = getattr(llm, "usage", None)
    if callable(usage):
        u = usage()
        stats["llm_usage_this_run"] = {
            "calls": u.calls,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "seconds": round(u.seconds, 3),
            "cache_hits": u.cache_hits,
            "by_stage": u.by_stage,
        }
    return stats
