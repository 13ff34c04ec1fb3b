"""The results directory of an experiment: manifest, dataset snapshot, per-repeat outputs.

Everything a report needs is in the directory (judgments included), so
``sciera eval report`` never reloads the dataset. A packed (committed) directory holds
``dataset.json.gz`` and ``results.jsonl.gz`` instead, read the same way
(:mod:`sciera.eval.resultlog`), and none of the :data:`DERIVED` files, which
:func:`restore_outputs` writes back from the logs.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.datasets.loaders import EvalDataset
from sciera.errors import ScieraError
from sciera.eval.experiment import Experiment
from sciera.eval.resultlog import gz_path, pack, read_log, read_text, stored

FORMAT = 1
VERIFIER_TAG = "verifier:"
"""Where a pipeline's identity names its verifier's files (results recorded before had
none: they are not resumed with a verify stage, whose model may have changed since)."""
DERIVED = ("run.trec", "first_stage.trec", "answers.jsonl", "traces.jsonl")
"""A repeat's files that :func:`write_repeat_outputs` makes from its ``results.jsonl``."""


def dump_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)


def _shared_spec(exp: Experiment) -> dict[str, Any]:
    """What every pipeline's results depend on: the spec minus pipelines, repeats, corpus and
    metrics (the report scores the stored records; a resumed run may name other metrics,
    which then score the same records without running anything again)."""
    return exp.model_dump(mode="json", exclude={"repeats", "pipelines", "corpus", "metrics"})


def _pipeline_specs(exp: Experiment) -> dict[str, dict[str, Any]]:
    """What each pipeline's results depend on beyond the shared spec: its own stages, and
    the corpus unless it ranks the dataset's candidate pools."""
    corpus = exp.model_dump(mode="json", include={"corpus"})["corpus"]
    return {
        p.name: {
            **p.model_dump(mode="json"),
            "corpus": corpus if p.retriever != "candidates" else None,
        }
        for p in exp.pipelines
    }


