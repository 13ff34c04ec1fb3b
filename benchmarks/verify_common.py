"""Helpers the verification benchmarks share (benchmarks/verify_*.py).

- :func:`retrieve_abstracts`: the open setting's abstracts for each claim: the hybrid first
  stage (Max-P to documents, top 30), reranked by the shipped cross-encoder (fused,
  calibrated), cached in a JSON file per corpus fingerprint.
- :class:`Bm25Sentences`: the baseline's "two BM25-closest sentences" of an abstract
  (Okapi BM25 over the abstract's sentences as documents, lowercased word tokens).
- :func:`pubmedqa_held_ids`: the PubMedQA questions a verifier never trained on (its card's
  held-out fold), or a one-line exit when the card has none.
- :func:`f1_randomization`: a paired approximate-randomization test of a corpus-level F1
  (swap each claim's counts between the two systems), since a corpus F1 is no mean of
  per-claim scores that :func:`sciera.eval.significance.paired_randomization` could take.
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
_WORD = re.compile(r"\w+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "and",
        "or",
        "to",
        "for",
        "with",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "as",
        "at",
        "from",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "not",
        "no",
        "than",
    ]
)


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


class Bm25Sentences:
    """BM25 (k1 1.2, b 0.75) of a claim against each sentence of one abstract."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def scores(self, claim: str, sentences: Sequence[str]) -> list[float]:
        docs = [tokens(s) for s in sentences]
        if not docs:
            return []
        n = len(docs)
        avg = sum(len(d) for d in docs) / n or 1.0
        df = Counter(w for d in docs for w in set(d))
        q = tokens(claim)
        out = []
        for d in docs:
            tf = Counter(d)
            s = 0.0
            for w in q:
                if tf[w]:
                    idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                    s += (
                        idf
                        * tf[w]
                        * (self.k1 + 1)
                        / (tf[w] + self.k1 * (1 - self.b + self.b * len(d) / avg))
                    )
            out.append(s)
        return out

    def closest(self, claim: str, sentences: Sequence[str], k: int = 2) -> list[int]:
        """The ``k`` best sentences, best first (ties: earlier first)."""
        s = self.scores(claim, sentences)
        return sorted(range(len(s)), key=lambda i: (-s[i], i))[:k]


def retrieve_abstracts(
    claims: Mapping[str, str],
    corpus: Path,
    cache: Path,
    depth: int = 30,
    keep: int = 10,
    retriever: str = "hybrid",
    rerank: bool = True,
) -> dict[str, list[list]]:
    """``{claim id: [[doc_id, P(relevant) or first-stage score], ...]}`` best first, the top
    ``keep`` of ``depth`` first-stage documents reranked by the shipped cross-encoder
    (fused, fp32; :func:`sciera.train.verifier_data.reranked_candidates`, as training reads
    its dev claims); cached in ``cache`` (keyed by the store fingerprint and these
    parameters)."""
    from sciera.settings import load_settings
    from sciera.train.verifier_data import reranked_candidates

    def report(_: str, n: int, total: int) -> None:
        if n == 1 or n % 25 == 0:
            log(f"retrieving claims ({retriever} top {depth}, reranked: {rerank}): {n}/{total}")

    found = reranked_candidates(
        corpus,
        claims,
        load_settings(),
        cache,
        keep,
        report,
        depth=depth,
        retriever=retriever,
        rerank=rerank,
        precision="fp32",
    )
    return {c: [[d, x] for d, x in rows] for c, rows in found.items()}


def f1_randomization(
    a: Sequence[tuple[int, int, int]],
    b: Sequence[tuple[int, int, int]],
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, float]:
    """Paired approximate randomization of F1(B) - F1(A) over claims: each claim's
    ``(correct, predicted, gold)`` counts of A and B swapped with probability 1/2; p = share
    of resamples with |difference| >= the observed one ((hits + 1) / (resamples + 1))."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 2 or xa.shape[1] != 3:
        raise ValueError("two equally long lists of (correct, predicted, gold) per claim")

    def f1(rows: np.ndarray) -> np.ndarray:
        c, p, g = rows[..., 0], rows[..., 1], rows[..., 2]
        return np.where(p + g > 0, 2 * c / np.maximum(p + g, 1e-12), 0.0)

    observed = float(f1(xb.sum(0)) - f1(xa.sum(0)))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 2000):
        size = min(2000, n_resamples - start)
        swap = rng.random((size, len(xa), 1)) < 0.5
        sa = np.where(swap, xb, xa).sum(1)
        sb = np.where(swap, xa, xb).sum(1)
        hits += int(np.sum(np.abs(f1(sb) - f1(sa)) >= abs(observed) - 1e-12))
    return {
        "test": "f1_randomization",
        "n": len(xa),
        "diff": round(observed, 6),
        "p_value": float(f"{(hits + 1) / (n_resamples + 1):.4g}"),
    }


def pubmedqa_held_ids(card: Mapping, model: str) -> set[str]:
    """The PubMedQA ids verifier ``model`` never trained on (its card's
    ``pubmedqa_held_ids``); exits with one line when the card has none."""
    held = {str(i) for i in card.get("data", {}).get("pubmedqa_held_ids") or []}
    if not held:
        raise SystemExit(f"{model}: no held-out PubMedQA questions in its card")
    return held


def write_rows(path: Path, rows: Sequence[Mapping]) -> None:
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t
