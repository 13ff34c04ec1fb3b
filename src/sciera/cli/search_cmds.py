"""``sciera index`` (build BM25 + dense indexes) and ``sciera search`` (first-stage retrieval)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sciera.cli.base import app, options_settings
from sciera.cli.options import PresetOpt
from sciera.types import to_plain

if TYPE_CHECKING:
    from sciera.progress import StepProgress
    from sciera.retrieve.manifest import Manifest
    from sciera.settings import Settings
    from sciera.types import Ranking

_CorpusOpt = Annotated[
    Path, typer.Option("--corpus", help="Corpus directory (store.sqlite + index/).")
]
_EmbedderOpt = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="scifact-minilm (default), minilm, e5 or sentence-transformers (with --model).",
    ),
]
_ModelOpt = Annotated[
    str | None,
    typer.Option("--model", help="Model name or path for --embedder sentence-transformers."),
]


def _settings(preset: str | None, **sections: dict[str, Any]) -> Settings:
    return options_settings(preset, sections)


@app.command("index")
def index_cmd(
    corpus: _CorpusOpt,
    bm25_only: Annotated[bool, typer.Option("--bm25-only", help="Build only BM25.")] = False,
    dense_only: Annotated[bool, typer.Option("--dense-only", help="Build only dense.")] = False,
    embedder: _EmbedderOpt = None,
    model: _ModelOpt = None,
    k1: Annotated[float | None, typer.Option("--k1", help="BM25 k1 (default 0.9).")] = None,
    b: Annotated[float | None, typer.Option("--b", help="BM25 b (default 0.4).")] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="BM25 variant: lucene, robertson, atire, ...")
    ] = None,
    vectors: Annotated[
        str | None, typer.Option("--vectors", help="Vector index: faiss (default) or qdrant.")
    ] = None,
    qdrant_url: Annotated[
        str | None, typer.Option("--qdrant-url", help="Qdrant server URL (else embedded).")
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="embedded (bm25s + --vectors) or qdrant (one collection: dense + BM25 sparse).",
        ),
    ] = None,
    shards: Annotated[
        int | None, typer.Option("--shards", min=1, help="qdrant engine: shards.")
    ] = None,
    replication: Annotated[
        int | None, typer.Option("--replication", min=1, help="qdrant engine: replicas.")
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="Embed on Ray first: local (start one here), auto (running cluster), HOST:PORT.",
        ),
    ] = None,
    ray_workers: Annotated[
        int | None, typer.Option("--ray-workers", min=1, help="Embedding actors (default: CPUs).")
    ] = None,
    shard_size: Annotated[
        int, typer.Option("--shard-size", min=1, help="Passages per Ray shard.")
    ] = 1024,
    preset: PresetOpt = None,
) -> None:
    """Build the BM25 and dense indexes of a corpus directory and record them in the manifest."""
    from sciera.errors import ScieraError
    from sciera.progress import step_progress
    from sciera.retrieve.build import build_indexes

    if bm25_only and dense_only:
        raise ScieraError("--bm25-only and --dense-only exclude each other")
    which = ("bm25",) if bm25_only else ("dense",) if dense_only else ("bm25", "dense")
    settings = _settings(
        preset,
        bm25={"k1": k1, "b": b, "method": method},
        embed={"backend": embedder, "model": model},
        vectors={"backend": vectors, "qdrant_url": qdrant_url},
        index={"engine": engine, "qdrant_shards": shards, "qdrant_replication": replication},
    )
    with step_progress(partial(_index_label, settings)) as progress:
        if ray is not None and "dense" in which:
            _embed_on_ray(corpus, settings, ray, shard_size, ray_workers, progress)
        manifest = build_indexes(corpus, settings, which=which, progress=progress)
    _print_indexes(corpus, manifest)


def _index_label(settings: Settings, task: str) -> str:
    """What the progress line of an index-building task says."""
    if task == "ray":
        return f"embedding on Ray ({settings.embed.backend})"
    if task == "qdrant":
        return f"qdrant: embedding ({settings.embed.backend}) + BM25"
    if task == "qdrant_index":
        return "qdrant: indexing (HNSW graph, sparse index)"
    return "BM25" if task == "bm25" else f"embedding ({settings.embed.backend})"


def _embed_on_ray(
    corpus: Path,
    settings: Settings,
    ray: str,
    shard_size: int,
    workers: int | None,
    progress: StepProgress,
) -> None:
    """``--ray``: embed the passages the cache lacks on Ray first (the dense build then
    reads them from the cache), and say what ran."""
    from sciera.scale.embed import embed_on_ray

    ran = embed_on_ray(
        corpus,
        settings,
        ray,
        shard_size=shard_size,
        workers=workers,
        progress=partial(progress, "ray"),
    )
    typer.echo(
        f"ray: embedded {ran['embedded']} of {ran['missing']} uncached passages in "
        f"{ran['shards']} shards on {ran['workers']} workers",
        err=True,
    )


def _print_indexes(corpus: Path, manifest: Manifest) -> None:
    """The indexes built, as a table: passages, seconds, rate and parameters."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"indexes of {corpus}")
    for column in ("index", "passages", "seconds", "passages/s", "parameters"):
        table.add_column(column)
    for key, rec in sorted(manifest.records.items()):
        params = ", ".join(f"{k}={v}" for k, v in rec.params.items() if v is not None)
        rate = f"{rec.passages / rec.seconds:,.0f}" if rec.seconds else "-"
        table.add_row(key, f"{rec.passages:,}", f"{rec.seconds:.1f}", rate, params)
    Console().print(table)


