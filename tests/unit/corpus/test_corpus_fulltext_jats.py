"""JATS full-text papers: the document model from the real articles in
../shared/data/fulltext (metadata against MANIFEST.tsv), detection by content, errors."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from sciera.corpus.fulltext import paper_doc_id, paper_document, section_kinds
from sciera.corpus.fulltext.jats import JatsError, parse_jats
from sciera.corpus.readers import detect_format, get_reader
from sciera.errors import InputError

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "fulltext"


def manifest() -> list[dict[str, str]]:
    with open(DATA / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


XML_ROWS = [r for r in manifest() if not r["file"].endswith(".pdf")]


@pytest.mark.parametrize("row", XML_ROWS, ids=[r["file"] for r in XML_ROWS])
def test_metadata_matches_the_manifest(row: dict[str, str]) -> None:
    file = DATA / row["file"]
    assert detect_format(file) == "jats"
    paper = parse_jats(file.read_bytes())
    assert paper.meta.title == " ".join(row["title"].split())
    assert paper.meta.doi == row["doi"]
    assert paper.meta.licence == row["licence"].split(" (")[0]  # "CC BY (version not stated)"
    assert paper.meta.authors and paper.meta.year and paper.meta.journal
    assert paper.references and all(r.text for r in paper.references)
    assert paper.sections[0].path[0] in {"Abstract"}
    # every section's blocks have text; a figure or table's caption starts with its label
    # (a table's footnotes follow as a caption block of the same label)
    for section in paper.sections:
        assert section.blocks and all(b.text.strip() for b in section.blocks)
    captions: dict[str, list[str]] = {}
    for block in (b for s in paper.sections for b in s.blocks):
        if block.kind == "caption" and block.label:
            captions.setdefault(block.label, []).append(block.text)
    for label, texts in captions.items():
        assert texts[0].startswith(label.rstrip(".:")), (label, texts[0])


def test_elife_sections_subsections_captions_tables_and_references() -> None:
    paper = parse_jats((DATA / "elife-04177.xml").read_bytes())
    tops = list(dict.fromkeys(s.path[0] for s in paper.sections))
    assert tops == [
        "Abstract",
        "eLife digest",
        "Introduction",
        "Results",
        "Discussion",
        "Materials and methods",
        "Acknowledgements",
    ]
    methods = [s for s in paper.sections if s.path[0] == "Materials and methods"]
    assert methods[0].path == ("Materials and methods", "Mice") and methods[0].level == 2
    assert section_kinds("Materials and methods", "materials|methods") == {"methods"}
    kinds = [b.kind for s in paper.sections for b in s.blocks]
    assert kinds.count("caption") >= 31 and kinds.count("table") == 1
    table = next(b for s in paper.sections for b in s.blocks if b.kind == "table")
    assert table.text.splitlines()[0] == "Unigene | Gene symbol | Fold change"
    assert len(paper.references) == 56
    first = paper.references[0]
    assert (first.year, first.doi, first.authors) == (
        "2011",
        "10.1155/2011/379123",
        ("Alderson KL", "Sondel PM"),
    )
    # references and front matter are not body text
    body = paper.body_text()
    assert "Journal of Biomedicine and Biotechnology" not in body
    assert "Recognition of tumor cells" not in body.split("\n\n")[0]


def test_pmc_ids_structured_abstract_and_mixed_citations_spaced() -> None:
    paper = parse_jats((DATA / "1471-2180-11-174.nxml").read_bytes())
    assert (paper.meta.pmid, paper.meta.pmcid) == ("21810267", "PMC3166277")
    assert [s.path for s in paper.sections[:3]] == [
        ("Abstract", "Background"),
        ("Abstract", "Results"),
        ("Abstract", "Conclusions"),
    ]
    assert paper.references[0].text.startswith("Avery SV Microbial cell individuality")
    assert paper_doc_id(paper.meta, "x") == "10.1186/1471-2180-11-174"


def test_layout_units_cover_blocks_and_never_mix_sections() -> None:
    paper = parse_jats((DATA / "pntd.0008301.nxml").read_bytes())
    laid = paper_document(paper, "d")
    text = laid.document.text
    assert laid.document.metadata["pmcid"] == "PMC7289444"
    assert laid.document.metadata["references"] == 53
    previous = 0
    for unit in laid.layout:
        assert previous <= unit.start < unit.end <= len(text)
        assert text[unit.start : unit.end] == text[unit.start : unit.end].strip()
        previous = unit.end
    # a text unit holds the paragraphs of one (sub)section, in order, and nothing else
    by_section = {}
    for s in paper.sections:
        key = (s.path[0], " > ".join(s.path[1:]))
        by_section.setdefault(key, []).extend(b.text for b in s.blocks if b.kind == "paragraph")
    for unit in laid.layout:
        if unit.kind == "text":
            for para in text[unit.start : unit.end].split("\n\n"):
                assert para in by_section[(unit.section, unit.subsection)]


def test_detected_by_content_whatever_the_name(tmp_path: Path) -> None:
    odd = tmp_path / "article"  # no suffix at all
    shutil.copy(DATA / "elife-22661.xml", odd)
    assert detect_format(odd) == "jats"
    renamed = tmp_path / "paper.jsonl"
    shutil.copy(DATA / "pone.0046493.nxml", renamed)
    assert detect_format(renamed) == "jats"
    pubmed = tmp_path / "baseline.nxml"
    pubmed.write_text('<?xml version="1.0"?>\n<PubmedArticleSet></PubmedArticleSet>\n')
    assert detect_format(pubmed) == "pubmed"
    import gzip

    from sciera.corpus.readers import sniff_format

    data = gzip.compress(b"<article><front/></article>" * 50)
    broken = tmp_path / "paper.nxml.gz"  # a corrupt deflate stream: not a zlib.error
    broken.write_bytes(data[:12] + bytes(b ^ 0xFF for b in data[12:40]) + data[40:])
    assert sniff_format(broken) is None
    assert detect_format(broken) == "jats"  # by name; the reader reports the damage


@pytest.mark.parametrize(
    ("content", "field", "problem"),
    [
        (b"", "file", "empty file"),
        (b"<article><front><article-meta/>", "xml", "malformed XML"),
        (b"<PubmedArticleSet/>", "article", "root element is <PubmedArticleSet>"),
        (
            b"<article><front><article-meta/></front><body><p>"
            + b"<i>" * 5000
            + b"x"
            + b"</i>" * 5000
            + b"</p></body></article>",
            "xml",
            "elements nested too deeply",
        ),
        (
            b"<article><front><article-meta><title-group><article-title>T</article-title>"
            b"</title-group></article-meta></front><body/></article>",
            "body",
            "no body text and no abstract",
        ),
    ],
)
def test_bad_files_are_one_line_errors(
    tmp_path: Path, content: bytes, field: str, problem: str
) -> None:
    with pytest.raises(JatsError, match=problem):
        parse_jats(content)
    file = tmp_path / "bad.nxml"
    file.write_bytes(content)
    reader = get_reader("jats")
    with pytest.raises(InputError) as err:
        list(reader.read(file))
    assert str(err.value).startswith(f"{file}:1: {field}: {problem}")
    assert "\n" not in str(err.value)
