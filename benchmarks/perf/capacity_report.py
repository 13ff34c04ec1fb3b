"""The capacity report: power-law fits of the rows ``capacity.py`` measured, extrapolation
to a target corpus size, the planning table, and all of it as Markdown. Pure functions of
the rows (no sciera import, no model); ``capacity.py`` runs this after every step::

    python benchmarks/perf/capacity_report.py --rows WORK/rows.jsonl --meta WORK/meta.json \\
        --out benchmarks/results/scale/capacity.json [--node-ram-gb 64]

writes the JSON report (measurements, fits, plan, cost drivers) and ``capacity.md`` beside it.

A fit is ``y = a * N**b`` by least squares on ``log y`` against ``log N`` (R² in log
space), N being the passages actually in the index. Every extrapolated number in the plan
names its basis: a fit (with a, b, R² and the sizes behind it), an analytic size, or a
measured rate; beside it a linear cross-check (the largest measurement scaled by N).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from common import write_json

TARGET = 60_000_000  # PubMed-scale passages
DIM = 384  # the default embedder's dimension (float32 vectors)
EMBED_WORKERS = (8, 32)
NODE_RAM_GB = 64.0
MIN_R2 = 0.9  # a fit below this does not extrapolate (noise, e.g. latency on a loaded CPU)


@dataclass(frozen=True)
class PowerFit:
    """``y = a * N**b`` fitted on ``sizes``/``values`` (R² of log y)."""

    a: float
    b: float
    r2: float
    sizes: tuple[float, ...]
    values: tuple[float, ...]

    def predict(self, n: float) -> float:
        return self.a * n**self.b


def fit_power_law(sizes: Sequence[float], values: Sequence[float]) -> PowerFit | None:
    """The least-squares power law through the positive points, or None with fewer than
    two distinct sizes (a point with y <= 0 has no logarithm and is left out)."""
    points = [(float(n), float(y)) for n, y in zip(sizes, values, strict=True) if n > 0 and y > 0]
    if len({n for n, _ in points}) < 2:
        return None
    x = np.log([n for n, _ in points])
    y = np.log([v for _, v in points])
    b, log_a = np.polyfit(x, y, 1)
    residual = float(np.sum((y - (log_a + b * x)) ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - residual / total if total > 0 else 1.0
    return PowerFit(
        float(math.exp(log_a)),
        float(b),
        r2,
        tuple(n for n, _ in points),
        tuple(v for _, v in points),
    )


def linear_from_largest(sizes: Sequence[float], values: Sequence[float], n: float) -> float:
    """The measurement at the largest size scaled linearly to ``n`` (a cross-check)."""
    largest = max(range(len(sizes)), key=lambda i: sizes[i])
    return values[largest] * n / sizes[largest]


@dataclass(frozen=True)
class Metric:
    """A size-dependent quantity: ``field`` of the rows of ``step``, in ``unit``
    (``s``, ``ms``, ``MB`` = 10^6 bytes, or ``bytes``)."""

    step: str
    field: str
    unit: str
    label: str


METRICS: dict[str, Metric] = {
    "ingest.seconds": Metric("ingest", "seconds", "s", "ingest time"),
    "ingest.store_disk": Metric("ingest", "store_disk_bytes", "bytes", "passage store disk"),
    "ingest.peak_rss": Metric("ingest", "peak_rss_mb", "MB", "ingest peak RSS"),
    "bm25.build_seconds": Metric("bm25", "build_seconds", "s", "BM25 build time"),
    "bm25.build_peak_rss": Metric(
        "bm25", "build_peak_delta_mb", "MB", "BM25 build peak RSS over the imports"
    ),
    "bm25.disk": Metric("bm25", "disk_bytes", "bytes", "BM25 index disk"),
    "bm25.ram": Metric("bm25", "load_rss_delta_mb", "MB", "BM25 in-memory RAM (load delta)"),
    "bm25.load_seconds": Metric("bm25", "load_seconds", "s", "BM25 load time"),
    "bm25.search_p50": Metric("bm25", "search_p50_ms", "ms", "BM25 search p50 (with store)"),
    "bm25.search_p95": Metric("bm25", "search_p95_ms", "ms", "BM25 search p95 (with store)"),
    "bm25.score_p50": Metric("bm25", "score_p50_ms", "ms", "BM25 scoring p50"),
    "bm25.score_p95": Metric("bm25", "score_p95_ms", "ms", "BM25 scoring p95"),
    "bm25_mmap.ram": Metric("bm25_mmap", "load_rss_delta_mb", "MB", "BM25 mmap RAM (load delta)"),
    "bm25_mmap.ram_queried": Metric(
        "bm25_mmap", "queried_rss_delta_mb", "MB", "BM25 mmap RAM after the queries"
    ),
    "bm25_mmap.p50": Metric("bm25_mmap", "score_p50_ms", "ms", "BM25 mmap scoring p50"),
    "bm25_mmap.p95": Metric("bm25_mmap", "score_p95_ms", "ms", "BM25 mmap scoring p95"),
    "dense.add_seconds": Metric("dense", "add_seconds", "s", "faiss flat add time"),
    "dense.ram": Metric("dense", "rss_delta_mb", "MB", "faiss flat RAM (RSS delta)"),
    "dense.disk": Metric("dense", "disk_bytes", "bytes", "faiss flat disk"),
    "dense.p50": Metric("dense", "p50_ms", "ms", "faiss flat search p50"),
    "dense.p95": Metric("dense", "p95_ms", "ms", "faiss flat search p95"),
    "qdrant.build_seconds": Metric("qdrant", "build_seconds", "s", "Qdrant local build time"),
    "qdrant.build_peak_rss": Metric(
        "qdrant", "build_peak_delta_mb", "MB", "Qdrant local build peak RSS over the imports"
    ),
    "qdrant.disk": Metric("qdrant", "disk_bytes", "bytes", "Qdrant local disk"),
    "qdrant.ram": Metric("qdrant", "load_rss_delta_mb", "MB", "Qdrant local RAM (open delta)"),
    "qdrant.dense_p50": Metric("qdrant", "dense_p50_ms", "ms", "Qdrant local dense p50"),
    "qdrant.dense_p95": Metric("qdrant", "dense_p95_ms", "ms", "Qdrant local dense p95"),
    "qdrant.sparse_p50": Metric("qdrant", "sparse_p50_ms", "ms", "Qdrant local sparse p50"),
    "qdrant.sparse_p95": Metric("qdrant", "sparse_p95_ms", "ms", "Qdrant local sparse p95"),
    "qdrant.hybrid_p50": Metric("qdrant", "hybrid_p50_ms", "ms", "Qdrant local hybrid p50"),
    "qdrant.hybrid_p95": Metric("qdrant", "hybrid_p95_ms", "ms", "Qdrant local hybrid p95"),
}

# sciera's qdrant engine on Qdrant Edge, with the HNSW graph and without it: one family of
# fields per step (``capacity_steps.py`` writes both), named ``<step>.<key>``
_EDGE_FIELDS: dict[str, tuple[str, str, str]] = {
    "build_seconds": ("build_seconds", "s", "build (vocabulary, upsert, index)"),
    "upsert_seconds": ("upsert_seconds", "s", "upsert time"),
    "index_seconds": ("index_seconds", "s", "optimize (HNSW + sparse index)"),
    "build_peak_rss": ("build_peak_delta_mb", "MB", "build peak RSS over the imports"),
    "disk": ("disk_bytes", "bytes", "shard disk"),
    "ram": ("load_rss_delta_mb", "MB", "RAM (load delta)"),
    "ram_queried": ("queried_rss_delta_mb", "MB", "RAM after the queries"),
    "dense_p50": ("dense_p50_ms", "ms", "dense p50"),
    "dense_p95": ("dense_p95_ms", "ms", "dense p95"),
    "dense_exact_p50": ("dense_exact_p50_ms", "ms", "dense exact p50"),
    "sparse_p50": ("sparse_p50_ms", "ms", "sparse p50"),
    "sparse_p95": ("sparse_p95_ms", "ms", "sparse p95"),
    "hybrid_p50": ("hybrid_p50_ms", "ms", "hybrid p50"),
    "hybrid_p95": ("hybrid_p95_ms", "ms", "hybrid p95"),
}
_EDGE_STEPS = {
    "qdrant_edge": ("Qdrant Edge", tuple(_EDGE_FIELDS)),
    "qdrant_edge_flat": (
        "Qdrant Edge, no graph",
        (
            "build_seconds",
            "build_peak_rss",
            "disk",
            "ram_queried",
            "sparse_p50",
            "sparse_p95",
            "dense_p50",
            "hybrid_p50",
        ),
    ),
}
METRICS.update(
    {
        f"{step}.{key}": Metric(
            step, _EDGE_FIELDS[key][0], _EDGE_FIELDS[key][1], f"{who}: {_EDGE_FIELDS[key][2]}"
        )
        for step, (who, keys) in _EDGE_STEPS.items()
        for key in keys
    }
)


def metric_points(rows: Sequence[dict], metric: Metric) -> tuple[list[float], list[float]]:
    """(passages, value) of every measured row of the metric's step, by size."""
    found = [
        (float(r["passages"]), float(r[metric.field]))
        for r in rows
        if r.get("step") == metric.step and r.get(metric.field) is not None and r.get("passages")
    ]
    found.sort()
    return [n for n, _ in found], [v for _, v in found]