def fingerprint(exp: Experiment) -> str:
    """Hash of the shared spec: equal for experiments whose results can share a directory."""
    canonical = json.dumps(_shared_spec(exp), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _stored(out: Path, manifest: dict[str, Any]) -> Experiment:
    try:
        return Experiment.model_validate(manifest.get("experiment", {}))
    except ValueError:  # pydantic's ValidationError: written by an incompatible version
        raise ScieraError(
            f"{out}: holds results this version cannot read back; choose another --out"
        ) from None


def _check_resumable(out: Path, stored: Experiment, exp: Experiment) -> None:
    """A results directory takes the same experiment again, or the same one with pipelines
    added; a pipeline already there must be unchanged (its results were made by it)."""
    old, new = _shared_spec(stored), _shared_spec(exp)
    if old != new:
        keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        raise ScieraError(
            f"{out}: holds results of a different experiment ({stored.name!r}, other "
            f"{', '.join(keys)}); choose another --out"
        )
    before, now = _pipeline_specs(stored), _pipeline_specs(exp)
    for i, p in enumerate(exp.pipelines):
        if p.name in before and before[p.name] != now[p.name]:
            raise ScieraError(
                f"pipelines[{i}] ({p.name}): differs from the pipeline of that name whose "
                f"results are in {out}; give it another name, or choose another --out"
            )


def prepare_results_dir(
    out: Path,
    exp: Experiment,
    data: EvalDataset,
    plan: Mapping[str, int],
    identities: Mapping[str, str] | None = None,
    subcorpus: Mapping[str, Any] | None = None,
) -> None:
    """Create or reopen ``out`` for ``exp``, whose pipelines load the models ``identities``
    names (checked against the repeats already there) and search the sub-corpus
    ``subcorpus`` records (:meth:`sciera.eval.subcorpus.SubCorpus.record`: kind, size, seed
    and a hash of its ids; a resumed run refuses another). Pipelines of an earlier run that
    ``exp`` no longer lists stay in the manifest (their results are kept and reported)."""
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    spec = exp.model_dump(mode="json")
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        stored = _stored(out, manifest)
        _check_resumable(out, stored, exp)
        if identities is not None:
            _check_identities(out, exp, manifest, identities)
        _check_subcorpus(out, manifest.get("subcorpus"), subcorpus)
        listed = {p["name"]: p for p in spec["pipelines"]}
        before = manifest["experiment"]["pipelines"]
        kept = [p for p in before if p["name"] not in listed]
        # the directory's order stays (the report's default baseline is its first pipeline);
        # pipelines new to it come last
        spec["pipelines"] = [listed.pop(p["name"], p) for p in before] + list(listed.values())
        plan = {**plan, **{p["name"]: manifest.get("plan", {}).get(p["name"], 0) for p in kept}}
    else:
        manifest = {"format": FORMAT, "created": time.time(), "repeats": {}}
    manifest["fingerprint"] = fingerprint(exp)
    manifest["experiment"] = spec
    manifest["plan"] = dict(plan)
    manifest["dataset"] = {"name": data.name, "unit": data.unit, "questions": len(data.queries)}
    if subcorpus is not None:
        manifest["subcorpus"] = dict(subcorpus)
    manifest["updated"] = time.time()
    dump_json(manifest_path, manifest)
    snapshot = {
        "name": data.name,
        "unit": data.unit,
        "queries": dict(data.queries),
        "qrels": {q: dict(v) for q, v in data.qrels.items()},
        "answers": {q: list(v) for q, v in data.answers.items()},
        "labels": dict(data.labels),
        "distractors": {q: sorted(v) for q, v in data.distractors.items()},
        "settings": dict(data.settings),
    }
    if data.claims:  # the SciFact metrics' gold (only where present: older snapshots stay)
        snapshot["claims"] = {q: g.to_json() for q, g in data.claims.items()}
    dump_json(out / "dataset.json", snapshot)
    gz_path(out / "dataset.json").unlink(missing_ok=True)  # a packed folder's, now stale


def _check_subcorpus(
    out: Path, stored: Mapping[str, Any] | None, now: Mapping[str, Any] | None
) -> None:
    """Refuse to resume over results searched in another sub-corpus (or none)."""
    if (stored or None) != (dict(now) if now is not None else None):

        def show(r: Mapping[str, Any] | None) -> str:
            return "the whole corpus" if r is None else f"{r['size']} documents ({r['ids'][:12]})"

        raise ScieraError(
            f"{out}: dataset.subcorpus: its results searched {show(stored)}, this run "
            f"{show(now)}; choose another --out"
        )


def _check_identities(
    out: Path, exp: Experiment, manifest: Mapping[str, Any], identities: Mapping[str, str]
) -> None:
    """Refuse to resume a pipeline whose repeats were made by other model files than the
    ones its stages load now (a model retrained or replaced under the same name); repeats
    recorded without an identity (older versions) are taken as they are."""
    repeats = manifest.get("repeats", {})
    for i, p in enumerate(exp.pipelines):
        stored = {r.get("identity") for r in repeats.get(p.name, {}).values()} - {None}
        if stored and stored != {identities[p.name]}:
            raise ScieraError(
                f"pipelines[{i}] ({p.name}): the model it loads changed since its results in "
                f"{out} were made ({', '.join(sorted(stored))} -> {identities[p.name]}); give "
                "it another name, or choose another --out"
            )


def mark_repeat_done(
    out: Path, pipeline: str, repeat: int, seed: int, model: str, identity: str | None = None
) -> None:
    """Record a finished repeat: its seed, LLM and the identity of the models its stages
    loaded (None: unknown, because earlier runs made some of it; a recorded one is kept)."""
    path = out / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    done = manifest.setdefault("repeats", {}).setdefault(pipeline, {})
    known = done.get(str(repeat), {}).get("identity")
    done[str(repeat)] = {"seed": seed, "llm": model, "finished": time.time()}
    if identity is not None or known is not None:
        done[str(repeat)]["identity"] = identity if identity is not None else known
    manifest["updated"] = time.time()
    dump_json(path, manifest)


def _run_dict(pairs: list[list[Any]]) -> dict[str, float]:
    return {str(i): float(s) for i, s in pairs}


def final_run(records: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{qid: {id: score}}`` of the final ranking (reranked if there is a reranker)."""
    return {q: _run_dict(r.get("reranked", r["first"])) for q, r in records.items()}


def first_run(records: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    return {q: _run_dict(r["first"]) for q, r in records.items()}


def write_repeat_outputs(
    folder: Path,
    pipeline: str,
    repeat: int,
    records: Mapping[str, Mapping[str, Any]],
    data: EvalDataset,
) -> None:
    """(Re)write run.trec, first_stage.trec, answers.jsonl and traces.jsonl from the log
    (a packed copy of a file written, now stale, is removed)."""
    from sciera.eval.retrieval import write_trec_run

    ordered = {q: records[q] for q in data.queries if q in records}
    tag = f"{pipeline}-r{repeat}"
    write_trec_run(folder / "run.trec", final_run(ordered), tag)
    write_trec_run(folder / "first_stage.trec", first_run(ordered), f"{tag}-first")
    for name, key in (("answers.jsonl", "answer"), ("traces.jsonl", "trace")):
        rows = [{"qid": q, key: r[key]} for q, r in ordered.items() if r.get(key) is not None]
        if key == "answer":
            for row in rows:
                row["judges"] = ordered[row["qid"]].get("judges", {})
        path = folder / name
        if rows:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(
                "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8"
            )
            tmp.replace(path)
    for name in DERIVED:
        if (folder / name).is_file():
            gz_path(folder / name).unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class Results:
    """A results directory read back: manifest, dataset snapshot, per-repeat records."""

    root: Path
    manifest: dict[str, Any]
    dataset: dict[str, Any]
    records: dict[str, dict[int, dict[str, dict[str, Any]]]]  # pipeline -> repeat -> qid -> rec

    @property
    def pipelines(self) -> list[str]:
        return [p["name"] for p in self.manifest["experiment"]["pipelines"]]

    @property
    def metrics(self) -> list[str]:
        return list(self.manifest["experiment"]["metrics"])

    def pipeline_spec(self, name: str) -> dict[str, Any]:
        return next(p for p in self.manifest["experiment"]["pipelines"] if p["name"] == name)


def load_results(root: str | Path) -> Results:
    root = Path(root)
    if not (root / "manifest.json").is_file():
        raise ScieraError(f"{root}: not a results directory (no manifest.json)")
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    dataset = json.loads(read_text(root / "dataset.json"))
    records: dict[str, dict[int, dict[str, dict[str, Any]]]] = {}
    for p in manifest["experiment"]["pipelines"]:
        folder = root / "runs" / p["name"]
        reps: dict[int, dict[str, dict[str, Any]]] = {}
        for r in range(int(manifest.get("plan", {}).get(p["name"], 0))):
            log = read_log(folder / f"r{r}" / "results.jsonl")
            if log:
                reps[r] = log
        records[p["name"]] = reps
    return Results(root, manifest, dataset, records)


def snapshot_dataset(results: Results) -> EvalDataset:
    """The questions and judgments of a results directory's dataset snapshot (what
    :func:`write_repeat_outputs` and the metrics read; no candidate pools)."""
    d = results.dataset
    return EvalDataset(
        name=d["name"],
        unit=d["unit"],
        queries=d["queries"],
        qrels=d["qrels"],
        answers={q: tuple(v) for q, v in d.get("answers", {}).items()},
        distractors={q: frozenset(v) for q, v in d.get("distractors", {}).items()},
        settings=d.get("settings", {}),
        labels=d.get("labels", {}),
    )


def restore_outputs(root: str | Path) -> list[Path]:
    """Write every repeat's :data:`DERIVED` files back from its (packed or plain) log, as
    the run wrote them, except those kept packed (what the log would not give back);
    returns the files written."""
    import shutil
    import tempfile

    results = load_results(root)
    data = snapshot_dataset(results)
    written = []
    for pipeline, reps in results.records.items():
        for r, records in reps.items():
            folder = results.root / "runs" / pipeline / f"r{r}"
            with tempfile.TemporaryDirectory() as tmp:
                write_repeat_outputs(Path(tmp), pipeline, r, records, data)
                for name in DERIVED:
                    made = Path(tmp) / name
                    if made.is_file() and not gz_path(folder / name).exists():
                        shutil.move(made, folder / name)
                        written.append(folder / name)
    return written


def pack_results_dir(root: str | Path) -> dict[str, list[Path]]:
    """Make a results directory fit a repository: gzip ``dataset.json`` and each
    repeat's ``results.jsonl`` (:func:`~sciera.eval.resultlog.pack`), and remove the
    :data:`DERIVED` files that :func:`restore_outputs` writes back byte for byte (any
    that it would not is gzipped instead). Re-packing a packed directory changes nothing.
    Returns ``{"packed": [...], "removed": [...]}``."""
    import tempfile

    results = load_results(root)
    data = snapshot_dataset(results)
    done: dict[str, list[Path]] = {"packed": [], "removed": []}
    for pipeline, reps in results.records.items():
        for r, records in reps.items():
            folder = results.root / "runs" / pipeline / f"r{r}"
            with tempfile.TemporaryDirectory() as tmp:
                write_repeat_outputs(Path(tmp), pipeline, r, records, data)
                for name in DERIVED:
                    kept, again = folder / name, Path(tmp) / name
                    if not kept.is_file():
                        continue
                    if again.is_file() and again.read_bytes() == kept.read_bytes():
                        kept.unlink()
                        done["removed"].append(kept)
                    else:
                        done["packed"].append(pack(kept))
            if (folder / "results.jsonl").is_file():
                done["packed"].append(pack(folder / "results.jsonl"))
    if (results.root / "dataset.json").is_file():
        done["packed"].append(pack(results.root / "dataset.json"))
    return done


def ranking_file(folder: str | Path) -> Path | None:
    """Where a repeat's final ranking can be read: its log ``results.jsonl`` (or
    ``.gz``), else its ``run.trec``; None if it has neither."""
    folder = Path(folder)
    for path in (stored(folder / "results.jsonl"), folder / "run.trec"):
        if path.is_file():
            return path
    return None


def read_ranking(path: str | Path) -> dict[str, dict[str, float]]:
    """``{qid: {id: score}}`` of a :func:`ranking_file`: the final ranking of each logged
    question, or the TREC run as written."""
    from sciera.eval.retrieval import read_trec_run

    path = Path(path)
    if path.name.startswith("results.jsonl"):
        return final_run(read_log(path))
    return read_trec_run(path)
