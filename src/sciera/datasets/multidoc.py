"""Question sets whose evidence is spread over several documents (``sciera dataset
multidoc``), for judging multi-step retrieval such as the research agent.

From a judged collection (queries + qrels: a BEIR folder, or a TREC qrels file with a
``queries.jsonl`` or ``id<TAB>text`` queries file) keep the questions that have between
``min_docs`` and ``max_docs`` relevant documents (grade >= ``min_grade``). With
``corpus``, a relevant document the ingested corpus does not hold is dropped first, so
every kept judgment can be retrieved. ``limit`` draws a seeded sample. The questions are
asked as the collection words them (SciFact claims stay claims).

The result is a BEIR folder an experiment reads as ``dataset: {type: beir, path: OUT}``:
``queries.jsonl``, ``qrels/test.tsv`` (only the kept relevant documents, graded as given)
and ``construction.json``, which records the sources (paths and sha256), the rule, every
count (questions seen, kept, and dropped by reason) and how many relevant documents the
kept questions have.

    build_multidoc(MultiDocSpec(queries=Path("../shared/data/scifact")), Path("sets/sf-multi"))
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError

SPLIT = "test"  # the qrels split name written (BEIR's default)


@dataclass(frozen=True, slots=True)
class MultiDocSpec:
    queries: Path  # a BEIR folder, a queries.jsonl, or a TSV of id<TAB>text
    qrels: Path | None = None  # default: the BEIR folder's qrels/<split>.tsv
    split: str = "test"
    min_docs: int = 2
    max_docs: int | None = 10
    min_grade: int = 1
    limit: int | None = None
    seed: int = 0
    corpus: Path | None = None  # ingested corpus: relevant documents it lacks are dropped

    def __post_init__(self) -> None:
        if self.min_docs < 1:
            raise ScieraError(f"--min-docs must be at least 1, got {self.min_docs}")
        if self.max_docs is not None and self.max_docs < self.min_docs:
            raise ScieraError(f"--max-docs {self.max_docs} is below --min-docs {self.min_docs}")
        if self.limit is not None and self.limit < 1:
            raise ScieraError(f"--limit must be at least 1, got {self.limit}")


def qrels_path(spec: MultiDocSpec) -> Path:
    if spec.qrels is not None:
        return spec.qrels
    if not spec.queries.is_dir():
        raise ScieraError(f"{spec.queries}: --qrels is needed when --queries is a file")
    return spec.queries / "qrels" / f"{spec.split}.tsv"


def read_queries(path: Path) -> dict[str, str]:
    """A BEIR folder or ``queries.jsonl``, or a TSV of ``id<TAB>text`` (NFCorpus)."""
    from sciera.corpus import load_beir_queries
    from sciera.errors import InputError

    if path.is_dir() or path.suffix == ".jsonl":
        return load_beir_queries(path)
    if not path.is_file():
        raise ScieraError(f"{path}: no such file")
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            qid, sep, text = line.rstrip("\r\n").partition("\t")
            if not sep or not text.strip():
                raise InputError(path, line_no, "text", "expected id<TAB>text")
            out[qid.strip()] = text.strip()
    return out


def select(
    qrels: Mapping[str, Mapping[str, int]],
    queries: Mapping[str, str],
    spec: MultiDocSpec,
    known_docs: set[str] | None,
) -> tuple[dict[str, dict[str, int]], Counter[str]]:
    """(kept question -> its relevant documents, counts of questions by fate)."""
    kept: dict[str, dict[str, int]] = {}
    fate: Counter[str] = Counter()
    for qid in sorted(qrels):
        rel = {d: g for d, g in qrels[qid].items() if g >= spec.min_grade}
        if known_docs is not None:
            missing = [d for d in rel if d not in known_docs]
            fate["relevant_documents_not_in_corpus"] += len(missing)
            rel = {d: g for d, g in rel.items() if d in known_docs}
        if qid not in queries:
            fate["dropped_no_text"] += 1
        elif len(rel) < spec.min_docs:
            fate["dropped_too_few_documents"] += 1
        elif spec.max_docs is not None and len(rel) > spec.max_docs:
            fate["dropped_too_many_documents"] += 1
        else:
            kept[qid] = dict(sorted(rel.items()))
    fate["eligible"] = len(kept)
    if spec.limit is not None and spec.limit < len(kept):
        picked = sorted(random.Random(spec.seed).sample(sorted(kept), spec.limit))
        kept = {q: kept[q] for q in picked}
    fate["kept"] = len(kept)
    return kept, fate


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _corpus_docs(corpus: Path) -> set[str]:
    from sciera.corpus.store import PassageStore

    with PassageStore.open(corpus) as store:
        return set(store.doc_ids())


def build_multidoc(spec: MultiDocSpec, out: Path, command: str = "") -> dict[str, Any]:
    """Write the set into ``out`` (replacing an earlier build) and return its construction."""
    qrels_file = qrels_path(spec)
    from sciera.corpus import load_qrels

    qrels = load_qrels(qrels_file)
    queries = read_queries(spec.queries)
    known = _corpus_docs(spec.corpus) if spec.corpus is not None else None
    kept, fate = select(qrels, queries, spec, known)
    if not kept:
        raise ScieraError(
            f"{qrels_file}: no question has {spec.min_docs}..{spec.max_docs or 'any'} relevant "
            f"documents of grade >= {spec.min_grade} ({dict(fate)})"
        )
    queries_file = spec.queries / "queries.jsonl" if spec.queries.is_dir() else spec.queries
    sizes = Counter(len(d) for d in kept.values())
    construction = {
        "kind": "multidoc",
        "command": command,
        "rule": (
            f"questions with {spec.min_docs} to {spec.max_docs or 'any number of'} relevant "
            f"documents of grade >= {spec.min_grade}"
            + (" held by the corpus" if known is not None else "")
            + (f"; a seeded sample of {spec.limit}" if spec.limit else "")
        ),
        "spec": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(spec).items()},
        "sources": {
            "queries": {"path": str(queries_file), "sha256": _sha256(queries_file)},
            "qrels": {"path": str(qrels_file), "sha256": _sha256(qrels_file)},
        },
        "counts": {"judged_questions": len(qrels), **dict(sorted(fate.items()))},
        "relevant_documents": {
            "total": sum(sizes[n] * n for n in sizes),
            "per_question": {str(n): sizes[n] for n in sorted(sizes)},
        },
    }
    _write(out, {q: queries[q] for q in kept}, kept, construction)
    return construction


def _write(
    out: Path,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    construction: Mapping[str, Any],
) -> None:
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    files = {
        out / "queries.jsonl": "".join(
            json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, t in queries.items()
        ),
        out / "qrels" / f"{SPLIT}.tsv": "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t{g}\n" for q, docs in qrels.items() for d, g in docs.items()),
        out / "construction.json": json.dumps(construction, indent=1, ensure_ascii=False) + "\n",
    }
    for path, text in files.items():  # each file whole or not at all
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
