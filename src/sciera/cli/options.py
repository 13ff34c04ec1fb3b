"""Options several commands declare alike (the same flag, type and help text), declared
once; a command's own options stay in its module."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

CorpusOpt = Annotated[Path, typer.Option("--corpus", help="Corpus directory (ingested, indexed).")]
PresetOpt = Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")]
FirstStageOpt = Annotated[str | None, typer.Option("--first-stage", help="bm25 | dense | hybrid")]
QuestionTypeOpt = Annotated[
    str | None,
    typer.Option("--type", help="Question type: auto | yesno | factoid | list | ideal"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]

# The rerank and filter options `ask` and `rerank` share.
DepthOpt = Annotated[int | None, typer.Option(help="First-stage candidates to rerank.")]
TauOpt = Annotated[
    float | None, typer.Option(help="Keep passages with calibrated P(relevant) >= tau.")
]
ScorerOpt = Annotated[
    str | None,
    typer.Option(help="DeepEra's relevance scorer: llm | cross_encoder (trained, fast)."),
]
ScorerModelOpt = Annotated[
    str | None, typer.Option("--scorer-model", help="Cross-encoder for --scorer.")
]
TopKOpt = Annotated[int | None, typer.Option("--top-k", help="Passages kept.")]
ExplainOpt = Annotated[bool, typer.Option(help="Print the reranker's full trace.")]
