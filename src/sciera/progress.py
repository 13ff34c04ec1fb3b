"""Progress of long work: Rich bars on a terminal, plain lines otherwise.

``update(step, done, total)`` may be called as often as the work likes. On a terminal each
step gets a bar; when stderr is a file or a pipe (a job under ``nohup``, CI), a line such
as ``questions: 12/80 (4m10s)`` is written at most every ``every`` seconds per step and
when a step completes, so a log shows how far a long build got. ``ingest_progress`` is the
same for an ingest, whose total is unknown: ``update(records, passages)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

StepProgress = Callable[[str, int, int], None]
"""``update(step, done, total)``."""
ProgressCallback = Callable[[int, int], None]
"""``update(records read, passages written)``."""


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class LineProgress:
    """The plain-text fallback: throttled ``step: done/total (elapsed)`` lines."""

    def __init__(
        self,
        stream: TextIO,
        every: float = 30.0,
        label: Callable[[str], str] = str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream, self.every, self.label, self.clock = stream, every, label, clock
        self.start = clock()
        self._last: dict[str, float] = {}
        self._finished: set[str] = set()

    def __call__(
        self, step: str, done: int, total: int, unit: str = "", final: bool = False
    ) -> None:
        now = self.clock()
        finished = final or (bool(total) and done >= total)
        if step in self._finished:
            return
        if not finished and now - self._last.get(step, -float("inf")) < self.every:
            return
        self._last[step] = now
        if finished:
            self._finished.add(step)
        of = f"/{total}" if total else ""
        count = f"{done}{of}{unit}"
        self.stream.write(f"{self.label(step)}: {count} ({_elapsed(now - self.start)})\n")
        self.stream.flush()


@contextmanager
def step_progress(
    label: Callable[[str], str] = str, *, transient: bool = True, every: float = 30.0
) -> Iterator[StepProgress]:
    """Yield ``update(step, done, total)`` drawing one bar per step (``label(step)`` names
    it) on a terminal, or throttled lines on stderr otherwise."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    if not console.is_terminal:
        yield LineProgress(sys.stderr, every=every, label=label)
        return
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=transient) as bar:
        tasks: dict[str, object] = {}

        def update(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(label(step), total=total)
            bar.update(tasks[step], completed=done, total=total)  # type: ignore[arg-type]

        yield update


def _ignore(records: int, passages: int) -> None:
    return None


@contextmanager
def ingest_progress(label: str, enabled: bool, every: float = 30.0) -> Iterator[ProgressCallback]:
    """Yield ``update(records, passages)``: a spinner on a terminal, throttled lines
    (``ingesting x.jsonl: 1200 records, 1530 passages (0m30s)``) otherwise; nothing
    when not ``enabled``."""
    if not enabled:
        yield _ignore
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        lines = LineProgress(sys.stderr, every=every)
        last = [0, 0]

        def line(records: int, passages: int) -> None:
            last[:] = records, passages
            lines(label, records, 0, f" records, {passages} passages")

        yield line
        lines(label, last[0], 0, f" records, {last[1]} passages", final=True)
        return
    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} records, {task.fields[passages]} passages"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(label, total=None, passages=0)

        def update(records: int, passages: int) -> None:
            progress.update(task, completed=records, passages=passages)

        yield update


class Deadline:
    """A ``--limit-minutes`` budget: ``passed()`` turns true once ``minutes`` have gone by
    since it was made (never, for ``None`` or 0)."""

    def __init__(self, minutes: float | None) -> None:
        self.at = time.monotonic() + 60 * minutes if minutes else None

    def passed(self) -> bool:
        return self.at is not None and time.monotonic() > self.at
