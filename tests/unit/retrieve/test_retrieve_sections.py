"""``--section``: retrieval restricted to sections of full-text papers, passages that carry
their section from the store, and citations that name it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner
from fixed_first_stage import Fixed
from tiny_corpus import fulltext_corpus

from sciera.cli import app, search_cmds  # noqa: F401  (registers the command)
from sciera.corpus import PassageStore
from sciera.errors import ScieraError
from sciera.generate.citations import cite_all, resolve_citations
from sciera.retrieve.base import MemoryPassages
from sciera.retrieve.open import open_retriever
from sciera.retrieve.sections import SectionRetriever, in_sections, parse_sections
from sciera.settings import load_settings
from sciera.types import Evidence, Passage

PAPERS = ("elife-04177.xml", "pntd.0002065.nxml", "pone.0046493.nxml")


@pytest.fixture(scope="module")
def papers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fulltext_corpus(
        tmp_path_factory.mktemp("papers"),
        ("elife-04177.xml", "pntd.0002065.nxml", "pone.0046493.nxml"),
    )


def test_kinds_are_checked_and_matched() -> None:
    assert parse_sections("methods, Results") == {"methods", "results"}
    with pytest.raises(ScieraError, match="--section: unknown section kind 'method'"):
        parse_sections("method")
    p = Passage("d#1", "d", 1, "T", "x", section="Materials and Methods")
    assert in_sections(p, frozenset({"methods"}))
    assert not in_sections(p, frozenset({"results"}))
    both = Passage("d#2", "d", 2, "T", "x", section="Results and Discussion")
    assert in_sections(both, frozenset({"discussion"}))
    abstract_only = Passage("a#0", "a", 0, "T", "x")  # an abstract corpus: no section
    assert in_sections(abstract_only, frozenset({"abstract"}))
    assert not in_sections(abstract_only, frozenset({"methods"}))


def test_section_retriever_digs_deeper_until_k_survive() -> None:
    passages = [
        Passage(f"d#{i}", "d", i, "T", f"p{i}", section="Methods" if i % 10 == 9 else "Results")
        for i in range(100)
    ]
    inner = Fixed(passages)
    ranking = SectionRetriever(inner, frozenset({"methods"})).search("q", 3)
    assert [it.passage_id for it in ranking] == ["d#9", "d#19", "d#29"]
    assert [it.rank for it in ranking] == [1, 2, 3]
    assert inner.depths == [15, 60]  # 5k had one Methods passage, 20k had enough
    assert MemoryPassages(passages).get_passages(["d#9"])[0].section == "Methods"


def test_store_passages_carry_sections_and_open_retriever_filters(papers: Path) -> None:
    with PassageStore.open(papers) as store:
        sections = {p.section for p in store.iter_passages()}
    assert {"Abstract", "Introduction", "Materials and Methods", "Results"} <= sections
    settings = load_settings(retrieve={"sections": ("methods",)})
    retriever = open_retriever(papers, "bm25", settings)
    ranking = retriever.search("bacterial strains growth conditions culture", 8)
    assert len(ranking) == 8
    assert {it.passage.section for it in ranking} <= {
        "Materials and Methods",
        "Materials and methods",
    }
    unfiltered = open_retriever(papers, "bm25", load_settings()).search("tumor growth in mice", 20)
    assert len({it.passage.section for it in unfiltered}) > 1


def test_citations_name_the_section(papers: Path) -> None:
    retriever = open_retriever(papers, "bm25", load_settings(retrieve={"sections": ("results",)}))
    ranking = retriever.search("inhibition of lipolytic enzymes by MmPPOX", 2)
    evidence = [Evidence(it.passage, it.score) for it in ranking]
    cited = resolve_citations("MmPPOX inhibits the enzymes [1].", evidence)
    assert cited.citations[0].section == "Results"
    assert [c.section for c in cite_all(evidence)] == ["Results", "Results"]


def test_search_cli_section_option(papers: Path) -> None:
    group = typer.main.get_group(app)
    args = ["search", "lung metastasis assay", "--corpus", str(papers), "--retriever", "bm25"]
    out = CliRunner().invoke(group, [*args, "--section", "methods", "--json", "-k", "5"])
    assert out.exit_code == 0, out.output
    items = json.loads(out.output)["items"]
    assert items and all(i["section"].lower() == "materials and methods" for i in items)
    bad = CliRunner().invoke(group, [*args, "--section", "nonsense"])
    assert bad.exit_code != 0


def test_ask_prints_citations_and_evidence_with_their_section(capsys) -> None:
    from sciera.cli.ask_cmds import _print

    data = {
        "question": "q",
        "question_type": "factoid",
        "text": "20 mM [1].",
        "exact": [],
        "insufficient": False,
        "citations": [
            {"marker": 1, "passage_id": "d#4", "title": "T", "section": "Methods", "sentences": []},
            {"marker": 2, "passage_id": "a#0", "title": "U", "section": "", "sentences": []},
        ],
        "evidence": [
            {"n": 1, "passage_id": "d#4", "section": "Methods", "score": 0.9, "summary": "s",
             "kept": True, "rationales": []},
        ],
        "trace": {"pipeline": {}},
    }  # fmt: skip
    _print(data, explain=False)
    out = capsys.readouterr().out.splitlines()
    assert "  [1, Methods] d#4  T" in out
    assert "  [2] a#0  U" in out  # an abstract: no section
    assert any(line.startswith("  [1] 0.900  d#4 [Methods]  s") for line in out)
