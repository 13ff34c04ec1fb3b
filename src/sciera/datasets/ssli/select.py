"""Step 1: keep documents that have related papers (Algorithm 2, "Corpus Clustering").

Documents are embedded (the mean of their passages' unit vectors, renormalized),
clustered with seeded k-means (k-means++ initialization, Lloyd iterations, cosine
geometry on unit vectors) and only documents in clusters with at least
``min_size`` members are kept, so every question has on-topic neighbours to serve
as retrieved contexts and distractors. The sample of ``n_docs`` documents is drawn
round-robin over the kept clusters (largest first) in a seeded random order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class SelectedDoc:
    doc_id: str
    cluster: int
    cluster_size: int


def kmeans(
    vectors: np.ndarray, k: int, *, seed: int = 0, iterations: int = 50
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded k-means on the rows of ``vectors`` -> (labels, centroids).

    k-means++ seeding; an emptied cluster is re-seeded with the point farthest from its
    centroid. ``k`` is capped at the number of rows.
    """
    x = np.asarray(vectors, dtype=np.float64)
    n = x.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, x.shape[1] if x.ndim == 2 else 0))
    k = max(1, min(int(k), n))
    rng = np.random.default_rng(seed)
    centroids = np.empty((k, x.shape[1]))
    centroids[0] = x[rng.integers(n)]
    d2 = ((x - centroids[0]) ** 2).sum(axis=1)
    for c in range(1, k):
        total = d2.sum()
        idx = int(rng.choice(n, p=d2 / total)) if total > 0 else int(rng.integers(n))
        centroids[c] = x[idx]
        d2 = np.minimum(d2, ((x - centroids[c]) ** 2).sum(axis=1))
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(iterations):
        dist = (x**2).sum(1)[:, None] - 2 * x @ centroids.T + (centroids**2).sum(1)[None, :]
        new = dist.argmin(axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            members = x[labels == c]
            if len(members):
                centroids[c] = members.mean(axis=0)
            else:
                far = int(dist[np.arange(n), labels].argmax())
                centroids[c] = x[far]
    return labels, centroids


def keep_clusters(labels: np.ndarray, min_size: int) -> dict[int, list[int]]:
    """Cluster -> member row indices, only for clusters with >= ``min_size`` members."""
    out: dict[int, list[int]] = {}
    for row, label in enumerate(np.asarray(labels).tolist()):
        out.setdefault(int(label), []).append(row)
    return {c: rows for c, rows in out.items() if len(rows) >= min_size}


def select_documents(
    doc_ids: Sequence[str],
    vectors: np.ndarray,
    *,
    n_docs: int,
    cluster_size: int = 20,
    min_size: int = 5,
    seed: int = 0,
) -> tuple[list[SelectedDoc], dict[str, int]]:
    """Cluster the documents (k = n / ``cluster_size``) and sample ``n_docs`` of those in
    clusters with >= ``min_size`` members. Returns the selection and counts for stats."""
    if len(doc_ids) != len(vectors):
        raise ValueError(f"{len(doc_ids)} ids for {len(vectors)} vectors")
    k = max(1, round(len(doc_ids) / max(1, cluster_size)))
    labels, _ = kmeans(vectors, k, seed=seed)
    kept = keep_clusters(labels, min_size)
    rng = np.random.default_rng(seed)
    order = sorted(kept, key=lambda c: (-len(kept[c]), c))
    queues = {c: [int(i) for i in rng.permutation(kept[c])] for c in order}
    picked: list[SelectedDoc] = []
    while len(picked) < n_docs and any(queues.values()):
        for c in order:
            if queues[c] and len(picked) < n_docs:
                row = queues[c].pop(0)
                picked.append(SelectedDoc(doc_ids[row], c, len(kept[c])))
    counts = {
        "pool": len(doc_ids),
        "clusters": len(set(labels.tolist())),
        "clusters_kept": len(kept),
        "docs_in_kept_clusters": sum(len(v) for v in kept.values()),
        "selected": len(picked),
    }
    return picked, counts


def document_vectors(passage_doc_ids: Sequence[str], vectors: np.ndarray) -> dict[str, np.ndarray]:
    """Mean passage vector per document, renormalized to unit length."""
    sums: dict[str, np.ndarray] = {}
    for doc_id, vec in zip(passage_doc_ids, np.asarray(vectors, dtype=np.float64), strict=True):
        sums[doc_id] = sums[doc_id] + vec if doc_id in sums else vec.copy()
    return {d: v / max(float(np.linalg.norm(v)), 1e-12) for d, v in sums.items()}
