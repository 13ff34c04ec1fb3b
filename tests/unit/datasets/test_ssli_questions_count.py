"""`QuestionSource.enough` counts a growing prefix of items incrementally and agrees with
`assemble` at every prefix: rule failures and an earlier passage's duplicate questions are
left out of the count exactly as they are left out of the set."""

from __future__ import annotations

import json
from types import SimpleNamespace

from sciera.datasets.ssli.config import BuildConfig
from sciera.datasets.ssli.questions import QALogs, QuestionSource
from sciera.types import Passage

TEXTS = [
    "Vitamin D supplementation reduced hip fractures by 20 percent in nursing home residents.",
    "Statin therapy lowered muscle strength in adults older than seventy years.",
    "Sleep deprivation impaired spatial memory consolidation in adult mice.",
    "Aspirin use was associated with fewer colorectal adenomas in a large cohort. Vitamin D "
    "supplementation reduced hip fractures by 20 percent in nursing home residents.",
]
PAIRS = [
    [
        (
            "How much did vitamin D supplementation reduce hip fractures in nursing home "
            "residents?",
            "Vitamin D supplementation reduced hip fractures by 20 percent.",
        )
    ],
    [
        (
            "What did statin therapy do to muscle strength in adults older than seventy?",
            "Statin therapy lowered muscle strength in adults older than seventy years.",
        ),
        (
            "What did statin therapy do to muscle strength in adults older than seventy?",
            "Statin therapy lowered muscle strength.",
        ),
    ],  # the same question twice: one kept
    [
        (
            "What impaired spatial memory consolidation in adult mice?",
            "Quantum chromodynamics predicts gluon confinement.",
        )
    ],  # answer not in the passage
    [
        (
            "How much did vitamin D supplementation reduce hip fractures in nursing home "
            "residents?",
            "Vitamin D supplementation reduced hip fractures by 20 percent.",
        ),
        (
            "What was aspirin use associated with in a large cohort?",
            "Aspirin use was associated with fewer colorectal adenomas.",
        ),
    ],  # first: a duplicate
]


class _Store:
    def __init__(self) -> None:
        self.passages = {
            f"d{i}#0": Passage(f"d{i}#0", f"d{i}", 0, "", t) for i, t in enumerate(TEXTS)
        }

    def get_passages(self, ids):
        return [self.passages[i] for i in ids]

    def iter_passages(self):
        return iter(self.passages.values())


def _source(tmp_path, max_questions):
    for i, pairs in enumerate(PAIRS):
        rec = {
            "passage_id": f"d{i}#0",
            "seconds": 1.0,
            "accepted": [{"question": q, "answer": a, "kind": "result"} for q, a in pairs],
        }
        with (tmp_path / "qa.jsonl").open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
    items = [{"doc_id": f"d{i}", "passage_id": f"d{i}#0", "cluster": 0} for i in range(len(TEXTS))]
    config = BuildConfig(max_questions=max_questions, min_support=0.5)
    source = QuestionSource(_Store(), config, embedder=lambda: None, progress=lambda *a: None)
    return source, items, QALogs(tmp_path)


def test_enough_agrees_with_assemble_on_every_prefix(tmp_path):
    llm = SimpleNamespace(model_id="fake")
    source, items, logs = _source(tmp_path, max_questions=3)
    got = source.assemble(items, logs, llm, report=True)
    assert [q["qid"].split("-", 1)[0] for q in got] == ["d0", "d1", "d3"]
    assert len(source.duplicates) == 2  # d1's second pair, d3's first
    assert [d["qid"] for d in source.dropped] == ["d2-p0-q1"]  # its answer is not in d2
    for n in range(len(items) + 1):  # growing prefixes, one source: counted incrementally
        assert source.enough(items[:n], logs) == (len(source.assemble(items[:n], logs, llm)) >= 3)
    assert source._tally.items == len(items)
    # a shorter prefix (a new build) or other logs start the count again
    assert source.enough(items[:1], logs) is False
    assert source.enough(items, QALogs(tmp_path)) is True

    (tmp_path / "unlimited").mkdir()
    unlimited, items, logs = _source(tmp_path / "unlimited", max_questions=None)
    assert unlimited.enough(items, logs) is False