def fit_metrics(rows: Sequence[dict], target: int = TARGET) -> dict[str, dict[str, Any]]:
    """Each metric measured at two sizes or more: its fit and its value at ``target``."""
    fits: dict[str, dict[str, Any]] = {}
    for name, metric in METRICS.items():
        sizes, values = metric_points(rows, metric)
        fit = fit_power_law(sizes, values)
        if fit is None:
            continue
        fits[name] = {
            "label": metric.label,
            "unit": metric.unit,
            "a": fit.a,
            "b": round(fit.b, 4),
            "r2": round(fit.r2, 4),
            "points": len(fit.sizes),
            "sizes": [int(n) for n in fit.sizes],
            "values": list(fit.values),
            "at_target": fit.predict(target),
            "linear_from_largest": linear_from_largest(fit.sizes, fit.values, target),
        }
    return fits


def cite(name: str, fit: dict[str, Any]) -> str:
    """How a plan row names the fit it came from."""
    sizes = ", ".join(f"{n:,}" for n in fit["sizes"])
    return f"fit {name}: a={fit['a']:.3g}, b={fit['b']:.3f}, R²={fit['r2']:.3f} on N = {sizes}"


# ---- the plan at the target size -------------------------------------------------------

_TO_PLAN = {"bytes": (1e-9, "GB"), "MB": (1e-3, "GB"), "s": (1 / 3600, "h"), "ms": (1.0, "ms")}
_RESOURCE = {"bytes": "disk", "MB": "ram", "s": "time", "ms": "latency"}
FLAT_NOTE = (
    "exact flat scan, linear in N: at this size serve dense from a Qdrant server (HNSW, shards)"
)


