"""The ``--ray`` options the batch commands share (``eval run``, ``dataset build``,
``train ... --synthetic``), and the Ray :class:`~sciera.executor.Executor` they make."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from sciera.executor import Executor

RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="Run on Ray: local (start one here), auto (the running cluster), HOST:PORT.",
    ),
]
RayWorkersOpt = Annotated[
    int | None,
    typer.Option("--ray-workers", min=1, help="Actors (default: cluster CPUs / --ray-cpus)."),
]
RayCpusOpt = Annotated[
    int, typer.Option("--ray-cpus", min=1, help="CPUs (model threads) per actor.")
]
ShardOpt = Annotated[
    int, typer.Option("--shard-size", min=1, help="Work items per Ray shard (the most lost).")
]


@contextmanager
def ray_executor(
    address: str | None, workers: int | None, shard_size: int, cpus: int
) -> Iterator[Executor | None]:
    """The Ray executor of these options (left on exit), or ``None`` without ``--ray``
    (the command runs here)."""
    if address is None:
        yield None
        return
    from sciera.scale.executor import RayExecutor
    from sciera.scale.options import RayOptions

    with RayExecutor(RayOptions(address, workers, shard_size, cpus)) as executor:
        yield executor
