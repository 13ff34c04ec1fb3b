"""An experiment's sub-corpus: the documents its corpus-searching pipelines may return.

``dataset.subcorpus`` builds it from the selected questions: their judged documents (every
document a question's judgments name, whatever the grade, when the corpus holds it) plus

- ``kind: bm25`` (the default): each question's top ``pool`` (5) documents by BM25 over
  the whole corpus, so every question faces its strongest lexical distractors (the pooled
  sub-corpus the embedder choice was made on, commit e7f0f65's embedder_choice.py);
- ``kind: random``: ``others`` more documents drawn with ``random.Random(seed)`` from the
  corpus's other documents, in id order.

The first stages then search the whole index and keep only the sub-corpus's passages
(:class:`~sciera.retrieve.subset.DocumentRetriever`). Its size, seed and a hash of its ids
go into the results directory's manifest: a resumed run refuses a changed sub-corpus.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.datasets.loaders import EvalDataset
from sciera.errors import ScieraError
from sciera.eval.experiment import SubcorpusSpec
from sciera.settings import Settings

POOL = 5
"""kind bm25's documents per question when ``pool`` is not given."""


@dataclass(frozen=True)
class SubCorpus:
    doc_ids: frozenset[str]
    kind: str
    seed: int | None

    def record(self) -> dict[str, Any]:
        """What the manifest keeps: kind, size, seed and the sha256 of the sorted ids."""
        digest = hashlib.sha256("\n".join(sorted(self.doc_ids)).encode()).hexdigest()
        return {"kind": self.kind, "size": len(self.doc_ids), "seed": self.seed, "ids": digest}


def judged_documents(data: EvalDataset) -> set[str]:
    """Every document the selected questions' judgments name."""
    return {d for q in data.queries for d in data.qrels.get(q, {})}


def random_others(
    judged: set[str], corpus_ids: Collection[str], others: int, seed: int
) -> set[str]:
    """``others`` documents of the corpus outside ``judged`` (all of them when fewer),
    drawn with ``random.Random(seed)`` from the sorted ids."""
    rest = sorted(set(corpus_ids) - judged)
    return set(random.Random(seed).sample(rest, min(others, len(rest))))


def bm25_pool(data: EvalDataset, corpus: Path, settings: Settings, pool: int) -> set[str]:
    """Each selected question's top ``pool`` documents by BM25 over the whole corpus."""
    from sciera.retrieve import open_retriever

    retriever = open_retriever(corpus, "bm25", settings)
    qids = list(data.queries)
    rankings = retriever.search_many([data.queries[q] for q in qids], pool * 20)
    out: set[str] = set()
    for ranking in rankings:
        docs = list(dict.fromkeys(it.passage.doc_id for it in ranking))
        out.update(docs[:pool])
    return out


def build_subcorpus(
    spec: SubcorpusSpec, data: EvalDataset, corpus: Path | None, settings: Settings
) -> SubCorpus:
    """The sub-corpus ``spec`` asks for, over the ingested ``corpus``."""
    if corpus is None:
        raise ScieraError("dataset.subcorpus: needs the experiment's corpus")
    if data.unit != "document":
        raise ScieraError(
            f"dataset.subcorpus: needs a dataset judged per document, not per {data.unit}"
        )
    from sciera.corpus.store import PassageStore

    store = PassageStore.open(corpus)
    try:
        corpus_ids = store.doc_ids()
    finally:
        store.close()
    judged = judged_documents(data) & set(corpus_ids)
    if spec.kind == "random":
        assert spec.others is not None  # the schema requires it
        extra = random_others(judged, corpus_ids, spec.others, spec.seed)
        return SubCorpus(frozenset(judged | extra), "random", spec.seed)
    extra = bm25_pool(data, corpus, settings, spec.pool or POOL)
    return SubCorpus(frozenset(judged | extra), "bm25", None)
