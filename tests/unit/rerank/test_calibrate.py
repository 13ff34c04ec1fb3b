import numpy as np
import pytest

from sciera.errors import ScieraError
from sciera.rerank.calibrate import (
    Calibrator,
    artifact_name,
    artifact_path,
    expected_calibration_error,
    find_calibrator,
    first_stage_features,
    fit_calibrator,
    fit_logistic,
    listwise_features,
    reliability,
    reliability_diagram,
    rescale,
)


def test_newton_recovers_known_logistic_coefficients():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 2))
    p = 1 / (1 + np.exp(-(0.5 + 2.0 * X[:, 0] - 1.0 * X[:, 1])))
    y = (rng.random(20000) < p).astype(float)
    coef, intercept = fit_logistic(X, y, l2=1e-6)
    np.testing.assert_allclose(coef, [2.0, -1.0], atol=0.08)
    assert intercept == pytest.approx(0.5, abs=0.06)


def test_separable_data_stays_finite_with_l2():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    coef, intercept = fit_logistic(X, np.array([0, 0, 1, 1]), l2=1.0)
    assert np.isfinite(coef).all() and np.isfinite(intercept) and coef[0] > 0


def test_ece_hand_computed():
    # bin [0.1,0.2): conf .15 (2 items) freq .5 -> |.35| * 2/4; bin [0.9,1): conf .95 freq 1
    probs, labels = [0.1, 0.2 - 1e-9, 0.9, 1.0], [0, 1, 1, 1]
    rows = reliability(probs, labels)
    assert [r["count"] for r in rows] == [2, 2]
    expected = 0.5 * abs(0.5 - (0.1 + 0.2 - 1e-9) / 2) + 0.5 * abs(1.0 - 0.95)
    assert expected_calibration_error(probs, labels) == pytest.approx(expected)


def test_artifact_roundtrip_and_key_check(tmp_path):
    X = np.array([[0.1, 1.0], [0.2, 0.5], [0.8, 1.0], [0.9, 0.3], [0.5, 0.2]])
    cal = fit_calibrator(
        X, [0, 0, 1, 1, 0], ["grade", "reciprocal_rank"], model_id="m", prompt_version="p@1"
    )
    path = cal.save(artifact_path(tmp_path, "m", "p@1"))
    back = Calibrator.load(path)
    assert back == cal
    x = {"grade": 0.85, "reciprocal_rank": 1.0}
    assert back.predict(x) == pytest.approx(cal.predict(x))
    assert cal.predict({"grade": 0.9, "reciprocal_rank": 0.5}) > cal.predict(
        {"grade": 0.1, "reciprocal_rank": 0.5}
    )
    cal.check_key("m", "p@1")
    with pytest.raises(ScieraError, match="fitted for model"):
        cal.check_key("other", "p@1")
    with pytest.raises(ScieraError, match="needs features"):
        cal.predict({"grade": 0.5})


def test_fit_needs_both_classes():
    with pytest.raises(ValueError, match="both"):
        fit_calibrator(np.ones((3, 1)), [1, 1, 1], ["grade"], model_id="m", prompt_version="p")


def test_first_stage_features():
    rows = first_stage_features([3.0, 2.0, 1.0], [1, 2, 3])
    assert rows[1] == {"first_stage_norm": 0.5, "reciprocal_rank": 0.5}


def test_listwise_features_are_the_logits_softmax_over_the_list():
    rows = listwise_features([2.0, 0.0, 0.0])
    p = [r["ce_softmax"] for r in rows]
    assert sum(p) == pytest.approx(1.0) and p[1] == p[2]
    assert p[0] == pytest.approx(np.exp(2) / (np.exp(2) + 2))
    # shift-invariant and stable for large logits; an empty list has no rows
    assert [r["ce_softmax"] for r in listwise_features([1002.0, 1000.0, 1000.0])] == (
        pytest.approx(p)
    )
    assert listwise_features([]) == []


