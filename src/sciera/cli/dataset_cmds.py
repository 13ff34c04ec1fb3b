"""``sciera dataset build|stats|inspect|check|pack|unpack|inject|multidoc``: SciRAG-SSLI sets from
a corpus, and multi-document question sets from judged collections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sciera.cli.base import app
from sciera.cli.options import PresetOpt
from sciera.cli.ray_opts import RayCpusOpt, RayOpt, RayWorkersOpt, ShardOpt, ray_executor

if TYPE_CHECKING:
    from sciera.datasets.ssli.config import BuildConfig
    from sciera.executor import Executor

dataset_app = typer.Typer(
    help="Build and look at SciRAG-SSLI datasets (questions + Base/SSLI contexts).",
    no_args_is_help=True,
)
app.add_typer(dataset_app, name="dataset")
SetCorpus = Annotated[
    Path, typer.Option("--corpus", help="The ingested corpus the set was built from.")
]


def _topic_share(help_text: str) -> Any:
    """``--max-topic-share`` (:mod:`sciera.datasets.ssli.specificity`)."""
    return typer.Option("--max-topic-share", min=0.0, max=1.0, help=help_text)


# `dataset build`'s options with long help texts (the others are declared in its signature).
_RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair/--no-repair",
        help="Rewrite questions rejected for citing 'the study' or naming no subject "
        "once, from their answer.",
    ),
]
_ExcludeSsliOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--exclude-ssli",
        help="SSLI set whose gold abstracts are never a question's source (repeatable).",
    ),
]
_ExcludeQrelsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--exclude-qrels",
        help="Qrels file whose judged documents are never a question's source (repeatable).",
    ),
]
_BuildTopicShareOpt = Annotated[
    float,
    _topic_share(
        "Reject (or repair) a question when more than this share of the corpus's "
        "documents contain every topic word of it (0: no such rule)."
    ),
]


@dataset_app.command("build")
def build_cmd(
    corpus: Annotated[
        Path, typer.Option("--corpus", help="Corpus directory (ingested and indexed).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output folder (resumable).")],
    mode: Annotated[
        str, typer.Option("--mode", help="ours (notes -> QA), lmqg (easy), hard-negative (no LLM).")
    ] = "ours",
    n_docs: Annotated[int, typer.Option("--n-docs", help="Documents (or BEIR queries) used.")] = 50,
    max_questions: Annotated[
        int | None, typer.Option("--max-questions", help="Stop after this many questions.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    settings: Annotated[
        str, typer.Option("--settings", help="Comma-separated: base, ssli.")
    ] = "base,ssli",
    n_distractors: Annotated[
        int, typer.Option("--n-distractors", help="Distractors per SSLI instance.")
    ] = 6,
    pool: Annotated[
        int, typer.Option("--pool", help="Documents embedded for clustering (0: all).")
    ] = 1000,
    queries: Annotated[
        Path | None,
        typer.Option("--queries", help="BEIR folder whose queries+qrels give the questions."),
    ] = None,
    qrels_split: Annotated[str, typer.Option("--qrels-split")] = "test",
    retriever: Annotated[
        str, typer.Option("--retriever", help="bm25, dense or hybrid.")
    ] = "hybrid",
    repair: _RepairOpt = True,
    exclude_ssli: _ExcludeSsliOpt = None,
    exclude_qrels: _ExcludeQrelsOpt = None,
    max_topic_share: _BuildTopicShareOpt = 0.005,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
    ray_cpus: RayCpusOpt = 1,
    shard_size: ShardOpt = 4,
    preset: PresetOpt = None,
) -> None:
    """Build (or resume) a dataset in OUT: instances.jsonl, stats.json and checkpoints."""
    from sciera.datasets.ssli.config import BuildConfig

    config = BuildConfig(
        mode=mode,
        n_docs=n_docs,
        max_questions=max_questions,
        seed=seed,
        settings=tuple(s.strip() for s in settings.split(",") if s.strip()),
        n_distractors=n_distractors,
        pool=pool or None,
        retriever=retriever,
        queries=str(queries) if queries else None,
        qrels_split=qrels_split,
        repair_questions=repair,
        max_topic_share=max_topic_share or None,
        exclude_ssli=tuple(str(p) for p in exclude_ssli or ()),
        exclude_qrels=tuple(str(p) for p in exclude_qrels or ()),
    )
    with ray_executor(ray, ray_workers, shard_size, ray_cpus) as executor:
        stats = _build(corpus, out, config, preset, executor)
    typer.echo(_summary(stats, out))


def _build(
    corpus: Path, out: Path, config: BuildConfig, preset: str | None, executor: Executor | None
) -> dict:
    """Build (or resume) the set in ``out``, with a progress bar; its stats."""
    from sciera.datasets.ssli.builder import SSLIBuilder
    from sciera.progress import step_progress
    from sciera.settings import load_settings

    with step_progress() as progress:
        builder = SSLIBuilder(
            corpus,
            out,
            config,
            settings=load_settings(preset),
            progress=progress,
            executor=executor,
        )
        return builder.run()


def _summary(stats: dict, out: Path) -> str:
    lines = [
        f"{out}: {stats.get('questions', 0)} questions, instances {stats.get('instances', {})}",
        f"QA rejected: {stats['qa'].get('rejected', {})}",
        f"distractors accepted: {stats['contexts'].get('distractors_accepted', {})}, "
        f"rejected: {stats['contexts'].get('distractors_rejected', {})}",
        f"seconds per question: {stats.get('seconds_per_question', 0.0)}",
    ]
    return "\n".join(lines)


@dataset_app.command("stats")
def stats_cmd(
    out: Annotated[Path, typer.Argument(help="A build folder or instances.jsonl file.")],
) -> None:
    """Counts of a built dataset (instances, candidates, distractor types) plus stats.json."""
    from sciera.datasets.ssli.io import STATS_FILE, instance_stats, load_ssli, set_folder

    report = {"dataset": instance_stats(load_ssli(out))}
    folder = set_folder(out)
    if (folder / STATS_FILE).exists():
        report["build"] = json.loads((folder / STATS_FILE).read_text("utf-8"))
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False))


@dataset_app.command("inspect")
def inspect_cmd(
    out: Annotated[Path, typer.Argument(help="A build folder or instances.jsonl file.")],
    instance_id: Annotated[
        str, typer.Argument(help="Instance id, or a question id (all settings).")
    ],
    full: Annotated[bool, typer.Option("--full", help="Do not shorten passages.")] = False,
) -> None:
    """Print one question with its Base/SSLI candidates, like the paper's Figure 8."""
    from sciera.datasets.ssli.inspect import find_instances, format_instances
    from sciera.datasets.ssli.io import load_ssli
    from sciera.errors import ScieraError

    found = find_instances(load_ssli(out), instance_id)
    if not found:
        raise ScieraError(f"no instance or question {instance_id!r} in {out}")
    typer.echo(format_instances(found, None if full else 300))


