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
from sciera.errors import InputError

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


def test_files_that_are_not_documents_are_skipped_and_named(tmp_path: Path, papers: Path) -> None:
    shutil.copy(DATA / "MANIFEST.tsv", papers / "MANIFEST.tsv")  # the shared folder's own
    (papers / "runs.jsonl").write_text('{"query-id": "q1", "corpus-id": "d1", "score": 1}\n')
    report = ingest_folder(papers, tmp_path / "c")
    assert [r.added for r in report.reports] == [1, 1, 1]
    assert [(Path(f).name, why.split(" (")[0]) for f, why in report.not_documents] == [
        ("MANIFEST.tsv", "its header has no id or text column"),
        ("runs.jsonl", "its first record has no id or text field"),
    ]
    assert report.summary().endswith(
        "; skipped 3 files that are not documents: MANIFEST.tsv, notes.txt, runs.jsonl"
    )
    out = CliRunner().invoke(
        typer.main.get_group(app), ["ingest", str(papers), "--corpus", str(tmp_path / "d")]
    )
    assert out.exit_code == 0, out.output
    assert f"skipped {papers / 'MANIFEST.tsv'}: not a document file: its header" in out.output
    # given by itself, the same file is still a one-line error
    with pytest.raises(InputError, match=r"MANIFEST\.tsv:1: id: column missing from header"):
        ingest(papers / "MANIFEST.tsv", tmp_path / "e")


def test_a_table_of_documents_in_the_folder_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "abstracts.tsv").write_text("id\ttitle\ttext\na\tT\tMice died.\n")
    (folder / "more.jsonl").write_text('{"_id": "b", "text": "Rats lived."}\n')
    (folder / "only_one.jsonl").write_text('{"id": "c", "title": "no text field"}\n')
    report = ingest_folder(folder, tmp_path / "c")
    assert [(Path(r.source).name, r.added) for r in report.reports] == [
        ("abstracts.tsv", 1),
        ("more.jsonl", 1),
    ]
    assert report.summary().endswith("skipped 1 file that is not a document: only_one.jsonl")


def test_a_damaged_document_file_stops_the_folder_unless_skip_bad(
    tmp_path: Path, papers: Path
) -> None:
    text = (DATA / "elife-15853.xml").read_text()
    (papers / "broken.nxml").write_text(text[: len(text) // 2])  # cut mid-article
    (papers / "table.tsv").write_text("id\ttext\tid\na\tMice died.\tb\n")  # a column twice
    with pytest.raises(InputError, match=r"broken\.nxml:1: xml: malformed XML"):
        ingest_folder(papers, tmp_path / "c")
    report = ingest_folder(papers, tmp_path / "d", skip_bad=True)
    by_name = {Path(r.source).name: r for r in report.reports}
    assert by_name["broken.nxml"].skipped == 1 and by_name["broken.nxml"].skip_report
    papers_read = ("elife-04177.xml", "elife-22661.xml", "pntd.0002065.nxml")
    assert [by_name[name].added for name in papers_read] == [1, 1, 1]
    assert len(report.failed) == 1 and "table.tsv:1: header: duplicate column" in report.failed[0]
    assert report.not_documents == ()  # damaged documents, not other files
    assert "1 bad record skipped" in report.summary()
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