def in_plan_units(value: float, unit: str) -> tuple[float, str]:
    """A metric's value in the plan's units: GB for bytes and MB, hours for seconds."""
    scale, plan_unit = _TO_PLAN[unit]
    return value * scale, plan_unit


def _machines(gb: float | None, node_ram_gb: float) -> int | None:
    return None if gb is None else max(1, math.ceil(gb / node_ram_gb))


def _unfitted(name: str, fit: dict[str, Any], unit: str, plan_unit: str) -> dict[str, Any]:
    """A fit over three sizes or more that explains too little (R² < :data:`MIN_R2`): a
    flat quantity (within 1.5x) plans with its largest measured value, any other is not
    extrapolated and shows what was measured."""
    values = fit["values"]
    if max(values) < 1.5 * min(values):
        sizes = ", ".join(f"{n:,}" for n in fit["sizes"])
        return {
            "value": in_plan_units(max(values), unit)[0],
            "basis": f"{name}: flat over N = {sizes} (within 1.5x): the largest measured",
        }
    measured = ", ".join(
        f"{n:,}: {in_plan_units(v, unit)[0]:.3g} {plan_unit}"
        for n, v in zip(fit["sizes"], values, strict=True)
    )
    return {
        "value": None,
        "basis": f"{name}: not extrapolated, the fit explains too little "
        f"(R² {fit['r2']:.2f} < {MIN_R2}); measured at N = {measured}",
    }


def _fit_row(
    component: str,
    name: str,
    fits: dict[str, dict[str, Any]],
    node_ram_gb: float,
    analytic: tuple[float, str] | None = None,
) -> dict[str, Any]:
    """A plan row extrapolated from the fit ``name`` (or marked not measured)."""
    metric = METRICS[name]
    _, unit = _TO_PLAN[metric.unit]
    resource = _RESOURCE[metric.unit]
    fit = fits.get(name)
    row: dict[str, Any] = {
        "component": component,
        "metric": name,
        "unit": unit,
        "resource": resource,
    }
    if fit is None:
        return {**row, "value": None, "basis": f"{name}: not measured at two sizes"}
    if fit["points"] > 2 and fit["r2"] < MIN_R2:
        return {**row, **_unfitted(name, fit, metric.unit, unit)}
    row.update(
        value=in_plan_units(fit["at_target"], metric.unit)[0],
        basis=cite(name, fit),
        linear_check=in_plan_units(fit["linear_from_largest"], metric.unit)[0],
    )
    if analytic is not None:
        row.update(analytic=analytic[0], analytic_basis=analytic[1])
    if resource == "ram":
        row["machines"] = _machines(planned(row), node_ram_gb)
    if name.startswith("dense.p"):
        row["note"] = FLAT_NOTE
    return row


def planned(row: dict[str, Any]) -> float | None:
    """A plan row's value to plan with: the larger of the fit and the analytic size."""
    if row.get("value") is None:
        return None
    return max(row["value"], row.get("analytic", 0.0))