@dataset_app.command("pack")
def pack_cmd(
    out: Annotated[Path, typer.Argument(help="A build folder or instances.jsonl file.")],
    packed: Annotated[Path, typer.Argument(help="Packed file to write (.jsonl or .jsonl.gz).")],
) -> None:
    """Write the set without the corpus's texts (distractors keep theirs), to share it."""
    from sciera.datasets.ssli.io import load_ssli
    from sciera.datasets.ssli.pack import write_packed

    n = write_packed(load_ssli(out), packed)
    typer.echo(f"{n} instances packed into {packed}")


@dataset_app.command("unpack")
def unpack_cmd(
    packed: Annotated[Path, typer.Argument(help="A file written by `sciera dataset pack`.")],
    corpus: SetCorpus,
    out: Annotated[Path, typer.Option("--out", help="Folder for instances.jsonl.")],
) -> None:
    """Restore the passage texts of a packed set from its corpus into OUT/instances.jsonl."""
    from sciera.corpus.store import PassageStore
    from sciera.datasets.ssli.io import load_ssli
    from sciera.datasets.ssli.pack import unpack_to
    from sciera.datasets.ssli.specificity import TopicIndex, check_set

    with PassageStore.open(corpus) as store:
        n = unpack_to(packed, store, out)
        data = check_set(load_ssli(out), TopicIndex.from_store(store), out, corpus=str(corpus))
    typer.echo(f"{n} instances written to {out / 'instances.jsonl'}")
    typer.echo(_specificity_line(data, out))


