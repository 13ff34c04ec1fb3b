"""An SSLI set's distractors as documents of a corpus: the SSLI setting as a user meets it.

SSLI experiments rank candidate pools (each question's gold passage, first-stage negatives
and its distractors, as listed). A user meets distractors otherwise: they sit in the corpus,
the first stage retrieves them itself, and a reranker that reads the first stage's ranks
(the fused cross-encoder, DeepEra) sees them where the first stage put them. :func:`inject`
builds that corpus: a copy of the corpus the set was built from, with every distractor of
the set added as a document of its own (id ``ssli_<question>_<n>``, no title), and beside
it, as a BEIR folder (``OUT/ssli``), the set's questions that have distractors and their
gold passages' documents as qrels, for ``sciera eval retrieval`` and
``benchmarks/experiments/ssli_scifact_injected.yaml``. The copy is indexed like any corpus.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sciera.types import QAInstance

PREFIX = "ssli_"  # the document id prefix of a distractor in an injected corpus
FOLDER = "ssli"  # OUT/ssli: the distractors, questions and qrels as a BEIR folder


def distractor_doc_id(passage_id: str) -> str:
    """``ssli:<question>:<n>`` (a distractor's passage id in a set) -> ``ssli_<question>_<n>``."""
    return PREFIX + passage_id.removeprefix("ssli:").replace(":", "_").replace("#", "_")


def is_distractor(doc_id: str) -> bool:
    return doc_id.startswith(PREFIX)


@dataclass(frozen=True)
class Questions:
    """The SSLI-setting questions with at least one distractor, by question id (the
    instance id without ``/ssli``): text, gold documents; and every distractor's text by
    its document id."""

    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    distractors: dict[str, str]


def questions(instances: Iterable[QAInstance]) -> Questions:
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    docs: dict[str, str] = {}
    for inst in instances:
        found = [c for c in inst.candidates if c.is_distractor]
        if inst.setting != "ssli" or not found:
            continue
        qid = inst.id.removesuffix("/ssli")
        queries[qid] = inst.question
        qrels[qid] = {p.split("#", 1)[0]: 1 for p in inst.gold_passage_ids}
        for c in found:
            docs[distractor_doc_id(c.passage_id)] = c.text
    return Questions(queries, qrels, docs)


def write_beir(folder: Path, qs: Questions) -> Path:
    """``folder`` as a BEIR folder: the distractors (corpus.jsonl), the questions
    (queries.jsonl) and their gold documents (qrels/test.tsv)."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    rows = {
        "corpus.jsonl": [{"_id": d, "title": "", "text": t} for d, t in qs.distractors.items()],
        "queries.jsonl": [{"_id": q, "text": t} for q, t in qs.queries.items()],
    }
    for name, records in rows.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (folder / name).write_text(text, encoding="utf-8")
    judged = sorted((q, d) for q, docs in qs.qrels.items() for d in docs)
    tsv = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in judged)
    (folder / "qrels" / "test.tsv").write_text(tsv, encoding="utf-8")
    return folder


@dataclass(frozen=True)
class Injected:
    out: Path
    questions: int
    distractors: int
    copied: bool  # False: OUT already held the copy (a rerun adds only what is missing)


def inject(set_path: str | Path, corpus: str | Path, out: str | Path) -> Injected:
    """Copy ``corpus``'s passage store into ``out`` (once; a rerun keeps it) and ingest the
    distractors of the SSLI set at ``set_path`` into it; write ``out/ssli`` (BEIR)."""
    from sciera.corpus import ingest
    from sciera.datasets.ssli.io import load_ssli
    from sciera.errors import ScieraError

    corpus, out = Path(corpus), Path(out)
    qs = questions(load_ssli(set_path))
    if not qs.queries:
        raise ScieraError(f"{set_path}: no SSLI-setting question with a distractor")
    store = corpus / "store.sqlite"
    if not store.is_file():
        raise ScieraError(f"{corpus}: no store.sqlite here (ingest the corpus first)")
    if out.resolve() == corpus.resolve():
        raise ScieraError(f"{out}: the corpus itself; give another folder")
    copied = not (out / "store.sqlite").exists()
    if copied:
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / "store.sqlite.tmp"
        tmp.unlink(missing_ok=True)
        with sqlite3.connect(store) as src, sqlite3.connect(tmp) as dst:
            src.backup(dst)  # consistent even while another process reads the corpus
        tmp.replace(out / "store.sqlite")
    ingest(write_beir(out / FOLDER, qs), out, format="beir")
    return Injected(out, len(qs.queries), len(qs.distractors), copied)
