"""``sciera eval report RESULTS_DIR``: the table (Markdown, CSV, JSON) and the plots.

    from sciera.eval.report import write_report
    paths = write_report("results/scifact")   # -> results/scifact/report/{table.md,...}

The table has one row per pipeline and setting; a cell is ``mean ± std`` over
the complete repeats (just the mean with one repeat). In each setting the best
value of every column is in bold: the highest for quality columns, the lowest
for cost columns (``s/q``, ``tok/q``, ``*_failures``) and for metrics best at their
lowest (``distractor_decided``). Below it, every pipeline
against the baseline question by question with a paired two-sided p-value
(:mod:`sciera.eval.compare`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

from sciera.eval.aggregate import TOKENS, Row, aggregate, complete_repeats, is_cost
from sciera.eval.metrics.registry import lower_better
from sciera.eval.runstore import Results, load_results


def columns_of(rows: Sequence[Row]) -> list[str]:
    cols = list(dict.fromkeys(c for row in rows for c in row.cells))
    quality = [c for c in cols if not is_cost(c)]
    return quality + [c for c in cols if is_cost(c)]


def best_rows(rows: Sequence[Row], column: str) -> set[int]:
    """Indices of the rows holding the best mean of ``column`` within their setting."""
    best: set[int] = set()
    for setting in dict.fromkeys(r.setting for r in rows):
        idx = [i for i, r in enumerate(rows) if r.setting == setting and column in r.cells]
        if len(idx) < 2:
            continue
        values = {i: round(rows[i].cells[column].mean, 4) for i in idx}
        lowest = is_cost(column) or lower_better(column)
        target = min(values.values()) if lowest else max(values.values())
        best |= {i for i, v in values.items() if v == target}
    return best


def _fmt(value: float, column: str) -> str:
    if column.startswith("s/q"):
        return f"{value:.4f}"
    if column.startswith(TOKENS) or column.endswith("_failures"):
        return f"{value:.1f}"
    return f"{value:.4f}"


def cell_text(row: Row, column: str) -> str:
    cell = row.cells.get(column)
    if cell is None:
        return "–"
    text = _fmt(cell.mean, column)
    return text if row.repeats < 2 else f"{text} ± {_fmt(cell.std, column)}"


def markdown_table(rows: Sequence[Row], title: str = "") -> str:
    cols = columns_of(rows)
    head = ["pipeline", "setting", "queries", "repeats", *cols]
    lines = [f"## {title}\n" if title else "", "| " + " | ".join(head) + " |"]
    lines.append("|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|")
    bold = {c: best_rows(rows, c) for c in cols}
    for i, r in enumerate(rows):
        cells = [cell_text(r, c) if i not in bold[c] else f"**{cell_text(r, c)}**" for c in cols]
        lead = [r.pipeline, r.setting, str(r.queries), str(r.repeats)]
        lines.append("| " + " | ".join([*lead, *cells]) + " |")
    return "\n".join(line for line in lines if line) + "\n"


def write_csv(path: Path, rows: Sequence[Row]) -> None:
    cols = columns_of(rows)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["pipeline", "setting", "queries", "repeats"]
            + [f"{c} {part}" for c in cols for part in ("mean", "std")]
        )
        for r in rows:
            vals: list[object] = []
            for c in cols:
                cell = r.cells.get(c)
                vals += [cell.mean, cell.std] if cell else ["", ""]
            w.writerow([r.pipeline, r.setting, r.queries, r.repeats, *vals])


def table_json(rows: Sequence[Row], results: Results) -> dict:
    return {
        "experiment": results.manifest["experiment"]["name"],
        "dataset": results.manifest.get("dataset", {}),
        "std": "sample standard deviation over repeats (n - 1); 0 for one repeat",
        "rows": [
            {
                "pipeline": r.pipeline,
                "setting": r.setting,
                "queries": r.queries,
                "repeats": r.repeats,
                "cells": {
                    c: {"mean": cell.mean, "std": cell.std, "values": list(cell.values)}
                    for c, cell in r.cells.items()
                },
            }
            for r in rows
        ],
    }


def _notes(results: Results) -> list[str]:
    notes = []
    for p in results.pipelines:
        planned = int(results.manifest.get("plan", {}).get(p, 0))
        done = len(complete_repeats(results, p))
        if done < planned:
            notes.append(f"{p}: {done} of {planned} repeats complete (incomplete ones left out)")
    return notes


def write_report(
    results_dir: str | Path, plots: bool = True, baseline: str | None = None
) -> dict[str, Path]:
    """Write ``report/table.{md,csv,json}``, ``report/significance.json`` (every pipeline
    against ``baseline``, default the first, question by question) and the PNG plots;
    returns the paths by name."""
    from sciera.eval.compare import compare_pipelines, markdown_comparisons

    results = load_results(results_dir)
    comparisons = compare_pipelines(results, baseline)
    rows = aggregate(results)
    out = Path(results_dir) / "report"
    out.mkdir(exist_ok=True)
    paths = {"md": out / "table.md", "csv": out / "table.csv", "json": out / "table.json"}
    name = results.manifest["experiment"]["name"]
    ds = results.manifest.get("dataset", {})
    text = markdown_table(rows, f"{name} ({ds.get('name', '')}, {ds.get('unit', '')}s)")
    notes = _notes(results)
    text += "".join(f"\n- {n}" for n in notes) + ("\n" if notes else "")
    if comparisons:
        text += "\n" + markdown_comparisons(comparisons)
    paths["md"].write_text(text, encoding="utf-8")
    write_csv(paths["csv"], rows)
    paths["json"].write_text(json.dumps(table_json(rows, results), indent=2), encoding="utf-8")
    paths["significance"] = out / "significance.json"
    paths["significance"].write_text(
        json.dumps([c.as_dict() for c in comparisons], indent=2), encoding="utf-8"
    )
    if plots:
        from sciera.eval.plots import write_plots

        paths.update(write_plots(results, rows, out))
    return paths
