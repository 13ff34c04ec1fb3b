"""The cross-encoder sciera ships (`scifact-minilm`): present, small, carded, loaded offline
by its short name as the default, and calibrated. Its quality is measured by
benchmarks/experiments/scifact_ce_shipped.yaml (README rows), not asserted here."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def shipped():
    from sciera.artifacts.registry import CROSS_ENCODER, SHIPPED

    return SHIPPED[CROSS_ENCODER]["scifact-minilm"]


def test_shipped_model_files_and_card(shipped):
    size = sum(f.stat().st_size for f in shipped.iterdir() if f.is_file())
    assert size <= 50 * 2**20, f"shipped model is {size / 2**20:.1f} MB (limit 50)"
    card = json.loads((shipped / "sciera-card.json").read_text())
    # trained, or a soup of trained models: every model in it reproducible, none on SSLI
    # evaluation abstracts
    # made by its recipe (tests/unit/train/test_shipped_recipes.py maps it to this card)
    assert card["command"] == f"sciera train cross-encoder {card['recipe']['path']}"
    if "soup" in card:
        soup = card["soup"]
        trained = [i["command"] for i in soup["ingredients"] if i["name"] in soup["chosen"]]
        assert len(trained) >= 2
        for command in trained:
            assert command.startswith("sciera train cross-encoder")
            assert "--exclude-ssli" in command
    assert card["recipe"]["content"]["data"]["exclude_ssli"]
    kinds = {s["kind"] for s in card["splits"]["excluded"]}
    assert kinds == {"qrels", "ssli"}
    assert card["score_mode"] in ("ce", "fused")
    assert (shipped / card["calibrators"]["calibrated"]).is_file()
    assert (shipped / card["calibrators"]["fused"]).is_file()


def test_shipped_model_carries_the_questions_its_calibrators_saw(shipped):
    """``sciera train recalibrate scifact-minilm`` on a fresh machine starts from this log
    instead of asking the LLM for every question again (an hour on 2 cores)."""
    import gzip

    from sciera.artifacts.files import CALIBRATION_QUESTIONS_FILE

    card = json.loads((shipped / "sciera-card.json").read_text())
    cq = card["data"]["calibration_questions"]
    rows = [
        json.loads(x)
        for x in gzip.decompress((shipped / CALIBRATION_QUESTIONS_FILE).read_bytes()).splitlines()
    ]
    kept = [r for r in rows if r["rank"] is not None and r["rank"] <= cq["keep_top"]]
    assert len(kept) == cq["kept"]
    assert len({r["key"] for r in rows}) == len(card["config"]["calibration_styles"])
    assert set(cq["examples"]) <= {r["query"] for r in kept}


def test_default_cross_encoder_is_the_shipped_one_and_ranks_gold_first(scifact_dir):
    from sciera.corpus import load_beir_queries, load_qrels
    from sciera.rerank.registry import make_reranker
    from sciera.types import Passage, Ranking, ScoredPassage

    rr = make_reranker("cross_encoder")
    assert rr.model_name == "scifact-minilm" and rr.calibrator is not None
    assert rr.score_mode == "fused"  # the card's dev metrics under default_score_mode
    from sciera.rerank.onnx_int8 import int8_is_faster

    assert rr.precision == ("int8" if int8_is_faster() else "fp32")  # auto, by the CPU
    rr = make_reranker("cross_encoder", score="calibrated")
    docs = {}
    for line in (scifact_dir / "corpus.jsonl").read_text().splitlines():
        d = json.loads(line)
        docs[d["_id"]] = d
    queries = load_beir_queries(scifact_dir)
    qrels = load_qrels(scifact_dir / "qrels" / "test.tsv")
    qid = sorted(qrels)[0]
    gold = next(iter(qrels[qid]))
    others = [d for d in list(docs)[:200] if d not in qrels[qid]][:9]
    items = tuple(
        ScoredPassage(Passage(f"{d}#0", d, 0, docs[d]["title"], docs[d]["text"]), 1.0, i + 1)
        for i, d in enumerate([*others, gold])
    )
    out = rr.rerank(queries[qid], Ranking(queries[qid], items, "hybrid"))
    assert all(0.0 <= it.score <= 1.0 for it in out)
    # calibrated mode is a monotone map of the logit: the order is the logits' order
    logits = [it.provenance["cross_encoder"]["logit"] for it in out]
    assert logits == sorted(logits, reverse=True)
    assert {it.provenance["cross_encoder"]["precision"] for it in out} == {rr.precision}
    assert gold in {it.passage.doc_id for it in out}


def test_int8_runs_the_onnx_export_with_its_own_calibrators(tmp_path, caplog):
    """precision=int8 exports the shipped weights to int8 ONNX once (cached under the home),
    scores close to fp32 and calibrates with the card's int8 calibrators, no warning."""
    import numpy as np

    from sciera.rerank.cross_encoder import CrossEncoderReranker
    from sciera.types import Passage

    with pytest.raises(ValueError, match="precision"):
        CrossEncoderReranker(precision="fp16")
    fp32 = CrossEncoderReranker(precision="fp32", home=tmp_path)
    assert fp32._int8 is None
    with caplog.at_level("WARNING"):
        rr = CrossEncoderReranker(precision="int8", home=tmp_path)
    assert not [r for r in caplog.records if "int8" in r.getMessage()]
    assert rr._int8.path.is_file() and tmp_path in rr._int8.path.parents
    assert rr.calibrator.features == fp32.calibrator.features
    assert rr.card["calibrators_int8"]["fused"].endswith("-int8.json")
    texts = [
        "Vitamin D supplementation reduced hip fractures in women over 65.",
        "Serum 25(OH)D and the risk of falls and fractures in older adults.",
        "Galaxy rotation curves imply dark matter halos.",
        "Statins lower LDL cholesterol and cardiovascular events.",
    ]
    passages = [Passage(f"{i}#0", str(i), 0, "", t) for i, t in enumerate(texts)]
    q = "vitamin D and fracture risk"
    a, b = np.array(fp32.logits(q, passages)), np.array(rr.logits(q, passages))
    # close logits; the two vitamin D passages above the two others at both precisions (their
    # own order is a near tie, 0.26 apart in fp32, that int8 may swap)
    assert np.abs(a - b).max() < 1.0 and set(np.argsort(-a)[:2]) == set(np.argsort(-b)[:2]) == {
        0,
        1,
    }
    p_on, p_off = rr.score(q, passages[0]), rr.score(q, passages[2])
    assert 0.0 <= p_off < p_on <= 1.0
    # a second int8 reranker reuses the cached export; the default (auto) is int8 for the
    # shipped model on a CPU where int8 is the faster, fp32 elsewhere
    from sciera.rerank.onnx_int8 import int8_is_faster

    again = CrossEncoderReranker(precision="int8", home=tmp_path)
    assert again._int8.path == rr._int8.path
    auto = CrossEncoderReranker(home=tmp_path)
    if int8_is_faster():
        assert auto.precision == "int8" and auto._int8.path == rr._int8.path
    else:
        assert auto.precision == "fp32" and auto._int8 is None
