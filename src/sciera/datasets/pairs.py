"""Labelled (claim, evidence, label) pairs from every collection, each behind one loader.

    from sciera.datasets.pairs import load_pairs
    train = load_pairs("healthver", "../shared/data/healthver", split="train")

Every loader gives :class:`LabelledPair` records whose ``label`` is one of
:data:`~sciera.types.VERDICT_LABELS` and whose ``split`` is decided here, by the loader,
never by its caller:

- ``healthver``: ``healthver_dev.csv`` is train, ``healthver_test.csv`` is dev;
  Supports / Refutes / Neutral -> SUPPORT / CONTRADICT / NOT ENOUGH INFO; the passage is the
  evidence, split into sentences.
- ``covidfact``: SUPPORTED / REFUTED; the evidence sentences as given; grouped by
  ``gold_source``, so a refuted counter-claim lands in the fold of the claim it was written
  from; a source is dev when its hash bucket is below :data:`COVIDFACT_DEV_SHARE`.
- ``evidence_inference``: each valid annotation (``Valid Label`` and ``Valid Reasoning``
  true) gives three claims from its prompt (:func:`ei_claims`): "<I> significantly
  increases <O> compared with <C>.", the same with "decreases", and "There is no
  significant difference between <I> and <C> in <O>."; the one the annotated direction
  states is SUPPORT, the other two CONTRADICT. The annotated span is the evidence (all of
  its sentences the rationale). Splits by PMC article: ``splits/train_article_ids.txt``
  train, ``validation`` dev, ``test`` **lockbox**.
- ``bioasq``: the yes/no questions, kept as questions (``form="question"``); yes ->
  SUPPORT, no -> CONTRADICT; the snippets are the evidence. Batches 7B and 8B are train,
  9B dev; any other batch is an error (later batches are kept for independent checks).
- ``scifact``: ``claims_train.jsonl`` with ``corpus_sentences.jsonl``: one pair per cited
  abstract (its label, or NOT ENOUGH INFO; the rationale sentence indices where known).
  About 15% of the claims, chosen by a SHA-256 hash of the claim id
  (:func:`scifact_lockbox`), are the **lockbox**: no training, calibration or choice may
  see them; the rest is train (dev folds are carved from it by claim, as before).

Folds by hash (:func:`bucket`) are stable across runs, machines and Python versions. A bad
record is an :class:`~sciera.errors.InputError` naming file, record and field.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.corpus.sentences import split_sentences
from sciera.datasets.bioasq import BATCH_SPLITS
from sciera.datasets.bioasq import _label as _yesno
from sciera.datasets.claims import read_gold
from sciera.errors import InputError, ScieraError
from sciera.types import CONTRADICT, NOT_ENOUGH_INFO, SUPPORT

SPLITS = ("train", "dev", "lockbox")
"""What a pair's ``split`` may be; ``lockbox`` pairs are for reported numbers only."""
FORMS = ("claim", "question")
SCIFACT_LOCKBOX_SHARE = 0.15
COVIDFACT_DEV_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class LabelledPair:
    """A claim (or yes/no question) with evidence sentences and a verdict label."""

    id: str
    claim: str
    evidence: tuple[str, ...]
    label: str  # one of sciera.types.VERDICT_LABELS
    source: str  # the collection (a key of PAIR_LOADERS)
    group: str  # pairs of one group always share a split (article, source, claim)
    split: str  # one of SPLITS
    form: str = "claim"  # or "question"
    rationale: tuple[int, ...] | None = None  # indices into evidence, where known


