"""``sciera dataset bioasq-from-scifact``: SciFact dev claims -> BioASQ yes/no JSON; real
claims and abstracts, a scripted rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest

import sciera.datasets.to_bioasq as to_bioasq
from fakes import ScriptedLLM


@pytest.fixture(scope="module")
def claims(shared_data: Path) -> dict:
    from sciera.datasets.claims import read_gold

    return {c.id: c for c in read_gold(shared_data / "scifact" / "claims_train.jsonl")}


@pytest.fixture(scope="module")
def abstracts(shared_data: Path) -> dict:
    from sciera.train.verifier_data import load_abstracts

    return load_abstracts(shared_data / "scifact" / "corpus_sentences.jsonl")


def test_a_claim_becomes_a_question_with_its_rationale_sentences(claims, abstracts):
    claim = next(c for c in claims.values() if len(c.evidence) == 1)
    ((doc, gold),) = claim.evidence.items()
    item = to_bioasq.scifact_question(claim, "Is it so?", abstracts)
    assert item["exact_answer"] == {"SUPPORT": "yes", "CONTRADICT": "no"}[gold.label]
    assert item["body"] == "Is it so?" and item["documents"][0].endswith("/" + doc)
    sentences = abstracts[doc].sentences
    wanted = [sentences[i] for i in sorted(set().union(*gold.rationales))]
    assert [s["text"] for s in item["snippets"]] == wanted
    text = " ".join(sentences)
    for s in item["snippets"]:  # offsets into the abstract's sentences joined by one space
        assert text[s["offsetInBeginSection"] : s["offsetInEndSection"]] == s["text"]


def test_abstracts_that_disagree_give_no_question(claims, abstracts):
    from sciera.datasets.claims import GoldAbstract, GoldClaim

    claim = next(c for c in claims.values() if len(c.evidence) >= 2)  # SciFact's agree
    assert to_bioasq.scifact_question(claim, "Is it so?", abstracts) is not None
    (a, first), (b, second), *_ = claim.evidence.items()
    other = "CONTRADICT" if first.label == "SUPPORT" else "SUPPORT"
    evidence = {a: first, b: GoldAbstract(other, second.rationales)}
    mixed = GoldClaim(claim.id, claim.claim, evidence, claim.cited_doc_ids)
    assert to_bioasq.scifact_question(mixed, "Is it so?", abstracts) is None


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("Is TMEM27 a marker for beta cells?", "Is TMEM27 a marker for beta cells?"),
        ("Is X true?\nExplanation: the claim says so.", "Is X true?"),
        ("TMEM27 is a marker.", None),
        ("Is X true? Or is Y?", None),
        ("", None),
    ],
)
def test_only_a_one_question_reply_is_kept(reply, question):
    llm = ScriptedLLM(default=reply)
    assert to_bioasq.rewrite(llm, "TMEM27 is a marker for beta cells.") == question
    (call,) = llm.calls_to("complete")
    assert call.messages[0].content == to_bioasq.REWRITE
    assert call.messages[1].content == "TMEM27 is a marker for beta cells."


@pytest.mark.parametrize(
    ("claim", "cue"),
    [
        ("There is no increased risk of hypospadias with clomiphene.", True),
        ("Taking 400mg of vitamin E does not prevent prostate cancer.", True),
        ("Statins don't lower mortality.", True),
        ("Notch signalling controls nodal identity.", False),
        ("Knockout mice are viable.", False),
    ],
)
def test_negation_cues(claim, cue):
    assert bool(to_bioasq.NEGATION.search(claim)) is cue


def test_the_file_loads(claims, abstracts, tmp_path):
    import json

    from sciera.datasets import load_dataset

    chosen = [c for c in claims.values() if len({g.label for g in c.evidence.values()}) == 1]
    items = [to_bioasq.scifact_question(c, f"Is claim {c.id} true?", abstracts) for c in chosen[:5]]
    path = tmp_path / "bq.json"
    path.write_text(json.dumps({"questions": items}), encoding="utf-8")
    data = load_dataset("bioasq", path)
    assert len(data.queries) == 5
    assert set(data.labels.values()) <= {"yes", "no"}


def test_the_command_writes_the_verifiers_dev_claims(shared_data, tmp_path, monkeypatch):
    import json

    import typer
    from click.testing import CliRunner

    import sciera.llm.registry
    from sciera.cli import app, dataset_bioasq_cmds  # noqa: F401  (registers the commands)
    from sciera.verify.network import read_card, resolve_model

    monkeypatch.setattr(sciera.llm.registry, "make_llm", lambda s: ScriptedLLM(default="Is it?"))
    monkeypatch.setenv("SCIERA_HOME", str(tmp_path / "home"))
    path = tmp_path / "dev.json"
    args = ["dataset", "bioasq-from-scifact", "--out", str(path)]
    args += ["--claims", str(shared_data / "scifact" / "claims_train.jsonl")]
    args += ["--sentences", str(shared_data / "scifact" / "corpus_sentences.jsonl")]
    result = CliRunner().invoke(typer.main.get_group(app), args)
    assert result.exit_code == 0, result.output
    dev = read_card(resolve_model("scifact-verifier"))["data"]["dev_ids"]
    questions = json.loads(path.read_text(encoding="utf-8"))["questions"]
    assert {q["body"] for q in questions} == {"Is it?"}
    assert {q["id"].removeprefix("scifact-") for q in questions} < {str(i) for i in dev}
    assert f"{len(questions)} yes/no questions" in result.output
    assert f"from {len(dev)} dev claims of scifact-verifier" in result.output
