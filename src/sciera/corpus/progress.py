"""Progress display for long ingests: a Rich bar on stderr, silent when not a terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

ProgressCallback = Callable[[int, int], None]  # (records read, passages written)


def _ignore(records: int, passages: int) -> None:
    return None


@contextmanager
def ingest_progress(label: str, enabled: bool) -> Iterator[ProgressCallback]:
    """Yield a callback ``update(records, passages)``; draws only if enabled and on a TTY."""
    if not enabled:
        yield _ignore
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} records, {task.fields[passages]} passages"),
        TimeElapsedColumn(),
    )
    with Progress(
        *columns, console=console, transient=True, disable=not console.is_terminal
    ) as progress:
        task = progress.add_task(label, total=None, passages=0)

        def update(records: int, passages: int) -> None:
            progress.update(task, completed=records, passages=passages)

        yield update