def bucket(key: str, salt: str) -> float:
    """A number in [0, 1) from SHA-256 of ``salt:key``: the same on every run and machine."""
    digest = hashlib.sha256(f"{salt}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def scifact_lockbox(claim_id: str | int) -> bool:
    """Whether a SciFact training claim is in the lockbox fold (about 15%, by claim id)."""
    return bucket(str(claim_id).strip(), "scifact-lockbox") < SCIFACT_LOCKBOX_SHARE


def _sentences(text: str) -> tuple[str, ...]:
    text = re.sub(r"\s+", " ", text).strip()
    return tuple(split_sentences(text)) or (text,)


def _text(file: str, where: str, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(file, where, field, f"missing or empty: {value!r}")
    return re.sub(r"\s+", " ", value).strip()


def _file(folder: Path, name: str) -> Path:
    path = Path(folder) / name
    if not path.is_file():
        raise ScieraError(f"{path}: no such file (the collection's folder is {folder})")
    return path


def _csv_rows(path: Path, needed: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in needed if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(str(path), 1, missing[0], "no such column")
        for row in reader:
            yield reader.line_num, row


# --- HealthVer -------------------------------------------------------------------------------

_HEALTHVER = {"supports": SUPPORT, "refutes": CONTRADICT, "neutral": NOT_ENOUGH_INFO}


def load_healthver(path: Path) -> list[LabelledPair]:
    """HealthVer: ``healthver_dev.csv`` as train, ``healthver_test.csv`` as dev."""
    out: list[LabelledPair] = []
    for name, split in (("healthver_dev.csv", "train"), ("healthver_test.csv", "dev")):
        file = _file(path, name)
        for line, row in _csv_rows(file, ("id", "evidence", "claim", "label")):
            where = f"line {line} (id {row.get('id')})"
            label = _HEALTHVER.get(str(row.get("label") or "").strip().lower())
            if label is None:
                problem = f"not Supports/Refutes/Neutral: {row.get('label')!r}"
                raise InputError(str(file), where, "label", problem)
            claim = _text(str(file), where, "claim", row.get("claim"))
            evidence = _sentences(_text(str(file), where, "evidence", row.get("evidence")))
            rid = _text(str(file), where, "id", row.get("id"))
            group = f"claim:{claim.lower()}"
            pair = LabelledPair(rid, claim, evidence, label, "healthver", group, split)
            out.append(pair)
    return out


# --- COVID-Fact ------------------------------------------------------------------------------

_COVIDFACT = {"SUPPORTED": SUPPORT, "REFUTED": CONTRADICT}


def _jsonl(file: Path) -> Iterator[tuple[int, Any]]:
    with open(file, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(str(file), n, "record", f"not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise InputError(str(file), n, "record", "expected a JSON object")
            yield n, record


def load_covidfact(path: Path) -> list[LabelledPair]:
    """COVID-Fact: folds by ``gold_source`` (a counter-claim stays with its original)."""
    file = _file(path, "COVIDFACT_dataset.jsonl")
    out: list[LabelledPair] = []
    for line, rec in _jsonl(file):
        label = _COVIDFACT.get(rec.get("label"))  # type: ignore[arg-type]
        if label is None:
            raise InputError(
                str(file), line, "label", f"not SUPPORTED/REFUTED: {rec.get('label')!r}"
            )
        claim = _text(str(file), str(line), "claim", rec.get("claim"))
        raw = rec.get("evidence")
        if not isinstance(raw, list) or not raw:
            raise InputError(str(file), line, "evidence", "expected a non-empty list of sentences")
        evidence = tuple(
            _text(str(file), str(line), f"evidence[{i}]", s) for i, s in enumerate(raw)
        )
        source = _text(str(file), str(line), "gold_source", rec.get("gold_source"))
        split = "dev" if bucket(source, "covidfact-dev") < COVIDFACT_DEV_SHARE else "train"
        out.append(
            LabelledPair(str(line), claim, evidence, label, "covidfact", f"source:{source}", split)
        )
    return out


# --- Evidence Inference ----------------------------------------------------------------------

_EI_LABELS = {
    "significantly increased": "increased",
    "significantly increase": "increased",  # 687 of the v2 annotations spell it so
    "significantly decreased": "decreased",
    "no significant difference": "no difference",
}
_EI_SPLITS = (("train", "train"), ("validation", "dev"), ("test", "lockbox"))


def ei_claims(intervention: str, comparator: str, outcome: str) -> dict[str, str]:
    """The three claims a prompt gives, by the direction each states."""
    versus = f"compared with {comparator}."
    return {
        "increased": f"{intervention} significantly increases {outcome} {versus}",
        "decreased": f"{intervention} significantly decreases {outcome} {versus}",
        "no difference": (
            f"There is no significant difference between {intervention} and {comparator}"
            f" in {outcome}."
        ),
    }


def _ei_prompts(file: Path) -> dict[str, tuple[str, str, str]]:
    prompts: dict[str, tuple[str, str, str]] = {}
    needed = ("PromptID", "Intervention", "Comparator", "Outcome")
    for line, row in _csv_rows(file, needed):
        where = f"line {line} (prompt {row.get('PromptID')})"
        pid = _text(str(file), where, "PromptID", row.get("PromptID"))
        i, c, o = (_text(str(file), where, f, row.get(f)) for f in needed[1:])
        prompts[pid] = (i, c, o)
    return prompts


def _ei_split_of(folder: Path) -> dict[str, str]:
    split_of: dict[str, str] = {}
    for name, split in _EI_SPLITS:
        file = _file(folder, f"splits/{name}_article_ids.txt")
        for n, raw in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            pmcid = raw.strip()
            if pmcid and split_of.setdefault(pmcid, split) != split:
                raise InputError(str(file), n, "PMCID", f"{pmcid} is also in {split_of[pmcid]}")
    return split_of


def load_evidence_inference(path: Path) -> list[LabelledPair]:
    """Evidence Inference 2.0 valid annotations as claims, both polarities (module doc)."""
    folder = Path(path)
    prompts = _ei_prompts(_file(folder, "prompts_merged.csv"))
    split_of = _ei_split_of(folder)
    file = _file(folder, "v2_annotations.csv")
    needed = ("PromptID", "PMCID", "Label", "Annotations", "Valid Label", "Valid Reasoning")
    out: list[LabelledPair] = []
    for line, row in _csv_rows(file, needed):
        where = f"line {line} (prompt {row.get('PromptID')})"
        if row.get("Valid Label") != "True" or row.get("Valid Reasoning") != "True":
            continue
        direction = _EI_LABELS.get(str(row.get("Label") or "").strip().lower())
        if direction is None:
            raise InputError(str(file), where, "Label", f"unknown label {row.get('Label')!r}")
        pid = str(row.get("PromptID") or "").strip()
        if pid not in prompts:
            raise InputError(str(file), where, "PromptID", "not in prompts_merged.csv")
        pmcid = _text(str(file), where, "PMCID", row.get("PMCID"))
        if pmcid not in split_of:
            raise InputError(str(file), where, "PMCID", f"{pmcid} is in no splits/ file")
        evidence = _sentences(_text(str(file), where, "Annotations", row.get("Annotations")))
        rationale = tuple(range(len(evidence)))
        for stated, claim in ei_claims(*prompts[pid]).items():
            label = SUPPORT if stated == direction else CONTRADICT
            rid = f"{line}:{stated.replace(' ', '_')}"
            out.append(
                LabelledPair(
                    rid,
                    claim,
                    evidence,
                    label,
                    "evidence_inference",
                    f"pmc:{pmcid}",
                    split_of[pmcid],
                    rationale=rationale,
                )
            )
    return out


# --- BioASQ ----------------------------------------------------------------------------------


def _snippet_texts(file: str, where: str, raw: Any) -> tuple[str, ...]:
    """The snippets' texts, whitespace collapsed, each once, in order (7B1 lists one
    snippet twice under the same offsets, once with a newline and once with a space)."""
    if not isinstance(raw, list) or not raw:
        raise InputError(file, where, "snippets", "expected a non-empty list")
    texts: dict[str, None] = {}
    for n, snippet in enumerate(raw):
        if not isinstance(snippet, dict):
            raise InputError(file, where, f"snippets[{n}]", "expected an object")
        texts.setdefault(_text(file, where, f"snippets[{n}].text", snippet.get("text")))
    return tuple(texts)


def load_bioasq_pairs(path: Path) -> list[LabelledPair]:
    """BioASQ yes/no questions with their snippets: 7B and 8B train, 9B dev."""
    file = _file(path, "training_7b_9b.json")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(str(file), None, "file", f"not valid JSON ({exc})") from None
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list):
        raise InputError(str(file), None, "questions", "expected an object with a questions list")
    out: list[LabelledPair] = []
    for i, q in enumerate(questions):
        if not isinstance(q, dict):
            raise InputError(str(file), f"question {i}", "record", "expected an object")
        if q.get("type") != "yesno":
            continue
        qid = _text(str(file), f"question {i}", "id", q.get("id"))
        where = f"question {qid}"
        batch = str(q.get("batch") or "")
        split = BATCH_SPLITS.get(batch[:2])
        if split is None:
            raise InputError(str(file), where, "batch", f"{batch!r} is not a 7B, 8B or 9B batch")
        answer = _yesno(q.get("exact_answer"))
        if answer is None:
            raise InputError(
                str(file), where, "exact_answer", f"not yes or no: {q.get('exact_answer')!r}"
            )
        body = _text(str(file), where, "body", q.get("body"))
        evidence = _snippet_texts(str(file), where, q.get("snippets"))
        label = SUPPORT if answer == "yes" else CONTRADICT
        out.append(
            LabelledPair(qid, body, evidence, label, "bioasq", f"question:{qid}", split, "question")
        )
    return out


# --- SciFact ---------------------------------------------------------------------------------


def load_scifact_pairs(path: Path) -> list[LabelledPair]:
    """SciFact training claims, one pair per cited abstract; the lockbox by claim id."""
    claims_file = _file(path, "claims_train.jsonl")
    corpus = _file(path, "corpus_sentences.jsonl")
    abstracts: dict[str, tuple[str, ...]] = {}
    for line, rec in _jsonl(corpus):
        sentences = rec.get("abstract")
        if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
            raise InputError(str(corpus), line, "abstract", "expected a list of sentences")
        abstracts[str(rec.get("doc_id"))] = tuple(s.strip() for s in sentences)
    out: list[LabelledPair] = []
    for c in read_gold(claims_file):
        split = "lockbox" if scifact_lockbox(c.id) else "train"
        claim = _text(str(claims_file), f"claim {c.id}", "claim", c.claim)
        for doc in c.cited_doc_ids:
            if doc not in abstracts:
                raise InputError(
                    str(claims_file), f"claim {c.id}", "cited_doc_ids", f"{doc} is not in {corpus}"
                )
            gold = c.evidence.get(doc)
            label = gold.label if gold else NOT_ENOUGH_INFO
            rationale = tuple(sorted(set().union(*gold.rationales))) if gold else ()
            if rationale and rationale[-1] >= len(abstracts[doc]):
                raise InputError(
                    str(claims_file),
                    f"claim {c.id}",
                    f"evidence.{doc}.sentences",
                    "past the end of the abstract",
                )
            out.append(
                LabelledPair(
                    f"{c.id}:{doc}",
                    claim,
                    abstracts[doc],
                    label,
                    "scifact",
                    f"claim:{c.id}",
                    split,
                    rationale=rationale,
                )
            )
    return out


# --- one entry point -------------------------------------------------------------------------

PAIR_LOADERS: dict[str, Callable[[Path], list[LabelledPair]]] = {
    "healthver": load_healthver,
    "covidfact": load_covidfact,
    "evidence_inference": load_evidence_inference,
    "bioasq": load_bioasq_pairs,
    "scifact": load_scifact_pairs,
}
"""Collection name -> loader of its folder (the folder names of ``../shared/data``)."""


def load_pairs(source: str, path: str | Path, split: str | None = None) -> list[LabelledPair]:
    """The labelled pairs of collection ``source`` in folder ``path``, in file order; only
    those of ``split`` (``train``, ``dev`` or ``lockbox``) when given."""
    loader = PAIR_LOADERS.get(source)
    if loader is None:
        raise ScieraError(f"unknown collection {source!r} (one of {', '.join(PAIR_LOADERS)})")
    if split is not None and split not in SPLITS:
        raise ScieraError(f"unknown split {split!r} (one of {', '.join(SPLITS)})")
    pairs = loader(Path(path))
    return [p for p in pairs if split is None or p.split == split]
