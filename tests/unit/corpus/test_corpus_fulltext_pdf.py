"""PDF papers (pypdfium2): the real eLife PDFs against what their XML says, running
heads and hyphens removed, sections from headings, and one-line errors for bad files."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pypdfium2", reason="the pdf extra: pip install sciera[pdf]")

from sciera.corpus import PassageStore, ingest
from sciera.corpus.fulltext.pdf import PdfError, parse_pdf
from sciera.corpus.library import ingest_folder
from sciera.corpus.readers import detect_format
from sciera.errors import InputError

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "fulltext"


def test_insight_text_without_running_feet_hyphens_or_drop_cap() -> None:
    paper = parse_pdf((DATA / "elife-22661.pdf").read_bytes())
    assert paper.meta.title == "Mixed outcomes for computational predictions"
    assert (paper.meta.doi, paper.meta.licence, paper.pages) == ("10.7554/eLife.22661", "CC BY", 2)
    text = paper.body_text()
    assert "In 2011 researchers at Stanford" in text  # the drop cap "I" joined again
    assert "for the treatment of a certain disease" in text  # "treat-" | "ment" joined
    assert "predicted that cimetidine" in text
    assert "2 of 2" not in text and "DOI: 10.7554/eLife.22661" not in text  # running foot


def test_registered_report_sections_and_subsections() -> None:
    paper = parse_pdf((DATA / "elife-06847.pdf").read_bytes())
    tops = list(dict.fromkeys(s.path[0] for s in paper.sections))
    assert tops[:3] == ["Abstract", "Introduction", "Materials and methods"]
    assert "Power calculations" in tops
    sub = [s.path for s in paper.sections if s.path[0] == "Materials and methods"]
    assert ("Materials and methods", "Sampling") in sub
    assert any(p[1].startswith("Protocol 1: assessing the effect of cimetidine") for p in sub[1:])
    assert paper.meta.doi == "10.7554/eLife.06847"
    tables = [b for s in paper.sections for b in s.blocks if b.kind == "table"]
    rows = tables[0].text.splitlines()  # cells told apart by the gaps between them
    assert rows[:2] == [
        "Reagent | Type | Manufacturer | Catalog # | Comments",
        "PBS | Reagent | Invitrogen | 10010023",
    ]
    assert "Reagent Type Manufacturer" not in paper.body_text().replace("|", "")


def test_research_article_captions_and_references() -> None:
    paper = parse_pdf((DATA / "elife-04177.pdf").read_bytes())
    captions = [b for s in paper.sections for b in s.blocks if b.kind == "caption"]
    assert captions and captions[0].label.startswith("Figure 1")
    assert len(paper.references) >= 50  # 56 in the XML
    assert not any(s.path[0] == "References" for s in paper.sections)  # not passages


def test_pdf_ingest_detected_by_content_with_sections_in_the_store(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy(DATA / "elife-22661.pdf", folder / "insight")  # no suffix: %PDF- header
    shutil.copy(DATA / "elife-06847.pdf", folder / "report.pdf")
    assert detect_format(folder / "insight") == "pdf"
    report = ingest_folder(folder, tmp_path / "c")
    assert [(r.format, r.added) for r in report.reports] == [("pdf", 1), ("pdf", 1)]
    with PassageStore.open(tmp_path / "c") as store:
        assert store.doc_ids() == ["10.7554/elife.06847", "10.7554/elife.22661"]
        outline = store.outline("10.7554/elife.06847")
        assert {place.section for place, _ in outline} >= {"Introduction", "Materials and methods"}
        doc = store.get_document("10.7554/elife.06847")
        assert doc is not None and doc.metadata["format"] == "pdf" and doc.metadata["pages"] == 7
        assert store.sentence_rows(["10.7554/elife.22661"])["10.7554/elife.22661"]


def _encrypted_pdf() -> bytes:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    writer.append(pypdf.PdfReader(DATA / "elife-22661.pdf"))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _blank_pdf() -> bytes:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=612, height=792)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("make", "field", "problem"),
    [
        (lambda: b"", "file", "empty file"),
        (lambda: b"<html>not a pdf</html>", "file", "not a PDF"),
        (lambda: (DATA / "elife-22661.pdf").read_bytes()[:2000], "pdf", "broken or truncated"),
        (_encrypted_pdf, "encryption", "encrypted PDF"),
        (_blank_pdf, "text", "no text layer"),
    ],
    ids=["empty", "not-pdf", "truncated", "encrypted", "scanned"],
)
def test_bad_pdfs_are_one_line_errors_and_skippable(
    tmp_path: Path, make, field: str, problem: str
) -> None:
    data = make()
    with pytest.raises(PdfError, match=problem):
        parse_pdf(data)
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(data)
    with pytest.raises(InputError) as err:
        ingest(bad, tmp_path / "c", format="pdf")
    assert str(err.value).startswith(f"{bad.resolve()}:1: {field}: {problem}")
    assert "\n" not in str(err.value)
    report = ingest(bad, tmp_path / "c", format="pdf", skip_bad=True)
    assert (report.skipped, report.added) == (1, 0)
    with PassageStore.open(tmp_path / "c") as store:
        assert store.count_documents() == 0


def test_two_column_bmc_pdf_with_small_type_references() -> None:
    """The reference list in small type holds the most characters: the body size comes
    from the lines after the known headings; a paragraph goes on across the column."""
    paper = parse_pdf((DATA / "1752-2897-4-1.pdf").read_bytes())
    tops = [s.path[0] for s in paper.sections]
    assert tops[:4] == ["Abstract", "Introduction", "Methods", "Conclusion"]
    assert all(len(s.path) == 1 for s in paper.sections[:4])  # no body line taken as heading
    intro = " ".join(b.text for b in paper.sections[1].blocks)
    assert (
        "pharmacologic anticoagulation with low molecular weight heparins (LMWHs) as the "
        "primary DVT prophylactic agent [10]" in intro
    )  # across the column break
    assert "life-threatening" in intro  # a soft hyphen inside a merged line
    assert paper.meta.licence == "CC BY 2.0"
    assert len(paper.references) >= 90
    assert paper.references[0].text.startswith("1. Kudsk KA")


def test_damaged_pdfs_give_a_paper_or_a_pdf_error() -> None:
    """Bytes of a real PDF overwritten at random, some cut short: never another error."""
    import random

    data = (DATA / "elife-22661.pdf").read_bytes()
    rng = random.Random(7)
    outcomes = set()
    for _ in range(25):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 200)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.3:
            damaged = damaged[: rng.randrange(len(damaged))]
        try:
            parse_pdf(bytes(damaged))
            outcomes.add("paper")
        except PdfError as err:
            assert "\n" not in str(err)
            outcomes.add("error")
    assert outcomes  # both kinds usually occur; neither may be anything else
