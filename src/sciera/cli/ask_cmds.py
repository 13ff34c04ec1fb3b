"""``sciera ask "question" --corpus DIR``: the full answering pipeline."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from sciera.cli.base import app, options_settings
from sciera.cli.options import (
    CorpusOpt,
    DepthOpt,
    ExplainOpt,
    FirstStageOpt,
    JsonOpt,
    PresetOpt,
    QuestionTypeOpt,
    ScorerModelOpt,
    ScorerOpt,
    TauOpt,
    TopKOpt,
)

OPTIONS = {"filter.top_k": "--top-k", "filter.tau": "--tau", "rerank.depth": "--depth"}
"""Setting path -> the option that sets it, named in a one-line error."""


def _sections(spec: str | None) -> tuple[str, ...] | None:
    """``--section methods,results`` as the settings' kinds (checked: one-line error)."""
    if spec is None:
        return None
    from sciera.retrieve.sections import parse_sections

    return tuple(sorted(parse_sections(spec)))


def _snippet(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _tau_hint(info: dict[str, Any]) -> str:
    """When every candidate fell below the threshold: the best score, and how to go on."""
    rows = info.get("candidates", [])
    tau = info.get("filter", {}).get("tau")
    graded = [r for r in rows if r.get("graded", True)]  # a pruned row's score is a bound
    if not graded or tau is None or any(r["kept"] for r in rows):
        return ""
    best = max(graded, key=lambda r: r["score"])
    if best["score"] >= tau:
        return ""
    return (
        f"best candidate {best['passage_id']} scored {best['score']:.3f} < tau {tau:.2f}; "
        "--tau lower accepts weaker evidence (scores are calibrated P(relevant) when the "
        "trace says 'calibrated')"
    )


def _print(data: dict[str, Any], explain: bool) -> None:
    """An answer as text: the answer and its notes, the verdict, the citations, the
    evidence, the candidate table and the costs (with ``explain``, the reranker's trace)."""
    trace = data["trace"]
    info = trace.get("pipeline", {})
    _print_answer(data, info)
    verdict = trace.get("verification")
    if verdict:
        sides = ""
        if verdict["conflicting"]:
            sides = (
                f" (supported by {', '.join(verdict['supporting'])}; "
                f"contradicted by {', '.join(verdict['contradicting'])})"
            )
        typer.echo(f"verdict: {verdict['label']} ({verdict['confidence']:.2f}){sides}")
    if data["citations"]:
        typer.echo("citations:")
        for c in data["citations"]:
            where = f" sentences {', '.join(map(str, c['sentences']))}" if c["sentences"] else ""
            marker = f"{c['marker']}, {c['section']}" if c.get("section") else c["marker"]
            typer.echo(f"  [{marker}] {c['passage_id']}{where}  {_snippet(c['title'], 70)}")
    if trace.get("dangling_citations"):
        typer.echo(f"removed {trace['dangling_citations']} citation(s) pointing nowhere")
    if data["evidence"]:
        _print_evidence(data["evidence"], info)
    _print_candidates(info)
    if info and not data["evidence"]:
        typer.echo(f"no evidence; sufficient: {info['sufficient']}")
    elif info:
        secs = ", ".join(f"{k} {v:.1f}s" for k, v in info.get("seconds", {}).items())
        typer.echo(
            f"CR {info['compression_ratio']:.2f} (vs all candidates "
            f"{info['compression_ratio_candidates']:.2f}); sufficient: {info['sufficient']}; "
            f"{secs}"
        )
    if explain and info.get("rerank_trace"):
        typer.echo(f"{info.get('reranker')} trace:")
        typer.echo(json.dumps(info["rerank_trace"], indent=2, ensure_ascii=False))


def _print_answer(data: dict[str, Any], info: dict[str, Any]) -> None:
    """The question and the answer, with what qualifies it (degraded, read from the closest
    passages, refused and why)."""
    trace = data["trace"]
    typer.echo(f"Q ({data['question_type']}): {data['question']}")
    typer.echo(f"A: {data['text']}")
    if data["exact"] and data["question_type"] != "yesno":
        typer.echo("exact: " + " | ".join(data["exact"]))
    if "degraded" in trace:
        typer.echo(f"degraded: {trace['degraded']}")
    if trace.get("closest") and not data["insufficient"]:
        tau = info.get("filter", {}).get("tau")
        below = f"tau {tau:.2f}" if isinstance(tau, float) else "the filter"
        typer.echo(
            f"note: no passage passed {below}; the answer is stated verbatim in the "
            f"{trace['closest']} closest passages below it (check them)"
        )
    if data["insufficient"]:
        typer.echo(f"refused: {trace.get('refused', '')}")
        hint = _tau_hint(info)
        if hint:
            typer.echo(hint)


def _print_evidence(evidence: list[dict[str, Any]], info: dict[str, Any]) -> None:
    """The evidence records, each with its score and the rationale sentences it quotes."""
    typer.echo(f"evidence ({info.get('evidence_extractor', '')}):")
    for e in evidence:
        text = e["summary"] or "(full passage)"
        mark = ""
        if not e["kept"]:  # a verified abstract's sentences, or a closest passage
            mark = "  (below tau" + (": cited for its sentences)" if e["rationales"] else ")")
        where = f" [{e['section']}]" if e.get("section") else ""
        typer.echo(
            f"  [{e['n']}] {e['score']:.3f}  {e['passage_id']}{where}  {_snippet(text, 100)}{mark}"
        )
        for r in e["rationales"]:
            typer.echo(f'      sentence {r["index"]}: "{r["text"]}"')


def _print_candidates(info: dict[str, Any]) -> None:
    """The candidate table: each candidate's score, kept or filtered, and why."""
    rows = info.get("candidates", [])
    if not rows:
        return
    typer.echo(
        f"candidates ({info.get('first_stage')} top-{info.get('depth')}, "
        f"reranker {info.get('reranker')}):"
    )
    for r in rows:
        mark = "kept    " if r["kept"] else "filtered"
        why = f"  ({r['why']})" if r["why"] else ""
        typer.echo(
            f"  {r['score']:.3f}  {mark}  {r['passage_id']}  {_snippet(r['title'], 60)}{why}"
        )


# `ask`'s own options with long help texts (the others are declared in its signature).
ExplainYesnoOpt = Annotated[
    bool | None,
    typer.Option(
        "--explain-yesno/--no-explain-yesno",
        help="Add LLM prose to yes/no answers (one more LLM call, about 6 s). Default: "
        "only when the LLM decided (--no-verify); a verifier's decision quotes its "
        "rationale sentences.",
    ),
]
YesnoPriorOpt = Annotated[
    str | None,
    typer.Option(
        "--yesno-prior",
        help="none | content_free: divide yes/no probabilities by the model's prior.",
    ),
]
DecisionOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--decision-only",
        help="Yes/no questions and claims: the verifier's decision and its quoted "
        "rationale sentences, no LLM prose.",
    ),
]
VerifyOpt = Annotated[
    bool | None,
    typer.Option(
        "--verify/--no-verify",
        help="Decide yes/no questions and claims with the trained verifier (default).",
    ),
]
SectionOpt = Annotated[
    str | None,
    typer.Option(
        "--section",
        help="Retrieve only from these sections of full-text papers, comma-separated "
        "(abstract, introduction, methods, results, discussion, conclusions ...).",
    ),
]


