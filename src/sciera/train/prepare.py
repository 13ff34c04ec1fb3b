"""From a corpus and training judgments to checked training and dev records: the steps
every ``sciera train`` command shares.

Split guard -> dev split (whole queries, seeded) -> hard negatives mined by the first stage
(resumable, cached in the work folder) -> labelled records -> the guard checks every query
and every abstract that made it in once more, so nothing forbidden can slip through a later
change of the code above.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sciera.executor import Executor
from sciera.settings import Settings
from sciera.train.data import TrainQuery, build_queries, mine_candidates, passage_texts
from sciera.train.splits import SplitGuard, dev_split

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class DataSpec:
    """Where the training data comes from and how it is split."""

    corpus: str | Path
    queries: str | Path
    qrels: str | Path
    retriever: str = "hybrid"
    depth: int = 30
    dev_fraction: float = 0.12
    exclude_qrels: Sequence[str | Path] = ()
    exclude_ssli: Sequence[str | Path] = ()
    max_queries: int | None = None  # train on the first N training queries (smoke runs)
    seed: int = 0
    synthetic: int = 0  # passages the LLM writes a synthetic training query for
    synthetic_style: str = "claim"
    synthetic_keep_top: int = 3
    ssli_negatives: Sequence[str | Path] = ()  # SSLI sets built from training-side abstracts
    spliced_negatives: int = 0  # per training query, cut from its gold passage (no LLM)
    # held-out abstracts the LLM writes a question for, to calibrate on (never trained on)
    calibration_questions: int = 0
    # one question of each style per calibration abstract (synthetic.STYLES)
    calibration_styles: tuple[str, ...] = ("question",)
    # abstracts never a calibration question's source besides the training gold (a model
    # soup's ingredients trained on more than its labels: their synthetic and SSLI sources)
    calibration_banned: tuple[str, ...] = ()
    # where the synthetic queries are written (None: here, else in shards on its workers);
    # how, not what: not in run_key
    executor: Executor | None = None

    def __post_init__(self) -> None:
        from sciera.train.synthetic import STYLES

        if self.synthetic_style not in STYLES:
            raise ValueError(
                f"synthetic style must be one of {', '.join(STYLES)}, got {self.synthetic_style!r}"
            )
        if self.synthetic < 0 or self.synthetic_keep_top < 1:
            raise ValueError("synthetic must be >= 0 and synthetic_keep_top >= 1")
        if self.spliced_negatives < 0:
            raise ValueError(f"spliced negatives must be >= 0, got {self.spliced_negatives}")
        bad = [s for s in self.calibration_styles if s not in STYLES]
        if (
            bad
            or not self.calibration_styles
            or len(set(self.calibration_styles)) < len(self.calibration_styles)
        ):
            raise ValueError(
                f"calibration styles must be distinct, from {', '.join(STYLES)}; got "
                f"{', '.join(self.calibration_styles) or 'none'}"
            )
        if self.calibration_questions < 0:
            raise ValueError(
                f"calibration questions must be >= 0, got {self.calibration_questions}"
            )


@dataclass
class Prepared:
    train: list[TrainQuery]
    dev: list[TrainQuery]
    texts: dict[str, str]
    fingerprint: str
    guard: SplitGuard
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    synthetic: dict[str, Any] | None = None
    ssli_negatives: list[dict[str, Any]] | None = None
    spliced_negatives: dict[str, Any] | None = None
    # question-style dev records the calibrators are also fitted on (never trained on)
    calibration: list[TrainQuery] = field(default_factory=list)
    calibration_card: dict[str, Any] | None = None

    def card_data(self, spec: DataSpec) -> dict[str, Any]:
        """The card's ``data`` section."""
        return {
            "corpus": str(spec.corpus),
            "store_fingerprint": self.fingerprint,
            "queries": str(spec.queries),
            "qrels": str(spec.qrels),
            "train_queries": len(self.train),
            "train_groups": sum(len(r.positives) for r in self.train),
            "dev_queries": len(self.dev),
            "dev_qids": [r.qid for r in self.dev],
            **({"max_queries": spec.max_queries} if spec.max_queries is not None else {}),
            "negatives_from": f"{spec.retriever} top-{spec.depth} documents (Max-P) minus gold",
            "skipped": self.skipped,
            **({"synthetic": self.synthetic} if self.synthetic else {}),
            **({"ssli_negatives": self.ssli_negatives} if self.ssli_negatives else {}),
            **({"spliced_negatives": self.spliced_negatives} if self.spliced_negatives else {}),
            **({"calibration_questions": self.calibration_card} if self.calibration_card else {}),
        }


