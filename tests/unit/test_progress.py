"""Plain-line progress for runs whose stderr is not a terminal (nohup, CI logs)."""

from __future__ import annotations

import io

import pytest

from sciera.progress import LineProgress, ingest_progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_are_throttled_per_step_and_completion_is_always_written() -> None:
    out, clock = io.StringIO(), Clock()
    progress = LineProgress(out, every=30.0, clock=clock)
    progress("questions", 0, 80)  # first update of a step: written
    clock.now = 10.0
    progress("questions", 3, 80)  # 10 s later: skipped
    progress("select", 0, 1)  # another step has its own clock
    clock.now = 31.0
    progress("questions", 7, 80)
    clock.now = 35.0
    progress("questions", 80, 80)  # done: written even within 30 s
    progress("questions", 80, 80)  # repeated completion: not written again
    assert out.getvalue().splitlines() == [
        "questions: 0/80 (0m00s)",
        "select: 0/1 (0m10s)",
        "questions: 7/80 (0m31s)",
        "questions: 80/80 (0m35s)",
    ]


def test_unknown_total_and_labels() -> None:
    out, clock = io.StringIO(), Clock()
    progress = LineProgress(out, label=lambda s: s.upper(), clock=clock)
    clock.now = 3725.0
    progress("bm25", 5, 0)
    assert out.getvalue() == "BM25: 5 (1h02m)\n"


def test_ingest_lines_without_a_terminal_end_with_the_final_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ingest_progress("ingesting a.jsonl", True, every=3600.0) as update:
        for i in range(1, 101):
            update(i, 2 * i)
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "ingesting a.jsonl: 1 records, 2 passages",
        "ingesting a.jsonl: 100 records, 200 passages",
    ]


def test_disabled_ingest_progress_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with ingest_progress("x", False) as update:
        update(5, 5)
    assert capsys.readouterr().err == ""


def test_deadline_passes_only_after_its_minutes():
    from sciera.progress import Deadline

    assert not Deadline(None).passed() and not Deadline(0).passed()
    assert not Deadline(10).passed()
    assert Deadline(-1 / 60).passed()  # a budget that ended a second ago
