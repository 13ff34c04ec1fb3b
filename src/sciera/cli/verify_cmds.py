"""``sciera verify "CLAIM" --corpus DIR``: what the top-ranked abstracts say about a claim,
with the sentences that say it; ``--claims FILE --out PRED.jsonl`` for many claims."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sciera.cli.base import app, options_settings
from sciera.cli.options import CorpusOpt, FirstStageOpt, JsonOpt, PresetOpt
from sciera.errors import InputError, ScieraError
from sciera.types import NOT_ENOUGH_INFO

if TYPE_CHECKING:
    from sciera.pipeline import Pipeline

OPTIONS = {"verify.abstracts": "--top-k"}
"""Setting path -> the option that sets it, named in a one-line error."""


def _print(data: dict[str, Any]) -> None:
    label = data["label"]
    head = f"{label} (confidence {data['confidence']:.2f})"
    typer.echo(f"claim: {data['claim']}")
    typer.echo(f"verdict: {head}")
    if data["conflicting"]:
        typer.echo(
            "conflicting evidence: supported by "
            + ", ".join(data["supporting"])
            + "; contradicted by "
            + ", ".join(data["contradicting"])
        )
    for a in data["abstracts"]:
        typer.echo(f"\n[{a['doc_id']}] {a['label']} {a['confidence']:.2f}  {a['title']}")
        if a.get("relevance") is not None:
            typer.echo(f"  P(relevant) {a['relevance']:.2f} (the reranker's, read by the gate)")
        if a["rationales"] and a["label"] == NOT_ENOUGH_INFO:
            typer.echo("  closest sentences (evidence for neither side):")
        for r in a["rationales"]:
            typer.echo(f'  sentence {r["index"]} ({r["score"]:.2f}): "{r["text"]}"')
    if not data["abstracts"]:
        typer.echo("no abstract was retrieved")


def read_claims(path: Path) -> list[tuple[str, str]]:
    """(id, claim) of each line of a JSONL file (SciFact's claim format or any record with
    ``id`` and ``claim``); a bad line is a one-line error naming it."""
    if not path.is_file():
        raise ScieraError(f"{path}: no such file")
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(str(path), n, "record", f"not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise InputError(str(path), n, "record", "expected a JSON object")
            cid, claim = rec.get("id"), rec.get("claim")
            if isinstance(cid, bool) or not isinstance(cid, int | str) or not str(cid).strip():
                raise InputError(str(path), n, "id", f"expected a non-empty id, got {cid!r}")
            if not isinstance(claim, str) or not claim.strip():
                raise InputError(str(path), n, "claim", "expected a non-empty string")
            if str(cid) in seen:
                raise InputError(str(path), n, "id", f"claim {cid} appears twice")
            seen.add(str(cid))
            out.append((str(cid), claim))
    return out


def done_ids(out: Path) -> set[str]:
    """Claims already written to ``out`` (a line cut by a kill is dropped and redone)."""
    if not out.exists():
        return set()
    text = out.read_text(encoding="utf-8")
    lines = text.splitlines()
    if text and not text.endswith("\n") and lines:
        lines = lines[:-1]  # the last line was cut mid-write
        out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    ids = set()
    for n, line in enumerate(lines, 1):
        try:
            ids.add(str(json.loads(line)["id"]))
        except (json.JSONDecodeError, KeyError, TypeError):
            raise InputError(
                str(out), n, "id", "not a prediction line; use another --out"
            ) from None
    return ids


@app.command("verify")
def verify(
    corpus: CorpusOpt,
    claim: Annotated[str | None, typer.Argument(help="The claim to verify.")] = None,
    top_k: Annotated[
        int | None, typer.Option("--top-k", help="Top-ranked abstracts read (default 5).")
    ] = None,
    claims: Annotated[
        Path | None,
        typer.Option("--claims", help="JSONL of claims ({'id', 'claim'}): verify each."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="With --claims: SciFact prediction JSONL (resumable)."),
    ] = None,
    first_stage: FirstStageOpt = None,
    reranker: Annotated[str | None, typer.Option(help="Reranker name (default deepera).")] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Verifier model (shipped or trained name).")
    ] = None,
    llm: Annotated[
        bool | None,
        typer.Option(
            "--llm/--no-llm",
            help="Decide SUPPORT or CONTRADICT with the LLM's label probabilities combined "
            "with the trained verdict ('combined'), or with the trained verdict alone "
            "(faster, no LLM loaded). Default: the verify.verdict setting.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    preset: PresetOpt = None,
) -> None:
    """Verify CLAIM against the corpus: per top-ranked abstract SUPPORT / CONTRADICT / NOT
    ENOUGH INFO with its confidence and rationale sentences (verbatim, with their indices),
    then the overall verdict, CONFLICTING when strong abstracts disagree."""
    from sciera.pipeline import build_pipeline, verify_spec

    todo = _claims_to_verify(claim, claims, out)
    settings = options_settings(
        preset,
        {
            "retrieve": {"retriever": first_stage},
            "rerank": {"reranker": reranker},
            "verify": {
                "abstracts": top_k,
                "model": model,
                "require_sentences": True,
                "verdict": None if llm is None else ("combined" if llm else "trained"),
            },
        },
        OPTIONS,
    )
    pipe = build_pipeline(verify_spec(settings), settings, corpus=corpus)
    if claims is None:
        _verify_one(pipe, todo[0][1], as_json)
        return
    assert out is not None
    _verify_all(pipe, todo, out)


def _claims_to_verify(
    claim: str | None, claims: Path | None, out: Path | None
) -> list[tuple[str, str]]:
    """(id, claim) of the CLAIM (id "") or of each line of --claims; arguments that do not
    go together are one-line errors, before any model loads."""
    from sciera.errors import require_query

    if (claim is None) == (claims is None):
        raise ScieraError("give a CLAIM or --claims FILE (one of them)")
    if claims is not None and out is None:
        raise ScieraError("--claims needs --out PRED.jsonl (SciFact's prediction format)")
    if claims is None and out is not None:
        raise ScieraError("--out writes the predictions of --claims FILE; for one CLAIM use --json")
    return read_claims(claims) if claims is not None else [("", require_query(claim, "claim"))]


def _verify_one(pipe: Pipeline, claim: str, as_json: bool) -> None:
    """Verify one claim and print its verification (as JSON, or as text)."""
    from sciera.verify.stage import verification_json

    result = pipe.run(claim, "yesno")
    assert result.verification is not None
    data = verification_json(result.verification)
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print(data)


def _verify_all(pipe: Pipeline, todo: list[tuple[str, str]], out: Path) -> None:
    """Verify each claim ``out`` lacks, appending its SciFact prediction line (flushed and
    synced, so a killed run resumes after the last whole line)."""
    from sciera.progress import step_progress
    from sciera.verify.stage import scifact_prediction

    done = done_ids(out)
    pending = [(cid, text) for cid, text in todo if cid not in done]
    out.parent.mkdir(parents=True, exist_ok=True)
    with step_progress(lambda s: s) as update, out.open("a", encoding="utf-8") as fh:
        update("claims", len(todo) - len(pending), len(todo))
        for n, (cid, text) in enumerate(pending, 1):
            result = pipe.run(text, "yesno")
            assert result.verification is not None
            fh.write(json.dumps(scifact_prediction(cid, result.verification)) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            update("claims", len(todo) - len(pending) + n, len(todo))
    typer.echo(f"{len(pending)} claims verified ({len(done)} already in {out})")
