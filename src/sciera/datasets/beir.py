"""BEIR folders (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``) as datasets.

Judgments are per document; the runner retrieves passages from an ingested corpus
and scores them as documents with Max-P. Only judged queries are kept.
"""

from __future__ import annotations

from pathlib import Path

from sciera.datasets.loaders import EvalDataset
from sciera.errors import ScieraError


def load_beir(path: Path, *, split: str | None = None) -> EvalDataset:
    from sciera.corpus import load_beir_queries, load_qrels

    split = split or "test"
    qrels_file = Path(path) / "qrels" / f"{split}.tsv"
    if not qrels_file.is_file():
        raise ScieraError(f"{qrels_file}: no such file (BEIR split {split!r})")
    qrels = load_qrels(qrels_file)
    queries = load_beir_queries(path)
    missing = [q for q in qrels if q not in queries]
    if missing:
        raise ScieraError(f"{path}: {len(missing)} judged queries have no text, e.g. {missing[:3]}")
    return EvalDataset(
        name=f"{Path(path).name}/{split}",
        unit="document",
        queries={q: queries[q] for q in qrels},
        qrels=qrels,
    )
