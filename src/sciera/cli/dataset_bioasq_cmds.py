"""``sciera dataset bioasq-from-pubmedqa|bioasq-from-scifact``: BioASQ-format yes/no files
from PubMedQA and from a verifier's SciFact dev claims (:mod:`sciera.datasets.to_bioasq`)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from sciera.cli.dataset_cmds import dataset_app

BioasqOut = Annotated[Path, typer.Option("--out", help="The BioASQ JSON file to write.")]


@dataset_app.command("bioasq-from-pubmedqa")
def bioasq_from_pubmedqa(
    out: BioasqOut,
    pubmedqa: Annotated[
        Path, typer.Option(help="PubMedQA PQA-L JSON (yes/no/maybe questions).")
    ] = Path("../shared/data/pubmedqa/pqal_dev.json"),
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N yes/no items.")] = None,
    held_out_of: Annotated[
        str | None,
        typer.Option(
            metavar="MODEL",
            help="Only the questions verifier MODEL never trained on (its card's held-out fold).",
        ),
    ] = None,
    conclusion_only: Annotated[
        bool, typer.Option(help="The LONG_ANSWER as the one snippet (the conclusion alone).")
    ] = False,
) -> None:
    """Write PubMedQA's yes/no questions as a BioASQ Task B file (maybe ones left out)."""
    from sciera.datasets.to_bioasq import (
        convert_pubmedqa,
        pubmedqa_held_ids,
        verifier_card,
        write_bioasq,
    )
    from sciera.settings import load_settings

    pqal = json.loads(pubmedqa.read_text(encoding="utf-8"))
    only = None
    if held_out_of:
        only = pubmedqa_held_ids(verifier_card(held_out_of, load_settings().home), held_out_of)
    data = convert_pubmedqa(pqal, limit, only=only, conclusion_only=conclusion_only)
    write_bioasq(out, data)
    answers = [q["exact_answer"] for q in data["questions"]]
    typer.echo(
        f"{out}: {len(answers)} yes/no questions "
        f"({answers.count('yes')} yes, {answers.count('no')} no) from {pubmedqa}"
    )


@dataset_app.command("bioasq-from-scifact")
def bioasq_from_scifact(
    out: BioasqOut,
    model: Annotated[str, typer.Option(help="The verifier whose dev claims.")] = (
        "scifact-verifier"
    ),
    claims: Annotated[
        Path, typer.Option(help="SciFact training claims (claims_train.jsonl).")
    ] = Path("../shared/data/scifact/claims_train.jsonl"),
    sentences: Annotated[
        Path, typer.Option(help="The abstracts as sentence lists (corpus_sentences.jsonl).")
    ] = Path("../shared/data/scifact/corpus_sentences.jsonl"),
) -> None:
    """Write a verifier's SciFact dev claims as BioASQ yes/no questions, each claim rewritten
    as one question by the LLM (its replies cached); claims it cannot turn into one are
    left out and counted."""
    from sciera.datasets.to_bioasq import convert_scifact, dev_claims, verifier_card, write_bioasq
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings
    from sciera.train.verifier_data import load_abstracts

    settings = load_settings()
    chosen = dev_claims(verifier_card(model, settings.home), model, claims)
    abstracts = load_abstracts(sentences)
    llm = make_llm(settings)
    data, left_out = convert_scifact(chosen, abstracts, llm)
    write_bioasq(out, data)
    answers = Counter(q["exact_answer"] for q in data["questions"])
    typer.echo(
        f"{out}: {len(data['questions'])} yes/no questions ({answers['yes']} yes, "
        f"{answers['no']} no) from {len(chosen)} dev claims of {model}; questions by "
        f"{llm.model_id}; left out {dict(left_out)}"
    )
