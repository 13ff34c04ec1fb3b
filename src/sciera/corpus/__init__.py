"""The corpus layer: readers for corpus formats, sentence-preserving chunking, the
SQLite passage store, and ``ingest`` which ties them together.

    from sciera.corpus import ingest, PassageStore
    report = ingest("../shared/data/scifact", "corpora/scifact")
    with PassageStore.open("corpora/scifact") as store:
        passages = store.get_passages(["4983#0"])
"""

from sciera.corpus.chunker import (
    DEFAULT_MAX_WORDS,
    Sentence,
    chunk_document,
    chunk_text,
    chunk_with_sentences,
)
from sciera.corpus.ingest import IngestReport, ingest
from sciera.corpus.readers import (
    READERS,
    Fields,
    Reader,
    detect_format,
    get_reader,
    load_beir_qrels,
    load_beir_queries,
    load_qrels,
    relevant_docs,
)
from sciera.corpus.sentences import split_sentences
from sciera.corpus.store import PassageStore

__all__ = [
    "DEFAULT_MAX_WORDS",
    "READERS",
    "Fields",
    "IngestReport",
    "PassageStore",
    "Reader",
    "Sentence",
    "chunk_document",
    "chunk_text",
    "chunk_with_sentences",
    "detect_format",
    "get_reader",
    "ingest",
    "load_beir_qrels",
    "load_beir_queries",
    "load_qrels",
    "relevant_docs",
    "split_sentences",
]
