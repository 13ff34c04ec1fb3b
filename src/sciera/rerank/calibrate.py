"""Calibration: map raw reranker signals to P(relevant | features) so tau means the same
thing whatever produced the score.

Platt scaling generalized to several features: L2-regularized logistic regression fitted
by Newton's method (IRLS) in numpy. Features are standardized with the training mean and
std (stored in the artifact); the intercept is not penalized. The fitted model is a
versioned JSON artifact keyed by (model_id, prompt version): a calibrator fitted for one
model or prompt refuses to score another. Fit on train splits only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from sciera.errors import ScieraError

FORMAT = "sciera-calibrator"
FORMAT_VERSION = 1
# The signals a reranker can hand over; a calibrator uses any subset, in a fixed order.
FEATURES = ("grade", "p_yes", "first_stage_norm", "reciprocal_rank")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


@dataclass(frozen=True)
class Calibrator:
    model_id: str
    prompt_version: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    l2: float
    n_train: int
    n_pos: int
    notes: dict[str, Any] = field(default_factory=dict)
    # the training range of each feature: inputs are clipped to it, so the model never
    # extrapolates (None in artifacts fitted before ranges were kept: no clipping)
    lo: tuple[float, ...] | None = None
    hi: tuple[float, ...] | None = None

    def predict(self, x: Mapping[str, float]) -> float:
        """P(relevant) for one passage's features (missing feature -> error)."""
        missing = [f for f in self.features if f not in x or x[f] is None]
        if missing:
            raise ScieraError(f"calibrator needs features {missing} (has {sorted(x)})")
        row = np.array([[float(x[f]) for f in self.features]])
        return float(self.predict_matrix(row)[0])

    def upper_bound(self, fixed: Mapping[str, float], free: Sequence[str]) -> float:
        """The largest P(relevant) over every value in [0, 1] of the ``free`` features
        (the LLM's grade, P(yes)), the others at their ``fixed`` values. The model is
        monotone in each (clipped) feature, so the bound is at the end of the feature's
        range that the sign of its coefficient favours: the training range when known
        (inputs are clipped to it), else 0 or 1."""
        lo = self.lo or (0.0,) * len(self.features)
        hi = self.hi or (1.0,) * len(self.features)
        x = {
            f: (h if c >= 0 else low) if f in free else fixed.get(f)
            for f, c, low, h in zip(self.features, self.coef, lo, hi, strict=True)
        }
        return self.predict(x)  # type: ignore[arg-type]  # a missing fixed value raises

    def predict_matrix(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if self.lo is not None and self.hi is not None:
            X = np.clip(X, np.array(self.lo), np.array(self.hi))
        Z = (X - np.array(self.mean)) / np.array(self.std)
        return _sigmoid(Z @ np.array(self.coef) + self.intercept)

    def check_key(self, model_id: str, prompt_version: str) -> None:
        if (model_id, prompt_version) != (self.model_id, self.prompt_version):
            raise ScieraError(
                f"calibrator was fitted for model {self.model_id!r} prompt "
                f"{self.prompt_version!r}, not model {model_id!r} prompt {prompt_version!r}; "
                "refit it (sciera train deepera-calibrator) or run without one"
            )

    def to_json(self) -> str:
        data = {"format": FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}
        return json.dumps(data, indent=2)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Calibrator:
        data = json.loads(Path(path).read_text())
        if data.pop("format", None) != FORMAT or data.pop("format_version", None) != FORMAT_VERSION:
            raise ScieraError(f"{path}: not a {FORMAT} v{FORMAT_VERSION} artifact")
        for key in ("features", "mean", "std", "coef", "lo", "hi"):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        return cls(**data)


BUNDLED = Path(__file__).parent / "calibrators"
"""Calibrators shipped with sciera (fitted by ``sciera train deepera-calibrator``)."""


def artifact_name(model_id: str, prompt_version: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id)[:60]
    digest = hashlib.sha256(f"{model_id}\0{prompt_version}".encode()).hexdigest()[:10]
    return f"{slug}__{prompt_version}__{digest}.json"


def artifact_path(home: str | Path, model_id: str, prompt_version: str) -> Path:
    """Where the calibrator for (model_id, prompt_version) lives under SCIERA_HOME."""
    return Path(home) / "calibrators" / artifact_name(model_id, prompt_version)


def find_calibrator(
    home: str | Path, model_id: str, prompt_version: str, bundled: Path = BUNDLED
) -> Path | None:
    """The calibrator for (model_id, prompt_version): one the user fitted under
    SCIERA_HOME first, else the one shipped with sciera, else None."""
    for path in (
        artifact_path(home, model_id, prompt_version),
        bundled / artifact_name(model_id, prompt_version),
    ):
        if path.exists():
            return path
    return None


def fit_logistic(
    X: np.ndarray, y: np.ndarray, *, l2: float = 1.0, iters: int = 50, tol: float = 1e-10
) -> tuple[np.ndarray, float]:
    """Newton/IRLS for min Σ logloss + l2/2 ||w||² (intercept unpenalized). X standardized."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, d = X.shape
    A = np.hstack([np.ones((n, 1)), X])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[0] = 0.0
    for _ in range(iters):
        p = _sigmoid(A @ w)
        grad = A.T @ (p - y) + reg * w
        H = (A * (p * (1 - p))[:, None]).T @ A + np.diag(reg) + 1e-9 * np.eye(d + 1)
        delta = np.linalg.solve(H, grad)
        w -= delta
        if float(np.abs(delta).max()) < tol:
            break
    return w[1:], float(w[0])


def fit_calibrator(
    X: np.ndarray,
    y: Sequence[int] | np.ndarray,
    features: Sequence[str],
    *,
    model_id: str,
    prompt_version: str,
    l2: float = 1.0,
    notes: dict[str, Any] | None = None,
) -> Calibrator:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or X.shape[1] != len(features) or X.shape[0] != y.shape[0]:
        raise ValueError(f"X {X.shape} does not match {len(features)} features / {y.shape} labels")
    if len(set(y.tolist())) < 2:
        raise ValueError("calibration needs both relevant and non-relevant examples")
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    std = np.where(std < 1e-12, 1.0, std)
    coef, intercept = fit_logistic((X - mean) / std, y, l2=l2)
    return Calibrator(
        model_id=model_id,
        prompt_version=prompt_version,
        features=tuple(features),
        mean=tuple(float(v) for v in mean),
        std=tuple(float(v) for v in std),
        coef=tuple(float(v) for v in coef),
        intercept=intercept,
        l2=l2,
        n_train=len(y),
        n_pos=int(y.sum()),
        notes=dict(notes or {}),
        lo=tuple(float(v) for v in X.min(axis=0)),
        hi=tuple(float(v) for v in X.max(axis=0)),
    )


def rescale(
    cal: Calibrator, X: np.ndarray, y: Sequence[int] | np.ndarray, notes: dict[str, Any]
) -> Calibrator:
    """``cal`` with its linear score refitted as a whole, σ(a·score + c), on ``X``/``y``
    (Platt scaling of the fitted model): the result is again one logistic model over the
    same features, whose order of any two passages is ``cal``'s (a > 0), while its
    probabilities fit the new rows. Refuses a fit that would invert the order (a ≤ 0)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if cal.lo is not None and cal.hi is not None:
        X = np.clip(X, np.array(cal.lo), np.array(cal.hi))
    score = ((X - np.array(cal.mean)) / np.array(cal.std)) @ np.array(cal.coef) + cal.intercept
    m, sd = float(score.mean()), float(score.std()) or 1.0
    (a_std,), c_std = fit_logistic(((score - m) / sd)[:, None], y, l2=cal.l2)
    a, c = a_std / sd, c_std - a_std * m / sd
    if a <= 0:
        raise ValueError("rescaling would invert the calibrator's order; keep it as fitted")
    return replace(
        cal,
        coef=tuple(a * v for v in cal.coef),
        intercept=a * cal.intercept + c,
        n_train=len(y),
        n_pos=int(y.sum()),
        notes={**cal.notes, **notes, "rescaled": {"a": a, "c": c}},
    )


def reliability(
    probs: Sequence[float], labels: Sequence[int], bins: int = 10
) -> list[dict[str, float]]:
    """Equal-width bins over [0, 1]: count, mean confidence, observed frequency per bin."""
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels, dtype=float)
    idx = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        mask = idx == b
        if mask.any():
            out.append(
                {
                    "lo": b / bins,
                    "hi": (b + 1) / bins,
                    "count": int(mask.sum()),
                    "confidence": float(p[mask].mean()),
                    "frequency": float(y[mask].mean()),
                }
            )
    return out


