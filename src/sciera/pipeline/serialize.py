"""Pipeline records as JSON-ready data: one serializer per record, shared by the CLI, the
HTTP server, MCP, the research agent's log and the experiment runner's results. Passage
text is data, returned as stored (never markup)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sciera.types import Answer, Evidence, Ranking, to_plain


def ranking_rows(ranking: Ranking, *, provenance: bool = False) -> list[dict[str, Any]]:
    """A ranking as rows; with ``provenance``, what each stage recorded about the passage."""
    return [
        {
            "rank": it.rank,
            "score": it.score,
            "passage_id": it.passage_id,
            "doc_id": it.passage.doc_id,
            "title": it.passage.title,
            "section": it.passage.section,
            "text": it.passage.text,
            **({"provenance": to_plain(it.provenance)} if provenance else {}),
        }
        for it in ranking
    ]


def candidate_table(
    candidates: Ranking, ranking: Ranking, filter_trace: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Every passage the filter saw (``ranking``), best first: its rank among the first
    stage's ``candidates``, its score, whether the reranker graded it (a pruned passage's
    score is only a bound), kept or not and why."""
    decisions = {d["passage_id"]: d for d in filter_trace.get("decisions", ())}
    first = {it.passage_id: it.rank for it in candidates}
    rows = []
    for it in ranking:
        own = it.provenance.get(ranking.stage, {})
        d = decisions.get(it.passage_id, {"kept": False, "why": ""})
        rows.append(
            {
                "passage_id": it.passage_id,
                "title": it.passage.title,
                "first_stage_rank": first.get(it.passage_id, it.rank),
                "score": it.score,
                "graded": bool(own.get("graded", True)) if isinstance(own, Mapping) else True,
                "kept": d["kept"],
                "why": d["why"],
            }
        )
    return rows


def evidence_rows(evidence: Sequence[Evidence]) -> list[dict[str, Any]]:
    """The evidence records, numbered as the answer's ``[n]`` markers cite them: the
    passage's section (full-text papers; "" for abstracts), score,
    summary, whether the filter kept it (False: below tau, cited for its rationale
    sentences), and the rationale sentences verbatim with their indices."""
    return [
        {
            "n": i + 1,
            "passage_id": e.passage.passage_id,
            "title": e.passage.title,
            "section": e.passage.section,
            "score": e.score,
            "summary": e.summary,
            "kept": e.kept,
            "rationales": [
                {"doc_id": r.doc_id, "index": r.index, "text": r.text, "score": r.score}
                for r in e.rationales
            ],
        }
        for i, e in enumerate(evidence)
    ]


def answer_json(answer: Answer, *, trace: bool = True) -> dict[str, Any]:
    """The answer as plain JSON-ready data; ``trace=False`` leaves the trace out (the
    experiment runner's result lines keep traces apart)."""
    out = {
        "question": answer.question,
        "question_type": answer.question_type,
        "text": answer.text,
        "exact": list(answer.trace.get("exact", ())),
        "insufficient": answer.insufficient,
        "citations": [
            {
                "marker": c.marker,
                "passage_id": c.passage_id,
                "title": c.title,
                "section": c.section,
                "sentences": list(c.sentences),
            }
            for c in answer.citations
        ],
        "evidence": evidence_rows(answer.evidence),
    }
    if trace:
        out["trace"] = to_plain(answer.trace)
    return out
