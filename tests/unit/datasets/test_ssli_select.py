"""Seeded numpy k-means and cluster-size selection on hand-made points."""

from __future__ import annotations

import numpy as np

from sciera.datasets.ssli.select import (
    document_vectors,
    keep_clusters,
    kmeans,
    select_documents,
)


def _blobs() -> tuple[list[str], np.ndarray]:
    # 6 points near (1, 0), 4 near (0, 1), 1 outlier at (-1, -1)
    pts = [(1.0, 0.02 * i) for i in range(6)] + [(0.02 * i, 1.0) for i in range(4)]
    pts.append((-1.0, -1.0))
    return [f"d{i}" for i in range(len(pts))], np.array(pts)


def test_kmeans_finds_the_blobs_and_is_seeded() -> None:
    _, x = _blobs()
    labels, centroids = kmeans(x, 3, seed=7)
    assert len(set(labels[:6].tolist())) == 1
    assert len(set(labels[6:10].tolist())) == 1
    assert len({labels[0], labels[6], labels[10]}) == 3
    again, _ = kmeans(x, 3, seed=7)
    assert again.tolist() == labels.tolist()
    assert np.allclose(centroids[labels[10]], [-1.0, -1.0])


def test_keep_clusters_drops_small_ones() -> None:
    labels = np.array([0, 0, 1, 2, 2, 2])
    assert keep_clusters(labels, 2) == {0: [0, 1], 2: [3, 4, 5]}


def test_select_documents_skips_the_outlier_and_round_robins() -> None:
    ids, x = _blobs()
    picked, counts = select_documents(ids, x, n_docs=4, cluster_size=4, min_size=3, seed=1)
    assert counts["pool"] == 11 and counts["clusters"] == 3 and counts["clusters_kept"] == 2
    assert counts["docs_in_kept_clusters"] == 10
    assert "d10" not in {p.doc_id for p in picked}
    # round robin over the two kept clusters, largest first
    assert [p.cluster_size for p in picked] == [6, 4, 6, 4]
    assert len({p.doc_id for p in picked}) == 4


def test_document_vectors_average_and_normalize() -> None:
    vecs = document_vectors(["a", "a", "b"], np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 2.0]]))
    assert np.allclose(vecs["a"], [2**-0.5, 2**-0.5])
    assert np.allclose(vecs["b"], [0.0, 1.0])
