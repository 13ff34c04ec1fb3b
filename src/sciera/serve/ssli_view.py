"""An SSLI experiment's questions, each with its gold passages and its distractors side by
side and every pipeline's score and rank for them (the page's third view).

The questions and passages come from the experiment's dataset (the SSLI instances file its
manifest names); the scores from each pipeline's first repeat (its log
``runs/<pipeline>/r0/results.jsonl``, packed or not, else its ``run.trec``). Only the
``ssli`` setting is shown: the one whose pool holds the distractors.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from sciera.serve.errors import NotFound
from sciera.serve.experiments import MANIFEST, Experiments

SETTING = "ssli"


class SSLIView:
    def __init__(self, experiments: Experiments) -> None:
        self.experiments = experiments

    def _dataset(self, name: str) -> Path:
        manifest = json.loads((self.experiments.folder(name) / MANIFEST).read_text())
        spec = (manifest.get("experiment") or {}).get("dataset") or {}
        if spec.get("type") != "ssli":
            raise NotFound(f"experiment {name!r} is not on an SSLI dataset")
        path = Path(spec.get("path", ""))
        path = path / "instances.jsonl" if path.is_dir() else path
        if not path.is_file():
            raise NotFound(
                f"experiment {name!r}: its SSLI dataset is not at {path} (restore it with "
                "`sciera dataset unpack`)"
            )
        return path

    def _runs(self, name: str) -> dict[str, dict[str, dict[str, float]]]:
        """{pipeline: {qid: {passage_id: score}}} of each pipeline's first repeat."""
        from sciera.eval.runstore import ranking_file

        runs_dir = self.experiments.folder(name) / "runs"
        out = {}
        for repeat in sorted(runs_dir.glob("*/r0")):
            run = ranking_file(repeat)
            if run is not None:
                out[repeat.parent.name] = _read_run(str(run), run.stat().st_mtime)
        return out

    def questions(self, name: str) -> list[dict[str, Any]]:
        """Every SSLI question: id, text, and per pipeline the best rank of a gold passage."""
        instances = _instances(str(self._dataset(name)))
        runs = self._runs(name)
        rows = []
        for inst in instances:
            if runs and not any(inst.id in run for run in runs.values()):
                continue  # not in the experiment (e.g. no distractor, with distractors_only)
            gold = set(inst.gold_passage_ids)
            rows.append(
                {
                    "id": inst.id,
                    "question": inst.question,
                    "distractors": sum(c.is_distractor for c in inst.candidates),
                    "gold_rank": {
                        p: _best_rank(run.get(inst.id, {}), gold) for p, run in runs.items()
                    },
                }
            )
        return rows

    def question(self, name: str, qid: str) -> dict[str, Any]:
        """One question: its answer, gold passages and distractors, each with every
        pipeline's score and rank among all the candidates."""
        inst = next((i for i in _instances(str(self._dataset(name))) if i.id == qid), None)
        if inst is None:
            raise NotFound(f"experiment {name!r} has no SSLI question {qid!r}")
        runs = self._runs(name)
        ranks = {p: _ranks(run.get(qid, {})) for p, run in runs.items()}
        gold = set(inst.gold_passage_ids)
        passages = [
            {
                "passage_id": c.passage_id,
                "text": c.text,
                "role": "gold" if c.passage_id in gold else "distractor",
                "distractor_type": c.distractor_type,
                "scores": {
                    p: {
                        "score": runs[p].get(qid, {}).get(c.passage_id),
                        "rank": ranks[p].get(c.passage_id),
                    }
                    for p in runs
                },
            }
            for c in inst.candidates
            if c.passage_id in gold or c.is_distractor
        ]
        return {
            "id": inst.id,
            "question": inst.question,
            "answer": inst.answer,
            "pipelines": list(runs),
            "candidates": len(inst.candidates),
            "passages": passages,
        }


@lru_cache(maxsize=4)
def _instances(path: str) -> list[Any]:
    from sciera.datasets.ssli.io import load_ssli

    return load_ssli(path, SETTING)


@lru_cache(maxsize=32)
def _read_run(path: str, mtime: float) -> dict[str, dict[str, float]]:
    from sciera.eval.runstore import read_ranking

    return read_ranking(path)


def _ranks(scores: dict[str, float]) -> dict[str, int]:
    from sciera.eval.metrics.ranking import trec_order

    return {pid: r for r, pid in enumerate(trec_order(scores), start=1)}


def _best_rank(scores: dict[str, float], gold: set[str]) -> int | None:
    ranks = _ranks(scores)
    found = [ranks[g] for g in gold if g in ranks]
    return min(found) if found else None