def test_reliability_diagram_png(tmp_path):
    path = reliability_diagram({"raw": ([0.1, 0.9, 0.7], [0, 1, 0])}, tmp_path / "r.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_users_calibrator_wins_over_the_bundled_one(tmp_path):
    home, bundled = tmp_path / "home", tmp_path / "bundled"
    assert find_calibrator(home, "m", "p@1", bundled=bundled) is None
    shipped = bundled / artifact_name("m", "p@1")
    shipped.parent.mkdir()
    shipped.write_text("{}")
    assert find_calibrator(home, "m", "p@1", bundled=bundled) == shipped
    assert find_calibrator(home, "m", "p@2", bundled=bundled) is None  # other prompt version
    own = artifact_path(home, "m", "p@1")
    own.parent.mkdir(parents=True)
    own.write_text("{}")
    assert find_calibrator(home, "m", "p@1", bundled=bundled) == own


def test_bundled_calibrators_load_and_match_the_current_grading_prompt():
    # a calibrator is tied to the grading prompt's version: after a prompt change the shipped
    # one would silently stop applying, so refit it (sciera train deepera-calibrator)
    from sciera.rerank.calibrate import BUNDLED
    from sciera.rerank.deepera.agent import calibration_key

    for path in sorted(BUNDLED.glob("*.json")):
        cal = Calibrator.load(path)
        assert cal.prompt_version in {calibration_key(), calibration_key(False)}, path.name
        assert path.name == artifact_name(cal.model_id, cal.prompt_version)
        assert set(cal.features) <= {"grade", "p_yes", "first_stage_norm", "reciprocal_rank"}


def test_upper_bound_takes_each_free_feature_at_its_favourable_end():
    cal = Calibrator("m", "p", ("grade", "p_yes", "reciprocal_rank"), (0.0,) * 3, (1.0,) * 3,
                     (2.0, -1.0, 3.0), -1.0, 1.0, 10, 5)  # fmt: skip
    fixed = {"reciprocal_rank": 0.5}
    best = cal.upper_bound(fixed, ("grade", "p_yes"))
    assert best == pytest.approx(cal.predict({"grade": 1.0, "p_yes": 0.0, **fixed}))
    grid = np.linspace(0, 1, 11)
    assert all(cal.predict({"grade": g, "p_yes": y, **fixed}) <= best for g in grid for y in grid)
    with pytest.raises(ScieraError, match="needs features"):
        cal.upper_bound({}, ("grade", "p_yes"))


def test_inputs_are_clipped_to_the_training_range_and_bound_it(tmp_path):
    X = np.array([[0.3, 1.0], [0.4, 0.5], [0.6, 1.0], [0.7, 0.25], [0.5, 0.2], [0.65, 0.5]])
    cal = fit_calibrator(X, [0, 0, 1, 1, 0, 1], ["grade", "reciprocal_rank"],
                         model_id="m", prompt_version="p")  # fmt: skip
    assert cal.lo == (0.3, 0.2) and cal.hi == (0.7, 1.0)
    rr = {"reciprocal_rank": 0.5}
    assert cal.predict({"grade": 1.0, **rr}) == cal.predict(
        {"grade": 0.7, **rr}
    )  # no extrapolation
    assert cal.predict({"grade": 0.0, **rr}) == cal.predict({"grade": 0.3, **rr})
    grid = [cal.predict({"grade": g, **rr}) for g in np.linspace(0, 1, 21)]
    assert cal.upper_bound(rr, ("grade",)) == pytest.approx(max(grid))
    assert Calibrator.load(cal.save(tmp_path / "c.json")) == cal


def test_rescale_keeps_the_order_and_refits_the_probabilities():
    """Platt scaling of a fitted model on new rows: one logistic model over the same
    features, ranking any two rows as before, its probabilities fitted to the new rows
    (here positives at lower scores than the original rows had)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 2))
    y = (X @ np.array([2.0, 1.0]) + rng.normal(size=400) > 1.5).astype(int)
    cal = fit_calibrator(X, y, ["a", "b"], model_id="m", prompt_version="v")
    X2 = rng.normal(size=(400, 2))
    y2 = (X2 @ np.array([2.0, 1.0]) + rng.normal(size=400) > -0.5).astype(int)
    both_X, both_y = np.vstack([X, X2]), np.concatenate([y, y2])
    out = rescale(cal, both_X, both_y, {"rescaled_on": "new rows"})
    p_old, p_new = cal.predict_matrix(both_X), out.predict_matrix(both_X)
    assert (np.argsort(p_old, kind="stable") == np.argsort(p_new, kind="stable")).all()
    assert abs(p_new.mean() - both_y.mean()) < 0.02 < abs(p_old.mean() - both_y.mean())
    assert out.features == cal.features and out.mean == cal.mean
    assert out.n_train == 800 and out.notes["rescaled_on"] == "new rows"
    with pytest.raises(ValueError, match="invert"):
        rescale(cal, both_X, 1 - both_y, {})
