"""Packed SSLI sets: the builder's own output without the corpus's texts.

An SSLI set repeats the text of every candidate passage, so most of ``instances.jsonl``
is the source corpus (a 100-question SciFact set holds 1,789 of its abstracts). A packed
set keeps the text of the distractors only, which the builder wrote; every other
candidate keeps its passage id, and :func:`unpack` reads its text back from the ingested
corpus (``Passage.contents``, the text the builder stored). Questions, answers and
provenance stay as they are. Pack, then unpack against the same corpus, gives the same
``instances.jsonl`` byte for byte; a passage the corpus lacks is an error naming the
packed file, line and candidate.

    sciera dataset pack OUT set.packed.jsonl.gz
    sciera dataset unpack set.packed.jsonl.gz --corpus corpora/scifact --out OUT
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sciera.datasets.ssli.io import (
    INSTANCES_FILE,
    instance_from_dict,
    instance_to_dict,
    iter_jsonl,
    write_instances,
)
from sciera.errors import InputError
from sciera.types import QAInstance


def packed_record(inst: QAInstance) -> dict[str, Any]:
    """The instance as a dict whose non-distractor candidates have no ``text``."""
    record = instance_to_dict(inst)
    for cand in record["candidates"]:
        if not cand["is_distractor"]:
            del cand["text"]
    return record


def write_packed(instances: Iterable[QAInstance], path: str | Path) -> int:
    """Write the packed set (gzip if the name ends in ``.gz``), atomically; the count."""
    return write_instances(instances, path, to_record=packed_record)


def _needs_text(cand: Any) -> bool:
    """A packed candidate whose text is the corpus's."""
    return isinstance(cand, dict) and not cand.get("is_distractor") and "text" not in cand


def unpack(path: str | Path, store: Any) -> list[QAInstance]:
    """The instances of a packed file, texts read from ``store`` (a PassageStore)."""
    records = list(iter_jsonl(path))
    if not records:  # a truncated download or the wrong file: do not write an empty set
        raise InputError(str(path), None, "instances", "the file holds no instance")
    wanted = sorted(
        {
            c.get("passage_id")
            for _, rec in records
            for c in rec.get("candidates") or []
            if _needs_text(c)
        }
        - {None}
    )
    texts = {pid: p.contents for pid, p in store.find_passages(wanted).items()}
    out = []
    for line, rec in records:
        for n, cand in enumerate(rec.get("candidates") or []):
            if _needs_text(cand):
                pid = cand.get("passage_id")
                if pid not in texts:
                    raise InputError(
                        str(path),
                        line,
                        f"candidates[{n}].passage_id",
                        f"{pid!r} is not in the corpus (unpack against the corpus the set "
                        "was built from)",
                    )
                cand["text"] = texts[pid]
        out.append(instance_from_dict(rec, str(path), line))
    return out


def unpack_to(path: str | Path, store: Any, out_dir: str | Path) -> int:
    """Unpack into ``out_dir/instances.jsonl`` (loadable by ``sciera eval run``)."""
    instances = unpack(path, store)  # every error before anything is written
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return write_instances(instances, out_dir / INSTANCES_FILE)
