"""The dataset registry: a type name (``"beir"``, ``"ssli"``, ``"pubmedqa"``) -> loader.

Every loader returns one :class:`EvalDataset`, the form the experiment runner reads:

- ``queries`` and ``qrels`` always; qrels are per *document* for BEIR collections
  (``unit="document"``: passage rankings are scored through Max-P) and per
  *candidate passage* for SSLI and PubMedQA (``unit="passage"``);
- ``candidates``: a fixed candidate pool per question (SSLI, PubMedQA), used by the
  ``candidates`` first stage instead of searching a corpus;
- ``answers``: reference answers for answer metrics and judges;
- ``distractors`` and ``settings`` (``"base"`` / ``"ssli"``, or ``"all"``).

``load_dataset(type, path, split=..., limit=..., seed=...)`` also draws a seeded
subset: ``limit`` questions sampled with ``random.Random(seed)`` from the sorted ids.
"""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from sciera.errors import InputError, ScieraError
from sciera.types import Candidate, Passage, QAInstance

Unit = Literal["document", "passage"]


@dataclass(frozen=True, slots=True)
class EvalDataset:
    """Questions with their judgments (and, where the format has them, answers and pools)."""

    name: str
    unit: Unit
    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]
    answers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    candidates: Mapping[str, tuple[Passage, ...]] = field(default_factory=dict)
    distractors: Mapping[str, frozenset[str]] = field(default_factory=dict)
    settings: Mapping[str, str] = field(default_factory=dict)

    @property
    def qids(self) -> list[str]:
        return list(self.queries)

    @property
    def has_candidates(self) -> bool:
        return bool(self.candidates)

    def setting(self, qid: str) -> str:
        return self.settings.get(qid, "all")

    def subset(self, qids: list[str]) -> EvalDataset:
        keep = set(qids)

        def pick(m: Mapping) -> dict:
            return {q: v for q, v in m.items() if q in keep}

        return replace(
            self,
            queries={q: self.queries[q] for q in qids},
            qrels=pick(self.qrels),
            answers=pick(self.answers),
            candidates=pick(self.candidates),
            distractors=pick(self.distractors),
            settings=pick(self.settings),
        )


def from_instances(name: str, instances: list[QAInstance]) -> EvalDataset:
    """An :class:`EvalDataset` over QAInstances (SSLI format, Figure 8 of DeepEra)."""
    queries, qrels, answers, cands, distractors, settings = {}, {}, {}, {}, {}, {}
    for inst in instances:
        queries[inst.id] = inst.question
        qrels[inst.id] = {pid: 1 for pid in inst.gold_passage_ids}
        answers[inst.id] = (inst.answer,) if inst.answer else ()
        cands[inst.id] = tuple(
            Passage(c.passage_id, c.passage_id.rpartition("#")[0] or c.passage_id, i, "", c.text)
            for i, c in enumerate(inst.candidates)
        )
        distractors[inst.id] = frozenset(c.passage_id for c in inst.candidates if c.is_distractor)
        settings[inst.id] = inst.setting
    return EvalDataset(name, "passage", queries, qrels, answers, cands, distractors, settings)


def _candidate(path: Path, line: int, i: int, raw: object) -> Candidate:
    if not isinstance(raw, Mapping):
        raise InputError(str(path), line, f"candidates[{i}]", "expected an object")
    pid, text = raw.get("passage_id"), raw.get("text")
    if not isinstance(pid, str) or not pid or not isinstance(text, str):
        raise InputError(str(path), line, f"candidates[{i}]", "needs passage_id and text strings")
    return Candidate(
        pid, text, bool(raw.get("is_distractor", False)), str(raw.get("distractor_type") or "")
    )


def read_qa_instances(path: str | Path) -> list[QAInstance]:
    """QAInstances from SSLI JSONL: one ``{id, question, answer, gold_passage_ids, setting,
    candidates: [{passage_id, text, is_distractor, distractor_type}], provenance}`` a line."""
    path = Path(path)
    if not path.is_file():
        raise ScieraError(f"{path}: no such file")
    out: list[QAInstance] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for line, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                rec = json.loads(text)
            except ValueError as exc:
                raise InputError(str(path), line, "record", f"invalid JSON: {exc}") from None
            if not isinstance(rec, dict):
                raise InputError(str(path), line, "record", "expected a JSON object")
            for key in ("id", "question", "setting"):
                if not isinstance(rec.get(key), str) or not rec[key].strip():
                    raise InputError(str(path), line, key, "missing or not a string")
            if rec["id"] in seen:
                raise InputError(str(path), line, "id", f"duplicate id {rec['id']!r}")
            seen.add(rec["id"])
            gold, cands = rec.get("gold_passage_ids"), rec.get("candidates")
            if not isinstance(gold, list) or not gold:
                raise InputError(str(path), line, "gold_passage_ids", "expected a non-empty list")
            if not isinstance(cands, list) or not cands:
                raise InputError(str(path), line, "candidates", "expected a non-empty list")
            candidates = tuple(_candidate(path, line, i, c) for i, c in enumerate(cands))
            ids = {c.passage_id for c in candidates}
            if missing := [g for g in gold if g not in ids]:
                raise InputError(str(path), line, "gold_passage_ids", f"not candidates: {missing}")
            out.append(
                QAInstance(
                    id=rec["id"],
                    question=rec["question"],
                    answer=str(rec.get("answer") or ""),
                    gold_passage_ids=tuple(gold),
                    setting=rec["setting"],
                    candidates=candidates,
                    provenance=rec.get("provenance") or {},
                )
            )
    return out


def load_ssli(path: Path, *, split: str | None = None) -> EvalDataset:
    """An SSLI JSONL file; ``split`` keeps one setting (``base`` / ``ssli``), None keeps both."""
    instances = read_qa_instances(path)
    if split is not None:
        instances = [i for i in instances if i.setting == split]
    return from_instances(Path(path).stem, instances)


Loader = Callable[..., EvalDataset]

DATASET_LOADERS: dict[str, str] = {
    "beir": "sciera.datasets.beir:load_beir",
    "ssli": "sciera.datasets.loaders:load_ssli",
    "pubmedqa": "sciera.datasets.pubmedqa:load_pubmedqa",
}
"""Dataset type -> ``module:function`` (imported when used)."""


def dataset_loader(kind: str) -> Loader:
    try:
        target = DATASET_LOADERS[kind]
    except KeyError:
        raise ScieraError(
            f"unknown dataset type {kind!r}; choose one of {sorted(DATASET_LOADERS)}"
        ) from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def seeded_subset(qids: list[str], limit: int | None, seed: int) -> list[str]:
    """``limit`` ids drawn with ``random.Random(seed)`` from the sorted ids, kept sorted."""
    ordered = sorted(qids)
    if limit is None or limit >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, limit))


def load_dataset(
    kind: str,
    path: str | Path,
    *,
    split: str | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> EvalDataset:
    """Load a dataset by type; ``limit`` questions (seeded sample), judged ones only."""
    data = dataset_loader(kind)(Path(path), split=split)
    judged = [q for q in data.queries if q in data.qrels]
    return data.subset(seeded_subset(judged, limit, seed))
