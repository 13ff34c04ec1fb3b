"""SciFact's claim format and prediction format: the records, read and checked field by field.

Gold claims (``claims_train.jsonl``)::

    {"id": 52, "claim": "...", "cited_doc_ids": [11, 15],
     "evidence": {"11": [{"sentences": [0, 1], "label": "SUPPORT"},
                         {"sentences": [11], "label": "SUPPORT"}],
                  "15": [{"sentences": [4], "label": "SUPPORT"}]}}

Predictions, one per claim::

    {"id": 52, "evidence": {"11": {"label": "SUPPORT", "sentences": [1, 11, 13]},
                            "16": {"label": "CONTRADICT", "sentences": [18, 20]}}}

A gold abstract (a key of ``evidence``) has one label and one or more rationale sets
(sentence indices into the abstract's sentence list); an abstract cited but without
evidence is NOT ENOUGH INFO. Ids are kept as strings. Malformed records raise
:class:`~sciera.errors.InputError` naming the source, the claim and the field. The
metrics over these records are :mod:`sciera.eval.metrics.scifact`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.errors import InputError
from sciera.types import CONFLICTING, CONTRADICT, NOT_ENOUGH_INFO, SUPPORT

NEI = NOT_ENOUGH_INFO
LABELS: tuple[str, ...] = (SUPPORT, CONTRADICT)
"""The labels a gold rationale set may carry; a prediction may also say :data:`NEI`."""

_NEI_NAMES = frozenset({"NOT_ENOUGH_INFO", "NOT ENOUGH INFO", "NEI", "NOTENOUGHINFO"})

# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GoldAbstract:
    """One gold evidence abstract of a claim: its label and its rationale sets."""

    label: str
    rationales: tuple[frozenset[int], ...]


@dataclass(frozen=True, slots=True)
class GoldClaim:
    """A SciFact claim with its gold evidence (doc id -> :class:`GoldAbstract`)."""

    id: str
    claim: str
    evidence: Mapping[str, GoldAbstract]
    cited_doc_ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The claim in SciFact's claim format (what :func:`parse_gold` reads back)."""
        return {
            "id": int(self.id) if self.id.isdigit() else self.id,
            "claim": self.claim,
            "evidence": {
                doc: [{"sentences": sorted(r), "label": g.label} for r in g.rationales]
                for doc, g in self.evidence.items()
            },
            "cited_doc_ids": [int(d) if d.isdigit() else d for d in self.cited_doc_ids],
        }

    def rationale_labels(self, doc_id: str, n_sentences: int) -> list[int]:
        """1 for each of ``doc_id``'s ``n_sentences`` sentences in one of its gold rationale
        sets, else 0 (all 0 for an abstract that is not evidence)."""
        gold = self.evidence.get(doc_id)
        rationale = set().union(*gold.rationales) if gold else set()
        return [int(i in rationale) for i in range(n_sentences)]

    @property
    def label(self) -> str:
        """The claim-level label: the one label of its evidence, :data:`NEI` without
        evidence, :data:`~sciera.types.CONFLICTING` when its abstracts disagree."""
        labels = {g.label for g in self.evidence.values()}
        if not labels:
            return NEI
        return labels.pop() if len(labels) == 1 else CONFLICTING


@dataclass(frozen=True, slots=True)
class AbstractPrediction:
    """A predicted label and rationale sentences (in rank order) for one abstract."""

    label: str
    sentences: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClaimPrediction:
    """The predictions for one claim: doc id -> :class:`AbstractPrediction`."""

    id: str
    evidence: Mapping[str, AbstractPrediction]

    def to_json(self) -> dict[str, Any]:
        """SciFact's prediction format (NEI predictions kept, labelled :data:`NEI`)."""
        return {
            "id": int(self.id) if self.id.isdigit() else self.id,
            "evidence": {
                doc: {"label": p.label, "sentences": list(p.sentences)}
                for doc, p in self.evidence.items()
            },
        }


# --- reading ---------------------------------------------------------------------------------


