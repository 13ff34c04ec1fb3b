"""Evaluation datasets: loaders for the shared collections (BEIR, SSLI JSONL, PubMedQA).

    from sciera.datasets import load_dataset
    data = load_dataset("beir", "../shared/data/scifact", split="test", limit=50, seed=13)

The SSLI dataset *builder* lives in :mod:`sciera.datasets.ssli`.
"""

from sciera.datasets.loaders import (
    DATASET_LOADERS,
    EvalDataset,
    from_instances,
    load_dataset,
    seeded_subset,
)

__all__ = [
    "DATASET_LOADERS",
    "EvalDataset",
    "from_instances",
    "load_dataset",
    "seeded_subset",
]
