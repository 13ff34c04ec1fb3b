"""Ingesting full-text papers: passages inside sections, sentences, captions, references
apart, the schema upgrade, folder ingest, incremental re-reads, prune and `corpus show`."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

from sciera.cli import app, corpus_cmds  # noqa: F401  (registers the commands)
from sciera.corpus import PassageStore, ingest
from sciera.corpus.fulltext.jats import parse_jats
from sciera.corpus.library import ingest_folder, prune
from sciera.corpus.store import STORE_FILE

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "fulltext"
ELIFE = "10.7554/elife.04177"


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    for name in ("elife-04177.xml", "pntd.0002065.nxml", "elife-22661.xml"):
        shutil.copy(DATA / name, folder / name)
    (folder / "notes.txt").write_text("not a paper\n")
    (folder / ".hidden.nxml").write_text("ignored\n")
    return folder


def test_passages_stay_in_sections_and_sentences_in_passages(tmp_path: Path) -> None:
    report = ingest(DATA / "elife-04177.xml", tmp_path / "c", max_words=120)
    assert (report.format, report.added) == ("jats", 1)
    paper = parse_jats((DATA / "elife-04177.xml").read_bytes())
    with PassageStore.open(tmp_path / "c") as store:
        passages = store.document_passages(ELIFE)
        places = store.passage_places([p.passage_id for p in passages])
        for p in passages:
            assert len(p.text.split()) <= 120
            place = places[p.passage_id]
            path = (place.section, *(place.subsection.split(" > ") if place.subsection else ()))
            section = next(s for s in paper.sections if s.path == path)
            own = "\n\n".join(b.text for b in section.blocks)
            assert p.text in own  # never straddles a section
            if place.kind == "caption":
                assert any(p.text in b.text for b in section.blocks if b.kind == "caption")
        assert {places[p.passage_id].section for p in passages} >= {
            "Abstract",
            "Results",
            "Materials and methods",
        }
        captions = [p for p in passages if places[p.passage_id].kind == "caption"]
        assert captions and captions[0].text.startswith("Figure 1.")
        rows = store.sentence_rows([ELIFE])[ELIFE]
        by_id = {p.passage_id: p for p in passages}
        assert rows and all(s.text in by_id[s.passage_id].text for s in rows)
        refs = store.references(ELIFE)
        assert len(refs) == 56 and refs[0].doi == "10.1155/2011/379123"
        assert all(r.text not in p.text for r in refs[:5] for p in passages)  # not passages
        doc = store.get_document(ELIFE)
        assert doc is not None and doc.metadata["licence"] == "CC BY 4.0"
        assert doc.metadata["references"] == 56 and len(doc.metadata["authors"]) == 12


def test_folder_ingest_is_incremental_and_prune_drops_removed_files(
    tmp_path: Path, papers: Path
) -> None:
    corpus = tmp_path / "c"
    first = ingest_folder(papers, corpus)
    assert [r.added for r in first.reports] == [1, 1, 1]
    assert [Path(f).name for f in first.ignored] == ["notes.txt"]
    again = ingest_folder(papers, corpus)
    assert [r.records for r in again.reports] == [0, 0, 0]  # unchanged files not read
    with PassageStore.open(corpus) as store:
        fp = store.fingerprint()
    # a changed file is read again and its document updated
    changed = papers / "elife-22661.xml"
    changed.write_text(changed.read_text().replace("Mixed outcomes", "Mixed results"))
    third = ingest_folder(papers, corpus)
    assert [(r.records, r.updated) for r in third.reports] == [(0, 0), (1, 1), (0, 0)]
    with PassageStore.open(corpus) as store:
        assert store.fingerprint() != fp
        assert store.get_document("10.7554/elife.22661").title.startswith("Mixed results")
    (papers / "pntd.0002065.nxml").unlink()
    assert prune(corpus, dry_run=True).documents == ("10.1371/journal.pntd.0002065",)
    with PassageStore.open(corpus) as store:
        assert store.count_documents() == 3
    report = prune(corpus)
    assert [Path(f).name for f in report.removed_files] == ["pntd.0002065.nxml"]
    with PassageStore.open(corpus) as store:
        assert store.count_documents() == 2
        assert store.document_passages("10.1371/journal.pntd.0002065") == []
        assert store.references("10.1371/journal.pntd.0002065") == []
        assert not any("pntd" in s for s in store.journal_sources())
    assert prune(corpus).documents == ()


def test_prune_drops_documents_a_changed_file_no_longer_holds(tmp_path: Path) -> None:
    file = tmp_path / "paper.nxml"
    shutil.copy(DATA / "elife-15853.xml", file)
    ingest(file, tmp_path / "c")
    text = file.read_text().replace("10.7554/eLife.15853</article-id>", "10.1/new</article-id>")
    file.write_text(text)
    ingest(file, tmp_path / "c")
    with PassageStore.open(tmp_path / "c") as store:
        assert store.doc_ids() == ["10.1/new", "10.7554/elife.15853"]
    assert prune(tmp_path / "c").documents == ("10.7554/elife.15853",)


@pytest.fixture
def schema2_corpus(tmp_path: Path) -> Path:
    """A corpus of abstracts as sciera wrote it before sections (schema 2)."""
    file = tmp_path / "docs.jsonl"
    file.write_text(
        '{"id": "a", "title": "T", "text": "Mice died. Rats lived."}\n'
        '{"id": "b", "title": "U", "text": "Cells grew."}\n'
    )
    ingest(file, tmp_path / "c")
    conn = sqlite3.connect(tmp_path / "c" / STORE_FILE)
    conn.executescript(
        "DROP TABLE doc_references; ALTER TABLE passages DROP COLUMN section; "
        "ALTER TABLE passages DROP COLUMN subsection; ALTER TABLE passages DROP COLUMN kind; "
        "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
    )
    conn.close()
    return tmp_path / "c"


def test_schema_2_store_reads_and_upgrades_on_write(schema2_corpus: Path) -> None:
    with PassageStore.open(schema2_corpus) as old:
        fp = old.fingerprint()
        assert old.schema_version == "2"
        assert [p.passage_id for p in old.iter_passages()] == ["a#0", "b#0"]
        assert old.passage_places(["a#0"])["a#0"].section == ""
        assert old.references("a") == []
        assert old.sentences(["a"])["a"][1] == ["Mice died.", "Rats lived."]
    report = ingest(DATA / "elife-22661.xml", schema2_corpus)
    assert report.added == 1
    with PassageStore.open(schema2_corpus) as store:
        assert store.schema_version == "3"
        assert store.passage_places(["a#0"])["a#0"].section == ""
        assert store.count_documents() == 3 and store.fingerprint() != fp
        assert len(store.references("10.7554/elife.22661")) == 7


def test_cli_ingest_folder_and_corpus_show(tmp_path: Path, papers: Path) -> None:
    group = typer.main.get_group(app)
    corpus = tmp_path / "c"
    out = CliRunner().invoke(group, ["ingest", str(papers), "--corpus", str(corpus)])
    assert out.exit_code == 0, out.output
    assert "3 files: 3 documents added" in out.output
    shown = CliRunner().invoke(group, ["corpus", "show", ELIFE, "--corpus", str(corpus)])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith(f"{ELIFE}: Recognition of tumor cells by Dectin-1")
    assert "  licence: CC BY 4.0" in lines
    assert "  Materials and methods" in lines and "    Mice 1 passage" in lines
    assert any(line.startswith("    [caption] ") for line in lines)
    assert lines[-1].endswith("; 56 references")
    missing = CliRunner().invoke(group, ["corpus", "show", "nope", "--corpus", str(corpus)])
    assert missing.exit_code != 0
    pruned = CliRunner().invoke(group, ["corpus", "prune", "--corpus", str(corpus)])
    assert pruned.exit_code == 0 and "0 documents removed" in pruned.output


def test_a_file_that_cannot_be_read_stops_the_folder_unless_skip_bad(
    tmp_path: Path, papers: Path
) -> None:
    from sciera.errors import InputError

    (papers / "MANIFEST.tsv").write_text("file\tdoi\nx.pdf\t10.1/x\n")  # no id column
    with pytest.raises(InputError, match=r"MANIFEST\.tsv:1: id: column missing"):
        ingest_folder(papers, tmp_path / "c")
    report = ingest_folder(papers, tmp_path / "c", skip_bad=True)
    assert len(report.failed) == 1 and "MANIFEST.tsv:1: id" in report.failed[0]
    assert [r.added for r in report.reports] == [1, 1, 1]  # the papers after it are read
    assert "1 files could not be read" in report.summary()


def test_a_paper_as_pdf_and_xml_is_one_document_with_the_xml_text(tmp_path: Path) -> None:
    pytest.importorskip("pypdfium2")
    folder = tmp_path / "both"
    folder.mkdir()
    for name in ("elife-22661.xml", "elife-22661.pdf"):
        shutil.copy(DATA / name, folder / name)
    report = ingest_folder(folder, tmp_path / "c")
    assert [(r.format, r.added, r.updated) for r in report.reports] == [
        ("pdf", 1, 0),
        ("jats", 0, 1),
    ]
    with PassageStore.open(tmp_path / "c") as store:
        assert store.doc_ids() == ["10.7554/elife.22661"]
        assert store.get_document("10.7554/elife.22661").metadata["format"] == "jats"
