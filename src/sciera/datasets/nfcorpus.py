"""NFCorpus (Boteva et al. 2016) in its own layout as a dataset: a folder holding
``<split>.titles.queries`` (``ID<TAB>text``) and ``<split>.2-1-0.qrel`` (TREC qrels graded
2 / 1 / 0, the grades NFCorpus's experiments use). Judgments are per document, like a
BEIR collection's: the corpus is the split's ``<split>.docs`` ingested
(``sciera ingest FOLDER/dev.docs``, the ``nfcorpus`` reader). Only judged queries are kept.
"""

from __future__ import annotations

from pathlib import Path

from sciera.datasets.loaders import EvalDataset
from sciera.datasets.multidoc import read_queries
from sciera.errors import ScieraError


def load_nfcorpus(path: Path, *, split: str | None = None) -> EvalDataset:
    """The judged queries of one split (default ``dev``) with their graded judgments."""
    from sciera.corpus import load_qrels

    split = split or "dev"
    folder = Path(path)
    queries_file = folder / f"{split}.titles.queries"
    qrels_file = folder / f"{split}.2-1-0.qrel"
    for file in (queries_file, qrels_file):
        if not file.is_file():
            raise ScieraError(f"{file}: no such file (NFCorpus split {split!r})")
    qrels = load_qrels(qrels_file)
    queries = read_queries(queries_file)
    judged = sorted(q for q in qrels if q in queries)
    return EvalDataset(
        name=f"{folder.name}/{split}",
        unit="document",
        queries={q: queries[q] for q in judged},
        qrels={q: qrels[q] for q in judged},
    )