@app.command("ask")
def ask(
    question: Annotated[str, typer.Argument(help="The scientific question (or claim).")],
    corpus: CorpusOpt,
    preset: PresetOpt = None,
    first_stage: FirstStageOpt = None,
    depth: DepthOpt = None,
    reranker: Annotated[
        str | None, typer.Option(help="Reranker name (default deepera; none: no reranking).")
    ] = None,
    tau: TauOpt = None,
    scorer: ScorerOpt = None,
    scorer_model: ScorerModelOpt = None,
    top_k: TopKOpt = None,
    evidence: Annotated[
        str | None, typer.Option(help="Evidence: deepera | rational | vanilla | full")
    ] = None,
    qtype: QuestionTypeOpt = None,
    maybe: Annotated[
        bool | None, typer.Option("--maybe/--no-maybe", help="Allow 'maybe' for yes/no.")
    ] = None,
    extractive: Annotated[
        bool | None,
        typer.Option("--extractive/--abstractive", help="BioASQ style 3: copy phrases."),
    ] = None,
    refuse: Annotated[
        bool | None,
        typer.Option("--refuse/--no-refuse", help="Refuse when the evidence is insufficient."),
    ] = None,
    explain_yesno: ExplainYesnoOpt = None,
    yesno_prior: YesnoPriorOpt = None,
    decision_only: DecisionOnlyOpt = False,
    verify: VerifyOpt = None,
    section: SectionOpt = None,
    as_json: JsonOpt = False,
    explain: ExplainOpt = False,
) -> None:
    """Answer QUESTION from the corpus, with citations, the evidence and the candidate table."""
    from sciera.errors import require_query
    from sciera.pipeline import answer_json, pipeline_from_settings

    question = require_query(question, "question")  # before any model loads
    settings = options_settings(
        preset,
        {
            "retrieve": {"retriever": first_stage, "sections": _sections(section)},
            "rerank": {"depth": depth, "reranker": reranker},
            "filter": {"tau": tau, "top_k": top_k},
            "deepera": {"scorer": scorer, "scorer_model": scorer_model},
            "verify": {"enabled": verify},
            "answer": {
                "evidence": evidence,
                "question_type": qtype,
                "allow_maybe": maybe,
                "extractive": extractive,
                "refuse_on_empty": refuse,
                "refuse_on_insufficient": refuse,
                "explain_yesno": explain_yesno,
                "yesno_prior": yesno_prior,
                "decision_only": decision_only or None,
            },
        },
        OPTIONS,
    )
    pipeline = pipeline_from_settings(corpus, settings)
    _show(answer_json(pipeline.answer(question)), as_json, explain)


def _show(data: dict[str, Any], as_json: bool, explain: bool) -> None:
    """Print the answer: as JSON (the reranker's trace only with --explain), else as text."""
    if as_json:
        if not explain:
            data["trace"].get("pipeline", {}).pop("rerank_trace", None)
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    _print(data, explain)