def _ranking_json(ranking: Ranking, retriever: str, unit: str) -> dict[str, Any]:
    return {
        "query": ranking.query,
        "retriever": retriever,
        "unit": unit,
        "items": [
            {
                "rank": item.rank,
                "score": item.score,
                "passage_id": item.passage_id,
                "doc_id": item.passage.doc_id,
                "title": item.passage.title,
                "section": item.passage.section,
                "text": item.passage.text,
                "provenance": to_plain(item.provenance),
            }
            for item in ranking
        ],
    }


def _snippet(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="The query text.")],
    corpus: _CorpusOpt,
    retriever: Annotated[
        str | None, typer.Option("--retriever", help="bm25, dense or hybrid (default: settings).")
    ] = None,
    k: Annotated[int, typer.Option("-k", "--k", min=1, help="Results to show.")] = 10,
    unit: Annotated[
        str, typer.Option("--unit", help="passage, or document (Max-P: best passage per doc).")
    ] = "passage",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    fusion: Annotated[
        str | None, typer.Option("--fusion", help="Hybrid fusion: rrf or weighted.")
    ] = None,
    embedder: _EmbedderOpt = None,
    model: _ModelOpt = None,
    preset: PresetOpt = None,
    section: Annotated[
        str | None,
        typer.Option(
            "--section",
            help="Only passages of these sections of full-text papers, comma-separated "
            "(abstract, introduction, methods, results, discussion, conclusions ...).",
        ),
    ] = None,
) -> None:
    """Search a corpus with BM25, dense or hybrid retrieval and print the top-k."""
    from sciera.errors import ScieraError, require_query
    from sciera.retrieve.maxp import MaxPRetriever, passage_depth
    from sciera.retrieve.open import open_retriever

    query = require_query(query)
    sections = None
    if section is not None:
        from sciera.retrieve.sections import parse_sections

        sections = tuple(sorted(parse_sections(section)))
    if unit not in ("passage", "document"):
        raise ScieraError(f"--unit must be passage or document, got {unit!r}")
    settings = _settings(
        preset,
        retrieve={"retriever": retriever, "fusion": fusion, "sections": sections},
        embed={"backend": embedder, "model": model},
    )
    name = settings.retrieve.retriever
    searcher = open_retriever(corpus, name, settings)
    if unit == "document":
        searcher = MaxPRetriever(searcher, depth=passage_depth(settings.retrieve.passage_depth, k))
    ranking = searcher.search(query, k)
    if as_json:
        typer.echo(json.dumps(_ranking_json(ranking, name, unit), indent=2, ensure_ascii=False))
        return
    _print_table(ranking, name, unit)


def _print_table(ranking: Ranking, name: str, unit: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{name} · {unit}s · {ranking.query}", show_lines=False)
    table.add_column("rank", justify="right")
    table.add_column("score", justify="right")
    table.add_column("passage id")
    table.add_column("title", max_width=40)
    if any(item.passage.section for item in ranking):
        table.add_column("section", max_width=24)
    table.add_column("snippet")
    for item in ranking:
        table.add_row(
            str(item.rank),
            f"{item.score:.4f}",
            item.passage_id,
            _snippet(item.passage.title, 80),
            *([item.passage.section] if len(table.columns) == 6 else []),
            _snippet(item.passage.text),
        )
    console = Console()
    if not ranking.items:
        console.print("no results")
        return
    console.print(table)