def embedding_plan(
    embed: dict[str, Any] | None,
    ray: dict[str, Any] | None,
    target: int = TARGET,
    workers: Sequence[int] = EMBED_WORKERS,
) -> dict[str, Any] | None:
    """CPU-hours of embedding ``target`` passages at the measured one-thread rate, and
    wall hours on ``workers`` one-thread workers at the measured Ray scaling efficiency
    (speed-up from 1 to 2 workers, divided by 2; assumed to hold for more workers)."""
    if embed is None:
        return None
    rate1 = embed["threads"]["1"]["passages_per_s"]
    rate2 = embed["threads"]["2"]["passages_per_s"]
    cpu_hours = target / rate1 / 3600
    efficiency = ray.get("efficiency") if ray else None
    wall = {str(w): cpu_hours / (w * (efficiency if efficiency else 1.0)) for w in workers}
    return {
        "embedder": embed.get("embedder"),
        "passages_per_s_1_thread": rate1,
        "passages_per_s_2_threads": rate2,
        "cpu_hours": cpu_hours,
        "hours_one_2_thread_process": target / rate2 / 3600,
        "ray_efficiency": efficiency,
        "ray_efficiency_basis": ray.get("efficiency_basis") if ray else None,
        "wall_hours": wall,
        "wall_hours_assume": (
            "measured Ray efficiency" if efficiency else "perfect scaling (Ray not measured)"
        ),
    }


def _embedding_rows(embedding: dict[str, Any] | None) -> list[dict[str, Any]]:
    row = {"metric": "embed.cpu_hours", "unit": "CPU-h", "resource": "time"}
    if embedding is None:
        return [{**row, "component": "embedding", "value": None, "basis": "embed: not measured"}]
    rate = embedding["passages_per_s_1_thread"]
    rows = [
        {
            **row,
            "component": "embedding, CPU time (1 torch thread per worker)",
            "value": embedding["cpu_hours"],
            "basis": f"measured: {rate:.1f} passages/s on 1 thread ({embedding['embedder']})",
        }
    ]
    eff, how = embedding["ray_efficiency"], embedding["ray_efficiency_basis"]
    for w, hours in embedding["wall_hours"].items():
        rows.append(
            {
                "component": f"embedding, wall time on {w} Ray workers",
                "metric": f"embed.wall_{w}",
                "value": hours,
                "unit": "h",
                "resource": "wall",
                "basis": (
                    f"CPU-h / ({w} × Ray efficiency {eff:.2f}, measured at 2 workers: {how})"
                    if eff
                    else f"CPU-h / {w} (perfect scaling assumed: Ray not measured)"
                ),
                "linear_check": embedding["cpu_hours"] / int(w),
            }
        )
    return rows


PLAN: tuple[tuple[str, str], ...] = (
    ("passage store (SQLite), disk", "ingest.store_disk"),
    ("ingest, one process", "ingest.seconds"),
    ("BM25 build, one process", "bm25.build_seconds"),
    ("BM25 build, peak RAM", "bm25.build_peak_rss"),
    ("BM25 index (bm25s), disk", "bm25.disk"),
    ("BM25 in memory, RAM", "bm25.ram"),
    ("BM25 memory-mapped, RAM after load", "bm25_mmap.ram"),
    ("BM25 memory-mapped, RAM after the queries", "bm25_mmap.ram_queried"),
    ("BM25 query p50 (in memory, with store)", "bm25.search_p50"),
    ("BM25 query p95 (in memory, with store)", "bm25.search_p95"),
    ("BM25 scoring p50 (in memory)", "bm25.score_p50"),
    ("BM25 scoring p50 (memory-mapped)", "bm25_mmap.p50"),
    ("BM25 scoring p95 (memory-mapped)", "bm25_mmap.p95"),
    ("dense flat (faiss), RAM", "dense.ram"),
    ("dense flat (faiss), disk", "dense.disk"),
    ("dense flat query p50 (exact)", "dense.p50"),
    ("dense flat query p95 (exact)", "dense.p95"),
    ("Qdrant local, build", "qdrant.build_seconds"),
    ("Qdrant local, RAM", "qdrant.ram"),
    ("Qdrant local, disk", "qdrant.disk"),
    ("Qdrant local, sparse query p50", "qdrant.sparse_p50"),
    ("Qdrant local, hybrid query p50", "qdrant.hybrid_p50"),
    ("Qdrant shard (Edge), build: upsert + HNSW + sparse index", "qdrant_edge.build_seconds"),
    ("Qdrant shard (Edge), build peak RAM", "qdrant_edge.build_peak_rss"),
    ("Qdrant shard (Edge), RAM after the queries", "qdrant_edge.ram_queried"),
    ("Qdrant shard (Edge), disk", "qdrant_edge.disk"),
    ("Qdrant shard (Edge), dense HNSW query p50", "qdrant_edge.dense_p50"),
    ("Qdrant shard (Edge), sparse BM25 query p50", "qdrant_edge.sparse_p50"),
    ("Qdrant shard (Edge), hybrid query p50", "qdrant_edge.hybrid_p50"),
    ("Qdrant shard (Edge), no HNSW graph: build", "qdrant_edge_flat.build_seconds"),
    ("Qdrant shard (Edge), no HNSW graph: build peak RAM", "qdrant_edge_flat.build_peak_rss"),
    ("Qdrant shard (Edge), no HNSW graph: RAM after the queries", "qdrant_edge_flat.ram_queried"),
    ("Qdrant shard (Edge), no HNSW graph: disk", "qdrant_edge_flat.disk"),
    ("Qdrant shard (Edge), no HNSW graph: sparse BM25 query p50", "qdrant_edge_flat.sparse_p50"),
    ("Qdrant shard (Edge), no HNSW graph: exact dense query p50", "qdrant_edge_flat.dense_p50"),
)