def _id(value: Any, source: str, line: int | str | None, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or str(value).strip() == "":
        raise InputError(source, line, field, f"expected a non-empty id, got {value!r}")
    return str(value).strip()


def _sentences(value: Any, source: str, line: int | str | None, field: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(source, line, field, f"expected a list of sentence indices, got {value!r}")
    for ix in value:
        if isinstance(ix, bool) or not isinstance(ix, int) or ix < 0:
            raise InputError(source, line, field, f"sentence index {ix!r} is not an integer >= 0")
    if len(set(value)) != len(value):
        raise InputError(source, line, field, f"sentence indices repeat: {list(value)}")
    return tuple(value)


def normalize_label(label: Any) -> str:
    """``SUPPORT``, ``CONTRADICT`` or :data:`NEI` (``NOT ENOUGH INFO``, also spelled
    ``NOT_ENOUGH_INFO`` or ``NEI``), case-insensitive; anything else raises ValueError."""
    text = str(label).strip().upper() if isinstance(label, str) else ""
    if text in LABELS:
        return text
    if text in _NEI_NAMES:
        return NEI
    raise ValueError(f"unknown label {label!r} (expected SUPPORT, CONTRADICT or NOT ENOUGH INFO)")


def parse_gold(
    record: Mapping[str, Any], source: str = "<gold>", line: int | str | None = None
) -> GoldClaim:
    """A :class:`GoldClaim` from a SciFact claim record (checked field by field)."""
    if not isinstance(record, Mapping):
        raise InputError(source, line, "record", f"expected a JSON object, got {record!r}")
    cid = _id(record.get("id"), source, line, "id")
    where = line if line is not None else f"claim {cid}"
    claim = record.get("claim", "")
    if not isinstance(claim, str):
        raise InputError(source, where, "claim", f"expected a string, got {claim!r}")
    raw_ev = record.get("evidence", {})
    if not isinstance(raw_ev, Mapping):
        raise InputError(source, where, "evidence", f"expected an object, got {raw_ev!r}")
    evidence: dict[str, GoldAbstract] = {}
    for raw_doc, sets in raw_ev.items():
        doc = _id(raw_doc, source, where, "evidence")
        field = f"evidence.{doc}"
        if isinstance(sets, (str, bytes)) or not isinstance(sets, Sequence) or not sets:
            raise InputError(source, where, field, "expected a non-empty list of rationale sets")
        labels: set[str] = set()
        rationales: list[frozenset[int]] = []
        seen: set[int] = set()
        for n, entry in enumerate(sets):
            if not isinstance(entry, Mapping):
                raise InputError(source, where, f"{field}[{n}]", f"expected an object: {entry!r}")
            label = entry.get("label")
            if label not in LABELS:
                raise InputError(
                    source, where, f"{field}[{n}].label", f"{label!r} is not SUPPORT or CONTRADICT"
                )
            labels.add(label)
            sents = _sentences(entry.get("sentences"), source, where, f"{field}[{n}].sentences")
            if not sents:
                raise InputError(source, where, f"{field}[{n}].sentences", "empty rationale set")
            if seen & set(sents):
                raise InputError(
                    source,
                    where,
                    f"{field}[{n}].sentences",
                    f"sentences {sorted(seen & set(sents))} are in two rationale sets",
                )
            seen |= set(sents)
            rationales.append(frozenset(sents))
        if len(labels) > 1:
            raise InputError(source, where, f"{field}.label", "its rationale sets disagree")
        evidence[doc] = GoldAbstract(labels.pop(), tuple(rationales))
    cited = record.get("cited_doc_ids", [])
    if isinstance(cited, (str, bytes)) or not isinstance(cited, Sequence):
        raise InputError(source, where, "cited_doc_ids", f"expected a list, got {cited!r}")
    cited_ids = tuple(_id(d, source, where, "cited_doc_ids") for d in cited)
    return GoldClaim(cid, claim, evidence, cited_ids)


def parse_prediction(
    record: Mapping[str, Any], source: str = "<predictions>", line: int | str | None = None
) -> ClaimPrediction:
    """A :class:`ClaimPrediction` from a record in SciFact's prediction format."""
    if not isinstance(record, Mapping):
        raise InputError(source, line, "record", f"expected a JSON object, got {record!r}")
    cid = _id(record.get("id"), source, line, "id")
    where = line if line is not None else f"claim {cid}"
    raw_ev = record.get("evidence", {})
    if not isinstance(raw_ev, Mapping):
        raise InputError(source, where, "evidence", f"expected an object, got {raw_ev!r}")
    evidence: dict[str, AbstractPrediction] = {}
    for raw_doc, pred in raw_ev.items():
        doc = _id(raw_doc, source, where, "evidence")
        field = f"evidence.{doc}"
        if doc in evidence:
            raise InputError(source, where, field, "the abstract is predicted twice")
        if not isinstance(pred, Mapping):
            raise InputError(source, where, field, f"expected an object, got {pred!r}")
        try:
            label = normalize_label(pred.get("label"))
        except ValueError as exc:
            raise InputError(source, where, f"{field}.label", str(exc)) from None
        sents = _sentences(pred.get("sentences", []), source, where, f"{field}.sentences")
        evidence[doc] = AbstractPrediction(label, sents)
    return ClaimPrediction(cid, evidence)


def _read_jsonl(path: str | Path) -> Iterable[tuple[int, Any]]:
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                yield n, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(str(path), n, "record", f"not valid JSON ({exc.msg})") from None


def read_gold(path: str | Path) -> list[GoldClaim]:
    """The claims of a SciFact claims file (JSONL), in file order; ids must be unique."""
    out = [parse_gold(rec, str(path), n) for n, rec in _read_jsonl(path)]
    _unique([c.id for c in out], str(path))
    return out


def read_predictions(path: str | Path) -> list[ClaimPrediction]:
    """The predictions of a file in SciFact's prediction format (JSONL)."""
    out = [parse_prediction(rec, str(path), n) for n, rec in _read_jsonl(path)]
    _unique([p.id for p in out], str(path))
    return out


def _unique(ids: Sequence[str], source: str) -> None:
    seen: set[str] = set()
    for cid in ids:
        if cid in seen:
            raise InputError(source, f"claim {cid}", "id", "the claim appears more than once")
        seen.add(cid)
