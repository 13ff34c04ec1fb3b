"""Progress of long multi-step work: Rich bars on a terminal, plain lines otherwise.

``update(step, done, total)`` may be called as often as the work likes. On a terminal each
step gets a bar; when stderr is a file or a pipe (a job under ``nohup``, CI), a line such
as ``questions: 12/80 (4m10s)`` is written at most every ``every`` seconds per step and
when a step completes, so a log shows how far a long build got.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

StepProgress = Callable[[str, int, int], None]
"""``update(step, done, total)``."""


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

    def __call__(self, step: str, done: int, total: int) -> None:
        now = self.clock()
        finished = bool(total) and done >= total
        if step in self._finished:
            return
        if not finished and now - self._last.get(step, -float("inf")) < self.every:
            return
        self._last[step] = now
        if finished:
            self._finished.add(step)
        of = f"/{total}" if total else ""
        self.stream.write(f"{self.label(step)}: {done}{of} ({_elapsed(now - self.start)})\n")
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
