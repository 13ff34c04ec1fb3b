"""``sciera dataset bioasq-from-pubmedqa``: PubMedQA PQA-L -> BioASQ yes/no JSON; the
hand-made fixture's questions come back."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from click.testing import CliRunner

from sciera.cli import app, dataset_bioasq_cmds  # noqa: F401  (registers the commands)
from sciera.datasets.to_bioasq import convert_pubmedqa, pubmedqa_question

FIXTURE = Path(__file__).resolve().parent / "data" / "bioasq_yesno_5_from_pubmedqa_pqal_dev.json"


def test_converter_gives_the_fixture_questions(shared_data: Path, tmp_path: Path):
    from sciera.datasets import load_dataset

    pqal = json.loads((shared_data / "pubmedqa" / "pqal_dev.json").read_text(encoding="utf-8"))
    out = convert_pubmedqa(pqal)
    assert len(out["questions"]) == sum(v["final_decision"] != "maybe" for v in pqal.values())
    by_id = {q["id"]: q for q in out["questions"]}
    for want in json.loads(FIXTURE.read_text(encoding="utf-8"))["questions"]:
        got = by_id[want["id"]]
        for key in ("body", "type", "exact_answer", "ideal_answer", "documents"):
            assert got[key] == want[key], key
        assert got["snippets"][0]["text"] == want["snippets"][0]["text"]  # the long answer
        pmid = want["id"].removeprefix("pqal-")
        assert [s["text"] for s in got["snippets"][1:]] == pqal[pmid]["CONTEXTS"]
        abstract = " ".join([*pqal[pmid]["CONTEXTS"], pqal[pmid]["LONG_ANSWER"]])
        for s in got["snippets"]:
            assert abstract[s["offsetInBeginSection"] : s["offsetInEndSection"]] == s["text"]
    path = tmp_path / "bq.json"
    pubmedqa = str(shared_data / "pubmedqa" / "pqal_dev.json")
    args = ["dataset", "bioasq-from-pubmedqa", "--pubmedqa", pubmedqa, "--out", str(path)]
    result = CliRunner().invoke(typer.main.get_group(app), [*args, "--limit", "7"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{path}: 7 yes/no questions")
    data = load_dataset("bioasq", path)
    assert len(data.queries) == 7 and set(data.labels.values()) <= {"yes", "no"}


def test_maybe_items_are_left_out():
    item = {"QUESTION": "Q?", "CONTEXTS": ["c."], "LONG_ANSWER": "a.", "final_decision": "maybe"}
    assert pubmedqa_question("1", item) is None
    assert pubmedqa_question("1", {**item, "final_decision": "no"})["exact_answer"] == "no"


def test_only_some_ids_and_the_conclusion_alone(shared_data: Path):
    pqal = json.loads((shared_data / "pubmedqa" / "pqal_dev.json").read_text(encoding="utf-8"))
    yes_no = [k for k, v in pqal.items() if v["final_decision"] != "maybe"][:3]
    maybe = next(k for k, v in pqal.items() if v["final_decision"] == "maybe")
    out = convert_pubmedqa(pqal, only={*yes_no, maybe}, conclusion_only=True)
    assert [q["id"] for q in out["questions"]] == [f"pqal-{k}" for k in yes_no]
    for q in out["questions"]:
        pmid = q["id"].removeprefix("pqal-")
        assert [s["text"] for s in q["snippets"]] == [pqal[pmid]["LONG_ANSWER"].strip()]
