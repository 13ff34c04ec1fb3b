"""PubMed baseline XML reader."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sciera.corpus import Fields
from sciera.corpus.readers import PubmedReader
from sciera.errors import InputError, ScieraError

ARTICLE = """
<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">{pmid}</PMID>
    <Article PubModel="Print">
      <Journal>
        <Title>Journal of Tests</Title>
        <JournalIssue><PubDate><Year>2019</Year></PubDate></JournalIssue>
      </Journal>
      <ArticleTitle>{title}</ArticleTitle>
      {abstract}
    </Article>
  </MedlineCitation>
  <PubmedData>
    <ArticleIdList>
      <ArticleId IdType="pubmed">{pmid}</ArticleId>
      <ArticleId IdType="doi">10.1000/{pmid}</ArticleId>
    </ArticleIdList>
  </PubmedData>
</PubmedArticle>
"""

LABELLED = """<Abstract>
  <AbstractText Label="BACKGROUND" NlmCategory="BACKGROUND">Vitamin D is
    studied.</AbstractText>
  <AbstractText Label="RESULTS">Levels rose by <i>20</i>%.</AbstractText>
  <AbstractText>Unlabelled closing remark.</AbstractText>
</Abstract>"""


def xml(*articles: str) -> str:
    return (
        '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet>\n<PubmedArticleSet>'
        + "".join(articles)
        + "</PubmedArticleSet>\n"
    )


def article(pmid: str = "111", title: str = "A <i>title</i>.", abstract: str = LABELLED) -> str:
    return ARTICLE.format(pmid=pmid, title=title, abstract=abstract)


def test_labelled_sections_become_label_colon_text(tmp_path: Path) -> None:
    file = tmp_path / "pubmed.xml"
    plain = "<Abstract><AbstractText>Just one paragraph.</AbstractText></Abstract>"
    file.write_text(xml(article(), article("222", "Second", plain)))
    docs = list(PubmedReader().read(file))
    assert [(n, d.doc_id) for n, d in docs] == [(1, "111"), (2, "222")]
    first = docs[0][1]
    assert first.title == "A title."
    assert first.text == (
        "BACKGROUND: Vitamin D is studied.\n"
        "RESULTS: Levels rose by 20%.\n"
        "Unlabelled closing remark."
    )
    assert dict(first.metadata) == {
        "journal": "Journal of Tests",
        "year": "2019",
        "doi": "10.1000/111",
    }
    assert docs[1][1].text == "Just one paragraph."


def test_gzipped_xml(tmp_path: Path) -> None:
    file = tmp_path / "pubmed24n0001.xml.gz"
    with gzip.open(file, "wt", encoding="utf-8") as handle:
        handle.write(xml(article("5")))
    assert [d.doc_id for _, d in PubmedReader().read(file)] == ["5"]


def test_missing_abstract_and_pmid(tmp_path: Path) -> None:
    file = tmp_path / "pubmed.xml"
    file.write_text(xml(article("1"), article("2", abstract=""), article("", abstract=LABELLED)))
    reader = PubmedReader()
    records = list(reader.records(file))
    assert reader.parse(file, *records[0]).doc_id == "1"
    with pytest.raises(InputError) as info:
        reader.parse(file, *records[1])
    assert str(info.value) == f"{file}:2: AbstractText: missing"
    with pytest.raises(InputError) as info:
        reader.parse(file, *records[2])
    assert str(info.value) == f"{file}:3: PMID: missing"


def test_malformed_xml_names_the_next_record_and_position(tmp_path: Path) -> None:
    file = tmp_path / "pubmed.xml"
    file.write_text(
        xml(article("1")).replace("</PubmedArticleSet>", "<PubmedArticle><x></PubmedArticleSet>")
    )
    reader = PubmedReader()
    seen = []
    with pytest.raises(InputError) as info:
        for n, doc in reader.read(file):
            seen.append((n, doc.doc_id))
    assert seen == [(1, "1")]
    assert info.value.line == 2 and info.value.field == "xml"
    assert "malformed XML at line" in info.value.problem


def test_field_overrides_are_rejected() -> None:
    with pytest.raises(ScieraError, match="fixed fields"):
        PubmedReader(Fields(id="x"))