def prepare(
    spec: DataSpec, settings: Settings, work: Path, progress: Progress | None = None
) -> Prepared:
    from sciera.corpus import load_beir_queries, load_qrels

    queries = load_beir_queries(spec.queries)
    qrels = load_qrels(spec.qrels)
    guard = SplitGuard.for_training(
        spec.qrels, queries, exclude_qrels=spec.exclude_qrels, exclude_ssli=spec.exclude_ssli
    )
    train_ids, dev_ids = dev_split([q for q in qrels if q in queries], spec.dev_fraction, spec.seed)
    if spec.max_queries is not None:
        train_ids = train_ids[: spec.max_queries]
        dev_ids = dev_ids[: max(1, spec.max_queries // 4)]
    synthetic_card: dict[str, Any] | None = None
    dev_gold = {d for q in dev_ids for d, g in qrels[q].items() if g > 0}
    ssli = None
    if spec.ssli_negatives:
        from sciera.train import ssli_negatives

        ssli = ssli_negatives.load(spec.ssli_negatives, guard)
        # a question on a dev query's gold abstract would teach the dev answer: left out
        keep = [q for q in ssli.queries if not set(ssli.qrels[q]) & dev_gold]
        ssli.sources.append({"left_out_dev_gold_abstract": len(ssli.queries) - len(keep)})
        queries = {**queries, **{q: ssli.queries[q] for q in keep}}
        qrels = {**qrels, **{q: ssli.qrels[q] for q in keep}}
        train_ids = [*train_ids, *sorted(keep)]
    if spec.synthetic > 0:
        syn_q, syn_qrels, synthetic_card = synthetic_queries(
            spec, settings, guard, dev_gold, work, progress
        )
        queries = {**queries, **syn_q}
        qrels = {**qrels, **syn_qrels}
        train_ids = [*train_ids, *sorted(syn_q)]
    cal_ids: list[str] = []
    cal_card: dict[str, Any] | None = None
    if spec.calibration_questions > 0:
        from sciera.train import calibration_questions

        train_gold = {d for q in train_ids for d, g in qrels[q].items() if g > 0}
        train_gold |= set(spec.calibration_banned)
        cal_q, cal_qrels, cal_card = calibration_questions.write(
            spec, settings, guard, dev_gold, train_gold, work, progress
        )
        queries = {**queries, **cal_q}
        qrels = {**qrels, **cal_qrels}
        cal_ids = sorted(cal_q)
    mined = mine_candidates(
        spec.corpus,
        {q: queries[q] for q in (*train_ids, *dev_ids, *cal_ids)},
        settings=settings,
        retriever=spec.retriever,
        depth=spec.depth,
        cache=work / "mined.jsonl",
        progress=progress,
    )
    fingerprint, train, dev, calibration, texts, skips = _records(
        spec.corpus, queries, qrels, (train_ids, dev_ids, cal_ids), mined, guard
    )
    if ssli is not None:
        train = [replace(r, hard=ssli.hard[r.qid]) if r.qid in ssli.hard else r for r in train]
        texts.update(ssli.texts)
    spliced_card = None
    if spec.spliced_negatives:
        from sciera.train import spliced_negatives

        spliced = spliced_negatives.make(train, texts, spec.spliced_negatives, spec.seed)
        train, spliced_card = spliced.train, spliced.card
        texts.update(spliced.texts)
    _check(guard, (*train, *dev, *calibration))
    ssli_card = ssli.sources if ssli is not None else None
    return Prepared(
        train, dev, texts, fingerprint, guard, skips, synthetic_card, ssli_card, spliced_card,
        calibration, cal_card,
    )  # fmt: skip


def _records(
    corpus: str | Path,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    ids: tuple[list[str], list[str], list[str]],
    mined: Any,
    guard: SplitGuard,
) -> tuple[str, list[TrainQuery], list[TrainQuery], list[TrainQuery], dict[str, str], dict]:
    """The labelled train, dev and calibration records of the ``ids``, the texts of their
    passages, the store's fingerprint and what was left out of each."""
    from sciera.corpus import PassageStore

    train_ids, dev_ids, cal_ids = ids
    with PassageStore.open(corpus) as store:
        fingerprint = store.fingerprint()
        train, skipped = build_queries(
            store, queries, {q: qrels[q] for q in train_ids}, mined, guard
        )
        dev, dev_skipped = build_queries(
            store, queries, {q: qrels[q] for q in dev_ids}, mined, guard
        )
        calibration, cal_skipped = build_queries(
            store, queries, {q: qrels[q] for q in cal_ids}, mined, guard
        )
        texts = passage_texts(store, [*train, *dev, *calibration])
    skips = {"train": skipped, "dev": dev_skipped}
    if cal_ids:
        skips["calibration"] = cal_skipped
    return fingerprint, train, dev, calibration, texts, skips


def _check(guard: SplitGuard, records: Sequence[TrainQuery]) -> None:
    """The guard once more over every query and abstract that made it in."""
    for rec in records:
        guard.check_query(rec.qid, rec.text)
    guard.check_docs(
        pid.split("#", 1)[0]
        for rec in records
        for pid in (*rec.positives, *(c for c, _ in rec.candidates))
    )


def synthetic_queries(
    spec: DataSpec,
    settings: Settings,
    guard: SplitGuard,
    dev_gold: set[str],
    work: Path,
    progress: Progress | None,
) -> tuple[dict[str, str], dict[str, dict[str, int]], dict[str, Any]]:
    """LLM-written training queries for ``spec.synthetic`` allowed abstracts (never a dev
    query's or an evaluation query's gold abstract), consistency-filtered by the first
    stage; (queries, qrels, card section)."""
    from sciera.corpus import PassageStore
    from sciera.llm.registry import make_llm
    from sciera.train import synthetic

    llm = make_llm(settings)
    with PassageStore.open(spec.corpus) as store:
        sources = synthetic.pick_sources(
            store, guard.allowed_docs, dev_gold | guard.judged_docs, spec.synthetic, spec.seed
        )
        if spec.executor is None:  # the first stage is opened here only when it runs here
            made = synthetic.generate_here(
                llm,
                store,
                sources,
                settings,
                corpus=spec.corpus,
                retriever=spec.retriever,
                cache=work / "synthetic.jsonl",
                style=spec.synthetic_style,
                keep_top=spec.synthetic_keep_top,
                progress=progress,
            )
    if spec.executor is not None:
        done = synthetic.generate_sharded(
            spec.executor,
            settings,
            spec.corpus,
            spec.retriever,
            synthetic.filter_depth(settings, spec.synthetic_keep_top),
            sources,
            key=synthetic.generation_key(llm, spec.synthetic_style),
            cache=work / "synthetic.jsonl",
            style=spec.synthetic_style,
            keep_top=spec.synthetic_keep_top,
            progress=progress,
        )
        made = synthetic.assemble(done, sources, spec.synthetic_keep_top)
    queries, qrels = synthetic.as_training(made)
    card = {
        **synthetic.card_section(
            made, len(sources), llm, spec.synthetic_style, spec.synthetic_keep_top
        ),
        "source_rank": synthetic.rank_histogram(made),
    }
    return queries, qrels, card


def model_dir_for(out: str, settings: Settings) -> Path:
    """A bare name goes under ``SCIERA_HOME/models/``; anything path-like is a path."""
    if "/" in out or out.startswith("."):
        return Path(out)
    return Path(settings.home) / "models" / out


TRAINING_STATE = ("checkpoint", "checkpoint.tmp", "best", "state.json", "card.json")


# DataSpec fields that shape the calibrators or where work runs, never the training data
_NOT_TRAINING = ("executor", "calibration_questions", "calibration_styles", "calibration_banned")


def run_key(config: dict[str, Any], spec: DataSpec) -> str:
    """What a training run's epochs depend on: its hyperparameters and data (the time
    budget aside, so a run cut short by its budget resumes with a larger one; calibration
    questions aside, as they only shape the calibrators fitted after the last epoch)."""
    import hashlib
    import json
    from dataclasses import fields

    conf = {k: v for k, v in config.items() if k != "time_budget_minutes"}
    # field by field (not asdict: that would deep-copy the executor); the same JSON
    data = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name not in _NOT_TRAINING}
    blob = json.dumps({"config": conf, "data": data}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def open_work(
    out: str, settings: Settings, overwrite: bool, key: str | None = None
) -> tuple[Path, Path]:
    """(model folder, work folder): the work folder holds everything a rerun resumes from.

    Epoch checkpoints are resumed only by a run with the same ``key`` that has not finished
    yet; a finished run (its card written) or a changed configuration trains anew. Mined
    negatives stay: their cache is keyed by the corpus and the first stage."""
    import json
    import shutil

    from sciera.errors import ScieraError

    model_dir = model_dir_for(out, settings)
    if model_dir.exists() and not overwrite:
        raise ScieraError(f"{model_dir} exists; pass --overwrite to replace it")
    work = model_dir.with_name(model_dir.name + ".work")
    work.mkdir(parents=True, exist_ok=True)
    if key is None:
        return model_dir, work
    marker = work / "run.json"
    recorded = json.loads(marker.read_text())["key"] if marker.is_file() else None
    finished = (work / "card.json").exists()
    if finished or (recorded is not None and recorded != key):
        for name in TRAINING_STATE:
            path = work / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    marker.write_text(json.dumps({"key": key}) + "\n")
    return model_dir, work


def base_card(
    *,
    name: str,
    kind: str,
    base: str,
    command: str | None,
    config: dict[str, Any],
    spec: DataSpec,
    data: Prepared,
    state: Any,
    started: float,
) -> dict[str, Any]:
    """The card fields every trained model has (the trainer adds its own)."""
    import shlex
    import sys
    import time
    from dataclasses import asdict

    from sciera.artifacts.card import versions

    return {
        "name": name,
        "kind": kind,
        "base": base,
        **continued_from(base),
        "command": command or shlex.join(["sciera", *sys.argv[1:]]),
        "config": {
            **config,
            "retriever": spec.retriever,
            "depth": spec.depth,
            "dev_fraction": spec.dev_fraction,
            "calibration_questions": spec.calibration_questions,
            "calibration_styles": list(spec.calibration_styles),
        },
        "data": data.card_data(spec),
        "splits": data.guard.describe(),
        "epochs": [asdict(e) for e in state.epochs],
        "best_epoch": state.best_epoch,
        "train_seconds": state.seconds,
        "wall_seconds": time.monotonic() - started,
        "versions": versions(),
    }


def continued_from(base: str) -> dict[str, Any]:
    """``{"continued_from": ...}`` when ``base`` is a folder holding a sciera model card: the
    model trained on from, with the command that made it (and its own start, if any)."""
    from sciera.artifacts.card import read_card

    prev = read_card(base) if Path(base).is_dir() else None
    if prev is None:
        return {}
    start = {
        "name": prev["name"],
        "what": f"{base}: a {prev['kind']} trained by sciera from {prev['base']}",
        "command": prev["command"],
    }
    if prev.get("continued_from"):
        start["continued_from"] = prev["continued_from"]
    return {"continued_from": start}


def install(
    model_dir: Path, work: Path, card: dict[str, Any], save: Callable[[Path], None]
) -> None:
    """Write the model (``save`` into a temporary folder), its card and, last, its manifest
    (every file with its sha256, checked before first use), then swap it in, so a crash
    never leaves a half-written model folder under the model's name."""
    import json
    import shutil

    from sciera.artifacts.card import write_card
    from sciera.artifacts.manifest import write_manifest
    from sciera.train.calibration_questions import bundle

    tmp = model_dir.with_name(model_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save(tmp)
    write_card(tmp, card)
    bundle(tmp, work, card)  # the questions the calibrators saw travel with the model
    write_manifest(tmp)
    if model_dir.exists():
        shutil.rmtree(model_dir)
    tmp.rename(model_dir)
    (work / "card.json").write_text(json.dumps(card, indent=1) + "\n")
