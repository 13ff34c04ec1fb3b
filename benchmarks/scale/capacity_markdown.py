"""The capacity report as Markdown: what was measured, the fits, and the plan at the
target size (the JSON report of ``capacity_model.build_report`` in, text out)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from capacity_model import in_plan_units

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


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def _by_size(measurements: Sequence[Row]) -> dict[int, dict[str, Row]]:
    sizes: dict[int, dict[str, Row]] = {}
    for row in measurements:
        if row.get("size") is not None:
            sizes.setdefault(row["size"], {})[row["step"]] = row
    return dict(sorted(sizes.items()))


def lexical_table(sizes: dict[int, dict[str, Row]]) -> list[str]:
    header = [
        "N (passages)",
        "words/passage",
        "ingest s",
        "ingest passages/s",
        "store MB",
        "BM25 build s",
        "build peak Δ MB",
        "BM25 disk MB",
        "BM25 RAM Δ MB",
        "BM25 search p50 / p95 ms",
        "scoring p50 / p95 ms",
        "mmap RAM Δ MB (after queries)",
        "mmap scoring p50 / p95 ms",
    ]
    rows = []
    for size, steps in sizes.items():
        ingest, bm25, mmap = steps.get("ingest"), steps.get("bm25"), steps.get("bm25_mmap")
        passages = (ingest or bm25 or mmap or {}).get("passages", size)
        words = (ingest or {}).get("synthetic", {}).get("words_per_passage_mean")
        mmap_ram = (
            "–"
            if mmap is None
            else (f"{num(mmap['load_rss_delta_mb'])} ({num(mmap['queried_rss_delta_mb'])})")
        )
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
                mmap_ram,
                pair(mmap, "score_p50_ms", "score_p95_ms"),
            ]
        )
    return table(header, rows)


def vector_table(sizes: dict[int, dict[str, Row]]) -> list[str]:
    header = [
        "N",
        "faiss add s",
        "faiss RAM Δ MB",
        "faiss disk MB",
        "flat p50 / p95 ms",
        "Qdrant build s",
        "Qdrant disk MB",
        "Qdrant RAM Δ MB",
        "Qdrant p50 dense / sparse / hybrid ms",
    ]
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
    header = [
        "N",
        "HNSW m",
        "upsert s",
        "optimize (HNSW + sparse) s",
        "disk MB",
        "build peak Δ MB",
        "RAM Δ MB (after queries)",
        "dense HNSW p50 / p95 ms",
        "exact p50 ms",
        "HNSW recall@10",
        "recall@10 (p50 ms) at hnsw_ef 64 / 128 / 256 / 512",
        "sparse p50 / p95 ms",
        "hybrid p50 / p95 ms",
        "BM25 vs bm25s: largest score difference (claims differing)",
    ]
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
    header = [
        "N",
        "bm25s in memory: RAM Δ MB",
        "scoring p50 / p95 ms",
        "bm25s mmap: RAM Δ MB (after queries)",
        "scoring p50 / p95 ms",
        "Qdrant local: RAM Δ MB (dense + sparse)",
        "sparse p50 / p95 ms",
        "Qdrant Edge: sparse p50 / p95 ms (no HNSW graph)",
    ]
    rows = []
    for size, steps in sizes.items():
        bm25, mmap, qdrant = steps.get("bm25"), steps.get("bm25_mmap"), steps.get("qdrant")
        mmap_ram = (
            "–"
            if mmap is None
            else (f"{num(mmap['load_rss_delta_mb'])} ({num(mmap['queried_rss_delta_mb'])})")
        )
        rows.append(
            [
                f"{size:,}",
                get(bm25, "load_rss_delta_mb"),
                pair(bm25, "score_p50_ms", "score_p95_ms"),
                mmap_ram,
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
    header = [
        "embedder",
        "passages",
        "2 threads p/s",
        "1 thread p/s",
        "Ray passages",
        "Ray 1 worker p/s (steady)",
        "Ray 2 workers p/s (steady)",
        "speed-up",
        "basis",
    ]
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
    header = [
        "metric",
        "unit",
        "sizes (N)",
        "a",
        "b",
        "R²",
        f"at {target:,}",
        "linear from largest N",
        "× beyond largest N",
    ]
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
    header = ["component", "at target", "basis", "cross-check", f"machines ({num(node_ram_gb)} GB)"]
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
    header = ["to provision", "at target", f"machines ({num(node_ram_gb)} GB)", "sum of"]
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
