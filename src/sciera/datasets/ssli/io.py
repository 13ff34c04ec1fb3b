"""SSLI instances on disk (``instances.jsonl``), append-only checkpoints, the stats report.

One instance per line, keys in the order ``id, question, answer, gold_passage_ids,
setting, candidates, provenance``; candidates as ``{passage_id, text, is_distractor,
distractor_type}``. JSON is written compactly with ``ensure_ascii=False``, so
write -> :func:`read_instances` -> write reproduces the file byte for byte.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from sciera.errors import InputError, ScieraError
from sciera.types import Candidate, QAInstance, to_plain

INSTANCES_FILE = "instances.jsonl"
STATS_FILE = "stats.json"
_KEYS = ("id", "question", "answer", "gold_passage_ids", "setting", "candidates")
_CAND_KEYS = ("passage_id", "text", "is_distractor", "distractor_type")


def instance_to_dict(inst: QAInstance) -> dict[str, Any]:
    return {
        "id": inst.id,
        "question": inst.question,
        "answer": inst.answer,
        "gold_passage_ids": list(inst.gold_passage_ids),
        "setting": inst.setting,
        "candidates": [
            {
                "passage_id": c.passage_id,
                "text": c.text,
                "is_distractor": c.is_distractor,
                "distractor_type": c.distractor_type,
            }
            for c in inst.candidates
        ],
        "provenance": to_plain(inst.provenance),
    }


def dumps(record: Mapping[str, Any]) -> str:
    """The one JSON line format used for instances and checkpoints."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _field(path: str, line: int, record: Mapping[str, Any], key: str, kind: type) -> Any:
    if key not in record:
        raise InputError(path, line, key, "missing")
    value = record[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise InputError(path, line, key, f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def instance_from_dict(
    record: Mapping[str, Any], path: str = "<dict>", line: int = 0
) -> QAInstance:
    """Parse one record, naming file, line and field on bad input."""
    for key in _KEYS:
        kind = list if key in ("gold_passage_ids", "candidates") else str
        _field(path, line, record, key, kind)
    candidates = []
    for n, cand in enumerate(record["candidates"]):
        where = f"candidates[{n}]"
        if not isinstance(cand, Mapping):
            raise InputError(path, line, where, "expected an object")
        for key in _CAND_KEYS:
            kind = bool if key == "is_distractor" else str
            try:
                _field(path, line, cand, key, kind)
            except InputError as exc:
                raise InputError(path, line, f"{where}.{key}", exc.problem) from None
        candidates.append(Candidate(**{k: cand[k] for k in _CAND_KEYS}))
    gold = record["gold_passage_ids"]
    if not all(isinstance(g, str) for g in gold):
        raise InputError(path, line, "gold_passage_ids", "expected a list of strings")
    provenance = record.get("provenance", {})
    if not isinstance(provenance, Mapping):
        raise InputError(path, line, "provenance", "expected an object")
    return QAInstance(
        id=record["id"],
        question=record["question"],
        answer=record["answer"],
        gold_passage_ids=tuple(gold),
        setting=record["setting"],
        candidates=tuple(candidates),
        provenance=provenance,
    )


def write_instances(
    instances: Iterable[QAInstance],
    path: str | Path,
    to_record: Callable[[QAInstance], Mapping[str, Any]] = instance_to_dict,
) -> int:
    """Write ``instances`` to ``path`` (replacing it atomically, gzip if the name ends in
    ``.gz``), one ``to_record`` line each; returns the count."""
    path = Path(path)
    tmp = path.with_name(".tmp-" + path.name)  # same suffix: compressed like the target
    n = 0
    with open_text(tmp, "w") as out:
        for inst in instances:
            out.write(dumps(to_record(inst)) + "\n")
            n += 1
    os.replace(tmp, path)
    return n


def open_text(path: str | Path, mode: str = "r") -> IO[str]:
    """A UTF-8 text file, through gzip when its name ends in ``.gz``."""
    path = Path(path)
    newline = None if mode == "r" else "\n"  # read any line ending, write "\n"
    if path.name.endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8", newline=newline)
    return path.open(mode, encoding="utf-8", newline=newline)


def _lines(src: IO[str], path: str | Path) -> Iterator[tuple[int, str]]:
    try:
        yield from enumerate(src, start=1)
    except (gzip.BadGzipFile, EOFError, UnicodeDecodeError) as exc:
        raise InputError(str(path), None, "file", f"unreadable: {exc}") from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; a bad line raises InputError.
    A name ending in ``.gz`` is read through gzip."""
    with open_text(path) as src:
        for n, line in _lines(src, path):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise InputError(str(path), n, "line", f"invalid JSON: {exc}") from None
            if not isinstance(value, dict):
                raise InputError(str(path), n, "line", "expected a JSON object")
            yield n, value


def read_instances(path: str | Path) -> list[QAInstance]:
    """Every instance of an ``instances.jsonl`` file, in file order."""
    return [instance_from_dict(rec, str(path), n) for n, rec in iter_jsonl(path)]


def question_of(qid: str, setting: str | None) -> str:
    """The question an instance id asks: ``"Q/ssli"`` -> ``"Q"``; other ids as they are."""
    suffix = f"/{setting}"
    return qid[: -len(suffix)] if setting and qid.endswith(suffix) else qid


def set_folder(path: str | Path) -> Path:
    """The folder of an SSLI set given as that folder or as its instances file."""
    path = Path(path)
    return path if path.is_dir() else path.parent


def load_ssli(path: str | Path, setting: str | None = None) -> list[QAInstance]:
    """Load an SSLI dataset: an ``instances.jsonl`` file or a build folder holding one.

    ``setting`` ("base", "ssli") keeps only that setting's instances.
    """
    path = Path(path)
    if path.is_dir():
        path = path / INSTANCES_FILE
    if not path.is_file():
        raise InputError(str(path), None, "path", "no SSLI instances file here")
    instances = read_instances(path)
    return [i for i in instances if setting is None or i.setting == setting]


class JsonlLog:
    """An append-only JSONL checkpoint: each record is one line, flushed and fsynced.

    A line cut short by a crash (no trailing newline) is dropped on open, so the next
    append starts on a clean line.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: list[dict[str, Any]] = []
        if self.path.exists():
            self._repair()
            self.records = [rec for _, rec in iter_jsonl(self.path)]

    def _repair(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with self.path.open("r+b") as f:
                f.truncate(cut)

    def append(self, record: Mapping[str, Any]) -> None:
        line = dumps(record) + "\n"
        with self.path.open("a", encoding="utf-8", newline="\n") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())
        self.records.append(json.loads(line))


def instance_stats(instances: Iterable[QAInstance]) -> dict[str, Any]:
    """Counts over a loaded dataset: instances per setting, candidates, distractor types."""
    per_setting: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    sizes: Counter[int] = Counter()
    questions: set[str] = set()
    gold_missing = 0
    for inst in instances:
        per_setting[inst.setting] += 1
        sizes[len(inst.candidates)] += 1
        questions.add(inst.question)
        ids = {c.passage_id for c in inst.candidates}
        gold_missing += not set(inst.gold_passage_ids) <= ids
        for c in inst.candidates:
            if c.is_distractor:
                kinds[c.distractor_type or "unspecified"] += 1
    return {
        "instances": sum(per_setting.values()),
        "questions": len(questions),
        "per_setting": dict(sorted(per_setting.items())),
        "candidates_per_instance": {str(k): v for k, v in sorted(sizes.items())},
        "distractor_types": dict(sorted(kinds.items())),
        "instances_missing_gold": gold_missing,
    }


def ssli_gold_docs(path: str | Path) -> set[str]:
    """Document ids of the gold passages of an SSLI set (build folder, instances file, or
    packed ``.jsonl.gz``): the abstracts its questions were written from."""
    path = Path(path)
    if path.is_dir():
        packed = sorted(path.glob("instances*.jsonl*"))
        path = path / INSTANCES_FILE if (path / INSTANCES_FILE).exists() else (packed or [path])[0]
    if not path.is_file():
        raise ScieraError(f"{path}: no SSLI instances file (instances.jsonl or a packed set)")
    docs: set[str] = set()
    for line, rec in iter_jsonl(path):
        gold = rec.get("gold_passage_ids")
        if not isinstance(gold, list) or not gold:
            raise InputError(str(path), line, "gold_passage_ids", "missing or empty")
        docs.update(str(pid).split("#", 1)[0] for pid in gold)
    return docs