def plan_rows(
    fits: dict[str, dict[str, Any]],
    embedding: dict[str, Any] | None,
    target: int = TARGET,
    node_ram_gb: float = NODE_RAM_GB,
) -> list[dict[str, Any]]:
    """One row per component at ``target`` passages (see :data:`PLAN`); Qdrant rows (local
    mode, Edge) only when measured at two sizes."""
    vectors_gb = target * DIM * 4 / 1e9
    analytic = {
        "dense.ram": (vectors_gb, f"{target:,} × {DIM} × 4 bytes (float32 vectors alone)"),
        "dense.disk": (vectors_gb, f"{target:,} × {DIM} × 4 bytes (float32 vectors alone)"),
    }
    rows = [
        _fit_row(component, name, fits, node_ram_gb, analytic.get(name))
        for component, name in PLAN
        if not (name.startswith(("qdrant.", "qdrant_edge")) and name not in fits)
    ]
    return rows + _embedding_rows(embedding)


def _total(by_metric: dict[str, dict[str, Any]], names: Sequence[str]) -> float | None:
    values = [planned(by_metric[n]) if n in by_metric else None for n in names]
    return None if any(v is None for v in values) else sum(values)  # type: ignore[misc]


# what to provision: (line, unit, the plan rows it sums); the Qdrant lines only when measured
SKETCH: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("serving RAM, BM25 in memory + dense flat", "GB", ("bm25.ram", "dense.ram")),
    ("serving RAM, BM25 mmap (queried) + dense flat", "GB", ("bm25_mmap.ram_queried", "dense.ram")),
    ("disk: store + BM25 + dense flat", "GB", ("ingest.store_disk", "bm25.disk", "dense.disk")),
    ("indexing machine RAM (BM25 build peak)", "GB", ("bm25.build_peak_rss",)),
    ("ingest then BM25 build, one machine", "h", ("ingest.seconds", "bm25.build_seconds")),
)
QDRANT_SKETCH: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "serving RAM, the whole index in Qdrant (HNSW + sparse + passages)",
        "GB",
        ("qdrant_edge.ram_queried",),
    ),
    ("Qdrant indexing RAM (build peak, summed over shards)", "GB", ("qdrant_edge.build_peak_rss",)),
    ("Qdrant build, one process (upsert + HNSW + sparse)", "h", ("qdrant_edge.build_seconds",)),
)


def cluster_sketch(
    plan: Sequence[dict[str, Any]], node_ram_gb: float = NODE_RAM_GB
) -> list[dict[str, Any]]:
    """The plan summed into what to provision: serving RAM and machines (BM25 in memory
    or memory-mapped, plus dense flat), disk, and the indexing jobs' machines and hours."""
    by_metric = {r["metric"]: r for r in plan}
    qdrant = [s for s in QDRANT_SKETCH if by_metric.get(s[2][0], {}).get("value") is not None]
    embedding = [
        (f"embedding on {r['metric'].removeprefix('embed.wall_')} Ray workers", "h", (r["metric"],))
        for r in plan
        if r["metric"].startswith("embed.wall_")
    ]
    sketch = []
    for what, unit, names in [*SKETCH, *qdrant, *embedding]:
        value = _total(by_metric, names)
        machines = _machines(value, node_ram_gb) if unit == "GB" and "RAM" in what else None
        sketch.append(
            {"what": what, "value": value, "unit": unit, "machines": machines, "from": list(names)}
        )
    return sketch


