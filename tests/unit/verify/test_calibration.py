"""The verifier's calibrators recover known parameters and round-trip through JSON."""

from __future__ import annotations

import numpy as np
import pytest

from sciera.verify import calibration as cal


def test_temperature_scaling_recovers_the_temperature_and_lowers_ece(tmp_path):
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, size=(4000, 3))
    p_true = cal.softmax(z / 2.5 + np.array([0.0, 0.4, -0.3]))
    y = np.array([rng.choice(3, p=p) for p in p_true])
    fitted = cal.TemperatureScaling.fit(z, y)
    assert fitted.temperature == pytest.approx(2.5, rel=0.1)
    assert fitted.bias[1] - fitted.bias[0] == pytest.approx(0.4, abs=0.15)
    assert cal.top_label_ece(fitted(z), y) < cal.top_label_ece(cal.softmax(z), y)
    again = cal.load(cal.save(fitted, tmp_path / "t.json"))
    assert again == fitted
    np.testing.assert_allclose(again(z[:5]), fitted(z[:5]))


def test_platt_scaling_recovers_slope_and_intercept(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(0, 2, size=5000)
    y = (rng.random(5000) < cal.sigmoid(0.5 * x - 1.0)).astype(int)
    fitted = cal.PlattScaling.fit(x, y)
    assert (fitted.a, fitted.b) == (pytest.approx(0.5, abs=0.08), pytest.approx(-1.0, abs=0.12))
    assert cal.load(cal.save(fitted, tmp_path / "p.json")) == fitted


def test_combiner_leans_on_the_informative_model(tmp_path):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, size=3000)
    good = np.full((3000, 3), 0.1)
    good[np.arange(3000), y] = 0.8
    noise = cal.softmax(rng.normal(size=(3000, 3)))
    comb = cal.LogisticCombiner.fit([noise, good], y, ("noise", "good"))
    assert (comb(noise, good).argmax(1) == y).mean() > 0.95
    w = np.abs(np.array(comb.weights))
    assert w[:, 3:].sum() > 5 * w[:, :3].sum()
    again = cal.load(cal.save(comb, tmp_path / "c.json"))
    np.testing.assert_allclose(again(noise[:4], good[:4]), comb(noise[:4], good[:4]))


def test_ece_by_hand():
    probs = np.array([[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.3, 0.6, 0.1]])
    # bin (0.8, 0.9]: confidence 0.9, accuracy 0.5; bin (0.5, 0.6]: 0.6 vs 1.0
    assert cal.top_label_ece(probs, [0, 1, 1]) == pytest.approx(2 / 3 * 0.4 + 1 / 3 * 0.4)
    assert cal.binary_ece(np.array([1.0, 0.0]), [1, 0]) == pytest.approx(0.0)


def test_temperature_alone_keeps_the_models_class_balance():
    rng = np.random.default_rng(3)
    z = rng.normal(0, 3, size=(3000, 3))
    p_true = cal.softmax(z / 2.0 + np.array([0.0, 0.0, 1.5]))  # a prior toward label 2
    y = np.array([rng.choice(3, p=p) for p in p_true])
    alone = cal.TemperatureScaling.fit(z, y, bias=False)
    assert alone.bias == (0.0, 0.0, 0.0)
    np.testing.assert_array_equal(alone(z).argmax(1), z.argmax(1))  # argmax unchanged
    assert cal.TemperatureScaling.fit(z, y).bias[2] > 1.0
