"""NFCorpus in its own layout: the ``nfcorpus`` corpus reader (``ID<TAB>text`` lines) and
the ``nfcorpus`` dataset (titles queries, 2-1-0 graded qrels) on the shared data."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.corpus import PassageStore, ingest
from sciera.corpus.readers import detect_format
from sciera.datasets.loaders import load_dataset
from sciera.errors import InputError, ScieraError

NFCORPUS = Path(__file__).resolve().parents[4] / "shared" / "data" / "nfcorpus-dev"


def test_the_dev_split_keeps_its_judged_queries_with_their_grades() -> None:
    data = load_dataset("nfcorpus", NFCORPUS)
    assert data.unit == "document" and data.name == "nfcorpus-dev/dev"
    assert len(data.queries) == 324  # 325 judged, one without a titles query
    assert data.queries["PLAIN-1"] == "why deep fried foods may cause cancer"
    assert data.qrels["PLAIN-1"]["MED-2421"] == 2
    assert set(data.queries) <= set(data.qrels)
    with pytest.raises(ScieraError, match=r"test\.titles\.queries: no such file"):
        load_dataset("nfcorpus", NFCORPUS, split="test")


def test_the_docs_file_is_read_as_a_corpus(tmp_path: Path) -> None:
    head = (NFCORPUS / "dev.docs").read_text(encoding="utf-8").splitlines()[:3]
    docs = tmp_path / "dev.docs"
    docs.write_text("\n".join(head) + "\n", encoding="utf-8")
    assert detect_format(docs) == "nfcorpus"
    ingest(docs, tmp_path / "c")
    with PassageStore.open(tmp_path / "c") as store:
        assert store.doc_ids() == sorted(line.split("\t")[0] for line in head)
        doc = store.get_document("MED-118")
        assert doc is not None and doc.title == ""
        assert doc.text == head[0].split("\t", 1)[1].strip()


def test_a_line_without_a_tab_names_its_line(tmp_path: Path) -> None:
    docs = tmp_path / "bad.docs"
    docs.write_text("MED-1\tsome text\nMED-2 no tab here\n", encoding="utf-8")
    with pytest.raises(InputError, match="2"):
        ingest(docs, tmp_path / "c")
