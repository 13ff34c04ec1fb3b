"""Calibration of verifier outputs, fitted on a dev split and stored as small JSON files.

- :class:`TemperatureScaling`: the verdict head's three logits divided by one temperature
  plus a bias per label, so P(label) reads as a frequency (Guo et al. 2017, with the
  per-class bias of "vector scaling" restricted to the intercepts).
- :class:`PlattScaling`: a rationale logit mapped to P(rationale) by a logistic curve.
- :class:`LogisticCombiner`: a multinomial logistic regression over several models' log
  probabilities (the trained verdict head and the LLM's label probabilities).

Each fits by maximum likelihood (L-BFGS, a small L2 penalty) and reports the
top-label expected calibration error (:func:`top_label_ece`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

EPS = 1e-6


def softmax(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))


def binary_probabilities(logits: Sequence[np.ndarray], calibrator: Any = None) -> list[list[float]]:
    """P from each array of logits: ``calibrator``'s (a :class:`PlattScaling`), else a plain
    sigmoid."""
    return [
        [float(p) for p in (calibrator(x) if calibrator is not None else sigmoid(x))]
        for x in logits
    ]


def top_label_ece(probs: np.ndarray, labels: Sequence[int], bins: int = 10) -> float:
    """Expected calibration error of the top label: over equal-width confidence bins, the
    weighted mean |accuracy - mean confidence|."""
    probs = np.asarray(probs, dtype=float)
    y = np.asarray(labels)
    if len(y) == 0:
        return 0.0
    conf = probs.max(axis=1)
    right = (probs.argmax(axis=1) == y).astype(float)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1], right=True), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            total += m.mean() * abs(right[m].mean() - conf[m].mean())
    return float(total)


def binary_ece(p: np.ndarray, y: Sequence[int], bins: int = 10) -> float:
    """ECE of P(positive) against 0/1 outcomes."""
    p = np.asarray(p, dtype=float)
    return top_label_ece(np.column_stack([1 - p, p]), np.asarray(y, dtype=int), bins)


def _minimize(fun: Any, x0: np.ndarray) -> np.ndarray:
    from scipy.optimize import minimize

    return np.asarray(minimize(fun, x0, method="L-BFGS-B").x)


@dataclass(frozen=True)
class TemperatureScaling:
    """P = softmax(logits / temperature + bias)."""

    temperature: float = 1.0
    bias: tuple[float, ...] = (0.0, 0.0, 0.0)
    kind: str = "temperature"

    def __call__(self, logits: np.ndarray) -> np.ndarray:
        z = np.asarray(logits, dtype=float) / self.temperature + np.asarray(self.bias)
        return softmax(z)

    @classmethod
    def fit(
        cls, logits: np.ndarray, labels: Sequence[int], l2: float = 1e-3, bias: bool = True
    ) -> TemperatureScaling:
        """Maximum likelihood on (logits, labels); ``bias=False`` fits the temperature alone
        (the labels' prior in the fitting set is then not learned: the model's own class
        balance stays, for inputs whose prior differs, such as questions)."""
        z = np.asarray(logits, dtype=float)
        y = np.asarray(labels, dtype=int)
        k = z.shape[1] if bias else 1

        def nll(params: np.ndarray) -> float:
            t = np.exp(params[0])
            b = np.concatenate([[0.0], params[1:]])  # the first bias fixed: softmax is shift-free
            lp = z / t + b
            lp = lp - lp.max(axis=1, keepdims=True)
            lp = lp - np.log(np.exp(lp).sum(axis=1, keepdims=True))
            return float(-lp[np.arange(len(y)), y].mean() + l2 * np.sum(params[1:] ** 2))

        x = _minimize(nll, np.zeros(k))
        shift = (0.0, *(float(v) for v in x[1:])) if bias else (0.0,) * z.shape[1]
        return cls(float(np.exp(x[0])), shift)


@dataclass(frozen=True)
class PlattScaling:
    """P = sigmoid(a * logit + b)."""

    a: float = 1.0
    b: float = 0.0
    kind: str = "platt"

    def __call__(self, logits: np.ndarray) -> np.ndarray:
        return sigmoid(self.a * np.asarray(logits, dtype=float) + self.b)

    @classmethod
    def fit(cls, logits: np.ndarray, labels: Sequence[int], l2: float = 1e-4) -> PlattScaling:
        x = np.asarray(logits, dtype=float)
        y = np.asarray(labels, dtype=float)

        def nll(params: np.ndarray) -> float:
            p = np.clip(sigmoid(params[0] * x + params[1]), EPS, 1 - EPS)
            return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean() + l2 * params[0] ** 2)

        a, b = _minimize(nll, np.array([1.0, 0.0]))
        return cls(float(a), float(b))


@dataclass(frozen=True)
class LogisticCombiner:
    """P = softmax(W @ [log p_1, log p_2, ...] + c): one weight row per label over the log
    probabilities of every combined model (``inputs`` names them in order)."""

    weights: tuple[tuple[float, ...], ...]
    intercept: tuple[float, ...]
    inputs: tuple[str, ...]
    kind: str = "logistic"

    def __call__(self, *probs: np.ndarray) -> np.ndarray:
        x = np.hstack([np.log(np.clip(np.asarray(p, dtype=float), EPS, 1.0)) for p in probs])
        return softmax(x @ np.asarray(self.weights).T + np.asarray(self.intercept))

    @classmethod
    def fit(
        cls,
        probs: Sequence[np.ndarray],
        labels: Sequence[int],
        inputs: Sequence[str],
        l2: float = 1e-2,
    ) -> LogisticCombiner:
        x = np.hstack([np.log(np.clip(np.asarray(p, dtype=float), EPS, 1.0)) for p in probs])
        y = np.asarray(labels, dtype=int)
        k, d = 3, x.shape[1]

        def nll(params: np.ndarray) -> float:
            w = params[: k * d].reshape(k, d)
            c = params[k * d :]
            z = x @ w.T + c
            z = z - z.max(axis=1, keepdims=True)
            lp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            return float(-lp[np.arange(len(y)), y].mean() + l2 * np.sum(w**2))

        start = np.zeros(k * d + k)
        for i in range(k):  # start as the product of the models (each log p_i on its label)
            for j in range(d // k):
                start[i * d + j * k + i] = 1.0
        params = _minimize(nll, start)
        w = params[: k * d].reshape(k, d)
        c = params[k * d :]
        return cls(
            tuple(tuple(float(v) for v in row) for row in w),
            tuple(float(v) for v in c),
            tuple(inputs),
        )

    def shifted(self, shift: Sequence[float]) -> LogisticCombiner:
        """The same combiner with ``shift`` added to its intercepts (a prior correction)."""
        moved = tuple(c + float(d) for c, d in zip(self.intercept, shift, strict=True))
        return LogisticCombiner(self.weights, moved, self.inputs, self.kind)


_KINDS = {
    "temperature": TemperatureScaling,
    "platt": PlattScaling,
    "logistic": LogisticCombiner,
}


def save(obj: Any, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(asdict(obj), indent=1) + "\n", encoding="utf-8")
    return path


def load(path: str | Path) -> Any:
    """A calibrator written by :func:`save` (its ``kind`` says which)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    cls = _KINDS[data.pop("kind")]
    for key in ("bias", "intercept", "inputs"):
        if isinstance(data.get(key), list):
            data[key] = tuple(data[key])
    if "weights" in data:
        data["weights"] = tuple(tuple(r) for r in data["weights"])
    return cls(**data)