def expected_calibration_error(
    probs: Sequence[float], labels: Sequence[int], bins: int = 10
) -> float:
    """ECE = Σ_b (n_b / N) |frequency_b - confidence_b| over equal-width bins."""
    n = len(probs)
    if n == 0:
        return 0.0
    rows = reliability(probs, labels, bins)
    return sum(b["count"] / n * abs(b["frequency"] - b["confidence"]) for b in rows)


def reliability_diagram(
    curves: Mapping[str, tuple[Sequence[float], Sequence[int]]],
    path: str | Path,
    bins: int = 10,
    title: str = "Reliability",
) -> Path:
    """Save a reliability diagram PNG with one curve per named (probs, labels) pair."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, 1], "k--", linewidth=1, label="perfect")
    for name, (p, y) in curves.items():
        rows = reliability(p, y, bins)
        ece = expected_calibration_error(p, y, bins)
        ax.plot(
            [r["confidence"] for r in rows],
            [r["frequency"] for r in rows],
            "o-",
            label=f"{name} (ECE {ece:.3f})",
        )
    ax.set_xlabel("predicted P(relevant)")
    ax.set_ylabel("observed frequency of relevant")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    return path


def listwise_features(logits: Sequence[float]) -> list[dict[str, float]]:
    """ce_softmax per candidate: the softmax of a cross-encoder's logits over the candidate
    list, what a listwise-trained model estimates (P that this is the relevant one among
    them). Beside the logit it tells a calibrator how far a passage stands out of its list."""
    x = np.asarray(logits, dtype=float)
    if x.size == 0:
        return []
    e = np.exp(x - x.max())
    return [{"ce_softmax": float(v)} for v in e / e.sum()]


def first_stage_features(scores: Sequence[float], ranks: Sequence[int]) -> list[dict[str, float]]:
    """first_stage_norm (min-max over the candidate list) and reciprocal_rank per candidate."""
    from sciera.rerank.normalize import minmax

    norm = minmax(scores)
    return [
        {"first_stage_norm": float(v), "reciprocal_rank": 1.0 / max(int(r), 1)}
        for v, r in zip(norm, ranks, strict=True)
    ]