@dataset_app.command("inject")
def inject_cmd(
    out_set: Annotated[Path, typer.Argument(help="A build folder or instances.jsonl file.")],
    corpus: SetCorpus,
    out: Annotated[Path, typer.Option("--out", help="Folder for the corpus with distractors.")],
) -> None:
    """Copy CORPUS into OUT with every distractor of the set added as a document, so the
    first stage retrieves them as a user would meet them; the set's questions and qrels go
    to OUT/ssli (BEIR). Index OUT before searching it."""
    from sciera.datasets.ssli.inject import FOLDER, inject

    done = inject(out_set, corpus, out)
    how = f"a copy of {corpus}" if done.copied else "kept from an earlier run"
    typer.echo(
        f"{done.distractors} distractors of {done.questions} questions in {out} ({how}); "
        f"questions and qrels in {out / FOLDER}; next: sciera index --corpus {out}"
    )


@dataset_app.command("check")
def check_cmd(
    out: Annotated[Path, typer.Argument(help="A build folder or instances.jsonl file.")],
    corpus: SetCorpus,
    max_topic_share: Annotated[
        float,
        _topic_share(
            "Underspecified: more than this share of the corpus's documents contain every "
            "topic word of the question."
        ),
    ] = 0.005,
) -> None:
    """Judge whether each question names a subject that singles out its source, and write
    specificity.json next to the set (what `dataset.specific_only` in an experiment reads)."""
    from sciera.corpus.store import PassageStore
    from sciera.datasets.ssli.io import load_ssli, set_folder
    from sciera.datasets.ssli.specificity import TopicIndex, check_set

    instances = load_ssli(out)
    folder = set_folder(out)
    with PassageStore.open(corpus) as store:
        index = TopicIndex.from_store(store)
    data = check_set(instances, index, folder, corpus=str(corpus), max_share=max_topic_share)
    for qid, row in data["questions"].items():
        if not row["specific"]:
            words = " ".join(row["topic_words"]) or "-"
            typer.echo(f"underspecified {qid}: {row['question']} [{words}: {row['documents']}]")
    typer.echo(_specificity_line(data, folder))


def _specificity_line(data: dict, folder: Path) -> str:
    return (
        f"{data['specific']} specific, {data['underspecified']} underspecified questions "
        f"(more than {data['limit']:g} of {data['corpus_documents']} documents contain every "
        f"topic word) -> {folder / 'specificity.json'}"
    )


@dataset_app.command("multidoc")
def multidoc_cmd(
    queries: Annotated[
        Path,
        typer.Option(
            "--queries", help="BEIR folder, queries.jsonl, or a TSV of id<TAB>text (NFCorpus)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for the BEIR-format set.")],
    qrels: Annotated[
        Path | None,
        typer.Option("--qrels", help="BEIR or TREC qrels (default: QUERIES/qrels/SPLIT.tsv)."),
    ] = None,
    split: Annotated[str, typer.Option("--split", help="BEIR qrels split.")] = "test",
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="Ingested corpus: relevant documents it lacks are dropped."),
    ] = None,
    min_docs: Annotated[int, typer.Option("--min-docs", help="Fewest relevant documents.")] = 2,
    max_docs: Annotated[
        int | None, typer.Option("--max-docs", help="Most relevant documents (0: no limit).")
    ] = 10,
    min_grade: Annotated[int, typer.Option("--min-grade", help="Grade that counts relevant.")] = 1,
    limit: Annotated[int | None, typer.Option("--limit", help="A seeded sample of N.")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """A set of questions whose evidence is spread over several documents (for `research`)."""
    import shlex
    import sys

    from sciera.datasets.multidoc import MultiDocSpec, build_multidoc

    spec = MultiDocSpec(
        queries=queries,
        qrels=qrels,
        split=split,
        min_docs=min_docs,
        max_docs=max_docs or None,
        min_grade=min_grade,
        limit=limit,
        seed=seed,
        corpus=corpus,
    )
    built = build_multidoc(spec, out, shlex.join(["sciera", *sys.argv[1:]]))
    counts, rel = built["counts"], built["relevant_documents"]
    typer.echo(
        f"{counts['kept']} questions ({counts['eligible']} eligible of "
        f"{counts['judged_questions']} judged), {rel['total']} relevant documents "
        f"{rel['per_question']} -> {out}"
    )