def cost_drivers(plan: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The plan's RAM, disk and time rows, largest first. Time is one process's hours
    or CPU-hours (a job's wall time on many workers is the same cost; latency is none)."""
    drivers: dict[str, list[dict[str, Any]]] = {}
    for resource in ("ram", "disk", "time"):
        rows = [r for r in plan if r["resource"] == resource and r.get("value") is not None]
        rows.sort(key=planned, reverse=True)  # type: ignore[arg-type]
        drivers[resource] = [
            {"component": r["component"], "value": planned(r), "unit": r["unit"]} for r in rows
        ]
    return drivers


def build_report(
    rows: Sequence[dict[str, Any]],
    meta: dict[str, Any],
    target: int = TARGET,
    node_ram_gb: float = NODE_RAM_GB,
) -> dict[str, Any]:
    """Measurements, fits, embedding extrapolation, plan and cost drivers."""
    by_step = {r["step"]: r for r in rows if r.get("size") is None}
    fits = fit_metrics(rows, target)
    embedding = embedding_plan(by_step.get("embed"), by_step.get("ray"), target)
    plan = plan_rows(fits, embedding, target, node_ram_gb)
    return {
        **meta,
        "target_passages": target,
        "node_ram_gb": node_ram_gb,
        "measurements": sorted(rows, key=lambda r: (r.get("size") or 0, r["step"])),
        "fits": fits,
        "embedding": embedding,
        "plan": plan,
        "cluster_sketch": cluster_sketch(plan, node_ram_gb),
        "cost_drivers": cost_drivers(plan),
    }


# ---- Markdown ----------------------------------------------------------------------------

Row = dict[str, Any]


def num(x: float | None) -> str:
    """A number for a table: thousands separators from 100, 3 significant digits below."""
    if x is None:
        return "–"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def pair(row: Row | None, first: str, second: str, scale: float = 1.0) -> str:
    return f"{get(row, first, scale)} / {get(row, second, scale)}"


def get(row: Row | None, key: str, scale: float = 1.0) -> str:
    if row is None or row.get(key) is None:
        return "–"
    return num(row[key] * scale)


def table(header: str, rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table: ``header`` is its head row, the columns split by ``" | "``."""
    lines = [f"| {header} |", "|" + "---|" * (header.count(" | ") + 1)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _by_size(measurements: Sequence[Row]) -> dict[int, dict[str, Row]]:
    sizes: dict[int, dict[str, Row]] = {}
    for row in measurements:
        if row.get("size") is not None:
            sizes.setdefault(row["size"], {})[row["step"]] = row
    return dict(sorted(sizes.items()))


def _ram_load_and_queried(row: Row | None) -> str:
    """RAM Δ MB after loading (after the queries), or – when not measured."""
    if row is None:
        return "–"
    return f"{num(row['load_rss_delta_mb'])} ({num(row['queried_rss_delta_mb'])})"


def lexical_table(sizes: dict[int, dict[str, Row]]) -> list[str]:
    header = (
        "N (passages) | words/passage | ingest s | ingest passages/s | store MB | "
        "BM25 build s | build peak Δ MB | BM25 disk MB | BM25 RAM Δ MB | "
        "BM25 search p50 / p95 ms | scoring p50 / p95 ms | "
        "mmap RAM Δ MB (after queries) | mmap scoring p50 / p95 ms"
    )
    rows = []
    for size, steps in sizes.items():
        ingest, bm25, mmap = steps.get("ingest"), steps.get("bm25"), steps.get("bm25_mmap")
        passages = (ingest or bm25 or mmap or {}).get("passages", size)
        words = (ingest or {}).get("synthetic", {}).get("words_per_passage_mean")
        rows.append(
            [
                f"{passages:,}",
                num(words),
                get(ingest, "seconds"),
                get(ingest, "passages_per_s"),
                get(ingest, "store_disk_bytes", 1e-6),
                get(bm25, "build_seconds"),
                get(bm25, "build_peak_delta_mb"),
                get(bm25, "disk_bytes", 1e-6),
                get(bm25, "load_rss_delta_mb"),
                pair(bm25, "search_p50_ms", "search_p95_ms"),
                pair(bm25, "score_p50_ms", "score_p95_ms"),
                _ram_load_and_queried(mmap),
                pair(mmap, "score_p50_ms", "score_p95_ms"),
            ]
        )
    return table(header, rows)


def vector_table(sizes: dict[int, dict[str, Row]]) -> list[str]:
    header = (
        "N | faiss add s | faiss RAM Δ MB | faiss disk MB | flat p50 / p95 ms | "
        "Qdrant build s | Qdrant disk MB | Qdrant RAM Δ MB | "
        "Qdrant p50 dense / sparse / hybrid ms"
    )
    rows = []
    for size, steps in sizes.items():
        dense, qdrant = steps.get("dense"), steps.get("qdrant")
        q50 = (
            "–"
            if qdrant is None
            else " / ".join(num(qdrant[f"{k}_p50_ms"]) for k in ("dense", "sparse", "hybrid"))
        )
        rows.append(
            [
                f"{size:,}",
                get(dense, "add_seconds"),
                get(dense, "rss_delta_mb"),
                get(dense, "disk_bytes", 1e-6),
                pair(dense, "p50_ms", "p95_ms"),
                get(qdrant, "build_seconds"),
                get(qdrant, "disk_bytes", 1e-6),
                get(qdrant, "load_rss_delta_mb"),
                q50,
            ]
        )
    return table(header, rows)


def edge_table(sizes: dict[int, dict[str, Row]]) -> list[str]:
    """Qdrant's Rust shard (Qdrant Edge): build, memory, latency, HNSW recall, BM25 parity."""
    header = (
        "N | HNSW m | upsert s | optimize (HNSW + sparse) s | disk MB | build peak Δ MB | "
        "RAM Δ MB (after queries) | dense HNSW p50 / p95 ms | exact p50 ms | "
        "HNSW recall@10 | recall@10 (p50 ms) at hnsw_ef 64 / 128 / 256 / 512 | "
        "sparse p50 / p95 ms | hybrid p50 / p95 ms | "
        "BM25 vs bm25s: largest score difference (claims differing)"
    )
    rows = []
    for size, edge in [
        (size, steps[step])
        for step in ("qdrant_edge", "qdrant_edge_flat")
        for size, steps in sizes.items()
        if step in steps
    ]:
        parity = (
            "–"
            if edge.get("bm25_parity_max_abs_diff") is None
            else f"{edge['bm25_parity_max_abs_diff']:.1e} "
            f"({edge['bm25_parity_claims_differing']} of {edge['bm25_parity_claims']})"
        )
        rows.append(
            [
                f"{size:,}",
                str(edge.get("hnsw_m", 16)),
                get(edge, "upsert_seconds"),
                get(edge, "index_seconds"),
                get(edge, "disk_bytes", 1e-6),
                get(edge, "build_peak_delta_mb"),
                f"{get(edge, 'load_rss_delta_mb')} ({get(edge, 'queried_rss_delta_mb')})",
                pair(edge, "dense_p50_ms", "dense_p95_ms"),
                get(edge, "dense_exact_p50_ms"),
                get(edge, "hnsw_recall_at_10"),
                _sweep(edge.get("hnsw_ef_sweep")),
                pair(edge, "sparse_p50_ms", "sparse_p95_ms"),
                pair(edge, "hybrid_p50_ms", "hybrid_p95_ms"),
                parity,
            ]
        )
    return table(header, rows)


def _edge_sparse(steps: dict[str, Row]) -> str:
    edge = pair(steps.get("qdrant_edge"), "sparse_p50_ms", "sparse_p95_ms")
    flat = steps.get("qdrant_edge_flat")
    return edge if flat is None else f"{edge} ({pair(flat, 'sparse_p50_ms', 'sparse_p95_ms')})"


def _sweep(sweep: dict[str, Row] | None) -> str:
    if not sweep:
        return "–"
    recalls = " / ".join(num(v["recall_at_10"]) for v in sweep.values())
    return f"{recalls} ({' / '.join(num(v['p50_ms']) for v in sweep.values())})"


def sparse_table(sizes: dict[int, dict[str, Row]]) -> list[str]:
    """The BM25 paths side by side: bm25s in memory, bm25s memory-mapped, Qdrant sparse."""
    header = (
        "N | bm25s in memory: RAM Δ MB | scoring p50 / p95 ms | "
        "bm25s mmap: RAM Δ MB (after queries) | scoring p50 / p95 ms | "
        "Qdrant local: RAM Δ MB (dense + sparse) | sparse p50 / p95 ms | "
        "Qdrant Edge: sparse p50 / p95 ms (no HNSW graph)"
    )
    rows = []
    for size, steps in sizes.items():
        bm25, mmap, qdrant = steps.get("bm25"), steps.get("bm25_mmap"), steps.get("qdrant")
        rows.append(
            [
                f"{size:,}",
                get(bm25, "load_rss_delta_mb"),
                pair(bm25, "score_p50_ms", "score_p95_ms"),
                _ram_load_and_queried(mmap),
                pair(mmap, "score_p50_ms", "score_p95_ms"),
                get(qdrant, "load_rss_delta_mb"),
                pair(qdrant, "sparse_p50_ms", "sparse_p95_ms"),
                _edge_sparse(steps),
            ]
        )
    return table(header, rows)


def embedding_table(measurements: Sequence[Row]) -> list[str]:
    once = {r["step"]: r for r in measurements if r.get("size") is None}
    embed, ray = once.get("embed"), once.get("ray")
    if embed is None and ray is None:
        return ["(not measured)"]
    header = (
        "embedder | passages | 2 threads p/s | 1 thread p/s | Ray passages | "
        "Ray 1 worker p/s (steady) | Ray 2 workers p/s (steady) | speed-up | basis"
    )
    threads = (embed or {}).get("threads", {})
    runs = (ray or {}).get("by_workers", {})

    def ray_rate(w: str) -> str:
        run = runs.get(w)
        if run is None:
            return "–"
        return f"{num(run['end_to_end_passages_per_s'])} ({num(run['steady_passages_per_s'])})"

    row = [
        str((embed or {}).get("embedder", "–")),
        get(embed, "sample"),
        get(threads.get("2"), "passages_per_s"),
        get(threads.get("1"), "passages_per_s"),
        get(ray, "passages"),
        ray_rate("1"),
        ray_rate("2"),
        get(ray, "speedup"),
        str((ray or {}).get("efficiency_basis", "–")),
    ]
    return table(header, [row])


def fits_table(fits: dict[str, Row], target: int) -> list[str]:
    header = (
        f"metric | unit | sizes (N) | a | b | R² | at {target:,} | linear from largest N | "
        "× beyond largest N"
    )
    rows = []
    for name, fit in fits.items():
        at, unit = in_plan_units(fit["at_target"], fit["unit"])
        linear, _ = in_plan_units(fit["linear_from_largest"], fit["unit"])
        rows.append(
            [
                f"`{name}` {fit['label']}",
                fit["unit"],
                ", ".join(f"{n:,}" for n in fit["sizes"]),
                f"{fit['a']:.3g}",
                f"{fit['b']:.3f}",
                f"{fit['r2']:.3f}",
                f"{num(at)} {unit}",
                f"{num(linear)} {unit}",
                num(target / max(fit["sizes"])),
            ]
        )
    return table(header, rows)


def plan_table(plan: Sequence[Row], node_ram_gb: float) -> list[str]:
    header = f"component | at target | basis | cross-check | machines ({num(node_ram_gb)} GB)"
    rows = []
    for r in plan:
        value = "–" if r.get("value") is None else f"{num(r['value'])} {r['unit']}"
        checks = []
        if r.get("analytic") is not None:
            checks.append(f"analytic {num(r['analytic'])} {r['unit']}: {r['analytic_basis']}")
        if r.get("linear_check") is not None:
            checks.append(f"linear {num(r['linear_check'])} {r['unit']}")
        basis = r["basis"] + (f". {r['note']}" if r.get("note") else "")
        rows.append(
            [r["component"], value, basis, "; ".join(checks) or "–", num(r.get("machines"))]
        )
    return table(header, rows)


def sketch_table(sketch: Sequence[Row], node_ram_gb: float) -> list[str]:
    header = f"to provision | at target | machines ({num(node_ram_gb)} GB) | sum of"
    rows = [
        [
            line["what"],
            "–" if line["value"] is None else f"{num(line['value'])} {line['unit']}",
            num(line["machines"]),
            ", ".join(f"`{m}`" for m in line["from"]),
        ]
        for line in sketch
    ]
    return table(header, rows)


def drivers_lines(drivers: dict[str, list[Row]]) -> list[str]:
    names = {"ram": "RAM", "disk": "Disk", "time": "Time"}
    lines = []
    for resource, items in drivers.items():
        ranked = " > ".join(f"{d['component']} ({num(d['value'])} {d['unit']})" for d in items)
        lines.append(f"- **{names[resource]}**: {ranked or '–'}")
    return lines


def markdown(report: Row) -> str:
    """The whole report: measurements, embedding, fits, plan, cost drivers, notes."""
    target = report["target_passages"]
    sizes = _by_size(report["measurements"])
    m = report["machine"]
    lines = [
        f"# sciera capacity model: measured, then extrapolated to {target:,} passages",
        "",
        f"Machine: {m['cpus']} CPUs, {m['memory_gb']} GB RAM, Python {m['python']}. "
        f"Command: `{report['command']}`. MB/GB = 10^6/10^9 bytes; RAM Δ = RSS after "
        "opening the index minus before.",
        "",
        "## Measured: passage store and BM25",
        "",
        *lexical_table(sizes),
        "",
        "## Measured: dense (faiss flat, random 384-d vectors) and Qdrant (local mode)",
        "",
        *vector_table(sizes),
        "",
        "## Measured: Qdrant's own engine (Qdrant Edge, one shard in process; dense vectors "
        "drawn from a Gaussian fitted to real passage embeddings)",
        "",
        *edge_table(sizes),
        "",
        "## Measured: the BM25 paths side by side (Qdrant only up to `--qdrant-max`)",
        "",
        *sparse_table(sizes),
        "",
        "## Measured: embedding throughput (Ray: end-to-end, steady in brackets)",
        "",
        *embedding_table(report["measurements"]),
        "",
        "## Fits y = a·N^b (least squares in log-log space)",
        "",
        "N is the passages in the index. With two sizes a fit is exact (R² = 1 says nothing).",
        "",
        *fits_table(report["fits"], target),
        "",
        f"## Plan for {target:,} passages (extrapolated: every number names its basis)",
        "",
        "Where the fit and the linear cross-check differ widely, fixed costs still dominate at "
        "the measured sizes: plan with the larger, or measure larger sizes.",
        "",
        *plan_table(report["plan"], report["node_ram_gb"]),
        "",
        "## Cluster sketch (sums of the plan rows; RAM = the larger of fit and analytic)",
        "",
        *sketch_table(report["cluster_sketch"], report["node_ram_gb"]),
        "",
        "## Cost drivers (largest first)",
        "",
        *drivers_lines(report["cost_drivers"]),
        "",
        "## Notes",
        "",
        *[f"- {note}" for note in report["notes"]],
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--rows", type=Path, required=True, help="rows.jsonl of capacity.py")
    parser.add_argument("--meta", type=Path, required=True, help="command, machine and notes")
    parser.add_argument("--out", type=Path, required=True, help="the JSON report")
    parser.add_argument("--node-ram-gb", type=float, default=NODE_RAM_GB)
    args = parser.parse_args()
    rows = []
    if args.rows.exists():
        with open(args.rows, encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines if line.strip()]
    meta = json.loads(args.meta.read_text(encoding="utf-8"))
    report = build_report(rows, meta, TARGET, args.node_ram_gb)
    write_json(args.out, report, indent=2)
    args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")


if __name__ == "__main__":
    main()
