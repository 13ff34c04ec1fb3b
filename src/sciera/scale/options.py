"""How a batch job uses a Ray cluster (``--ray ADDRESS --ray-workers N ...``)."""

from __future__ import annotations

from dataclasses import dataclass

from sciera.errors import ScieraError


@dataclass(frozen=True, slots=True)
class RayOptions:
    """``address``: ``local`` (start a cluster in this process), ``auto`` (the one ``ray
    start`` runs here) or ``HOST:PORT``; ``workers``: actors (default: the cluster's CPUs
    divided by ``cpus_per_worker``); ``shard_size``: work items per task, the most a killed
    worker or driver loses; ``cpus_per_worker``: CPUs (and model threads) each actor holds."""

    address: str = "local"
    workers: int | None = None
    shard_size: int = 16
    cpus_per_worker: int = 1

    def __post_init__(self) -> None:
        if self.shard_size < 1:
            raise ScieraError(f"--shard-size must be at least 1, got {self.shard_size}")
        if self.cpus_per_worker < 1:
            raise ScieraError(f"--ray-cpus must be at least 1, got {self.cpus_per_worker}")
        if self.workers is not None and self.workers < 1:
            raise ScieraError(f"--ray-workers must be at least 1, got {self.workers}")

    def actors(self, cluster_cpus: int) -> int:
        return self.workers or max(1, cluster_cpus // self.cpus_per_worker)
