"""Model soups: the averaging, the greedy choice, what ingredients must share, the card."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from sciera.errors import ScieraError  # noqa: E402
from sciera.train.lineage import spec_from_card  # noqa: E402
from sciera.train.prepare import DataSpec, run_key  # noqa: E402
from sciera.train.soup import Ingredient, SoupJob, average, check_compatible, greedy  # noqa: E402


def _card(dev_qids=("1", "2"), seed=0, **over):
    card = {
        "name": "m",
        "kind": "cross-encoder reranker",
        "command": "sciera train cross-encoder --out m",
        "data": {"corpus": "c", "queries": "q", "qrels": "r", "dev_qids": list(dev_qids)},
        "config": {"retriever": "hybrid", "depth": 30, "dev_fraction": 0.12, "seed": seed},
        "splits": {"excluded": [{"kind": "qrels", "path": "test.tsv"}]},
        "max_length": 256,
    }
    card.update(over)
    return card


def _state(value: float, shape=(2, 3)):
    return {"w": torch.full(shape, value, dtype=torch.float16), "b": torch.tensor([value])}


def test_average_is_the_elementwise_mean_in_float32():
    got = average([_state(1.0), _state(2.0), _state(6.0)])
    assert got["w"].dtype == torch.float32 and torch.all(got["w"] == 3.0)
    assert got["b"].tolist() == [3.0]


def test_greedy_adds_best_first_and_keeps_only_what_does_not_lower_the_score():
    alone = {0: 0.70, 1: 0.75, 2: 0.72, 3: 0.60}
    soups = {(1, 2): 0.76, (1, 2, 0): 0.74, (1, 2, 3): 0.76}
    asked = []

    def score(members):
        asked.append(tuple(members))
        return (alone[members[0]],) if len(members) == 1 else (soups[tuple(members)],)

    assert greedy(4, score) == [1, 2, 3]  # 0 lowered the soup; 3 ties, and ties are kept
    assert asked[:4] == [(0,), (1,), (2,), (3,)]
    assert asked[4:] == [(1, 2), (1, 2, 0), (1, 2, 3)]


def test_ingredients_must_share_dev_split_source_and_shapes():
    ref = Ingredient("a", None, _card(), "d1")
    check_compatible([ref, Ingredient("b", None, _card(), "d2")], [_state(1), _state(2)])
    other_dev = Ingredient("b", None, _card(dev_qids=("1", "3")), "d2")
    with pytest.raises(ScieraError, match=r"^b: cannot go into one soup with a: data.dev_qids"):
        check_compatible([ref, other_dev], [_state(1), _state(2)])
    other_seed = Ingredient("c", None, _card(seed=1), "d3")
    with pytest.raises(ScieraError, match="data source"):
        check_compatible([ref, other_seed], [_state(1), _state(2)])
    # calibration is the soup's own: other questions or styles do not keep models apart
    calibrated = _card()
    calibrated["config"].update(calibration_questions=150, calibration_styles=["question", "yesno"])
    check_compatible([ref, Ingredient("f", None, calibrated, "d6")], [_state(1), _state(2)])
    longer = Ingredient("d", None, _card(max_length=512), "d4")
    with pytest.raises(ScieraError, match="max_length"):
        check_compatible([ref, longer], [_state(1), _state(2)])
    with pytest.raises(ScieraError, match="names or shapes"):
        check_compatible([ref, Ingredient("e", None, _card(), "d5")], [_state(1), _state(2, (3,))])


def test_a_soup_needs_two_models_and_a_known_method():
    with pytest.raises(ScieraError, match="at least two"):
        SoupJob(("a", "a"), "out")
    with pytest.raises(ScieraError, match="greedy, uniform"):
        SoupJob(("a", "b"), "out", method="mean")


def test_abstracts_banned_from_calibration_never_change_a_runs_key_and_come_back_from_a_card():
    base = DataSpec("corpus", "queries.jsonl", "qrels/train.tsv")
    banned = DataSpec("corpus", "queries.jsonl", "qrels/train.tsv", calibration_banned=("d1",))
    assert run_key({"epochs": 1}, banned) == run_key({"epochs": 1}, base)
    card = _card()
    assert spec_from_card(card).calibration_banned == ()
    card["data"]["calibration_banned"] = ["d1", "d2"]
    assert spec_from_card(card).calibration_banned == ("d1", "d2")


def test_the_card_of_a_soup_lists_its_ingredients_their_commands_and_the_trials():
    from sciera.artifacts.card import render

    fused = {"ndcg@10": 0.78, "hit@1": 0.70}
    modes = {"ce": {"ndcg@10": 0.76, "hit@1": 0.65}, "fused": fused}
    card = _card(
        name="soup",
        base="a greedy soup of 1 of 2 models",
        command="sciera train soup a b --out soup",
        soup={
            "selection": "fused nDCG@10 on dev",
            "chosen": ["a"],
            "ingredients": [
                {
                    "name": "a",
                    "command": "sciera train cross-encoder --out a",
                    "train_queries": 700,
                    "loss": "listwise",
                },
                {
                    "name": "b",
                    "command": "sciera train cross-encoder --out b",
                    "train_queries": 1100,
                    "loss": "bce",
                    "continued_from": {"name": "o", "what": "old", "command": "sciera train o"},
                },
            ],
            "trials": [{"members": ["a"], "modes": modes}, {"members": ["a", "b"], "modes": modes}],
        },
        dev={"modes": {"fused": {**fused, "ece": 0.01}}},
    )
    card["data"].update(store_fingerprint="f", dev_queries=2, calibration_banned=["x"])
    card["versions"] = {}
    text = render(card)
    assert "a greedy soup of 1 of 2 models" in text and "sciera train soup a b --out soup" in text
    assert "`a` (in the soup; 700 training queries" in text and "`b` (left out" in text
    assert "  sciera train o" in text and "  sciera train cross-encoder --out b" in text
    assert "| a + b | 0.780 | 0.700 | 0.760 | 0.650 |" in text
    assert "never a calibration question): 1" in text


def test_recalibration_starts_from_the_questions_the_models_own_run_logged(tmp_path):
    from sciera.train.calibration_questions import CACHE
    from sciera.train.recalibrate import seed_questions

    model = tmp_path / "models" / "m"
    (model.parent / "m.work").mkdir(parents=True)
    (model.parent / "m.work" / CACHE).write_text('{"key": "k"}\n')
    work = tmp_path / "work" / "recalibrate-m"
    work.mkdir(parents=True)
    seed_questions(model, work)
    assert (work / CACHE).read_text() == '{"key": "k"}\n'
    (work / CACHE).write_text("mine\n")  # a log of its own is never replaced
    seed_questions(model, work)
    assert (work / CACHE).read_text() == "mine\n"
    seed_questions(tmp_path / "models" / "other", tmp_path)  # nothing logged: nothing done
    assert not (tmp_path / CACHE).exists()
