"""PNG plots of a results directory (matplotlib, Agg backend; ``pip install matplotlib``).

- ``rank_distribution.png`` (DeepEra Fig. 5): where gold and distractor items sit in
  the first-stage list (limited to the reranker's input) and after reranking, as the
  share of each kind at each rank 1..30 (normalized histograms). Without
  distractors in the dataset, the other (non-gold) items of the list stand in for them.
- ``metric_vs_k.png`` (Fig. 7): a cutoff metric (hit@K if asked for, else the first
  ``name@K`` of the experiment) for K = 1..depth, mean over repeats with a ±std band.
- ``ablation.png`` (Fig. 6): bars of the quality columns per pipeline, ±std error bars.

All plots use repeat 0's rankings for (a) and every complete repeat for (b) and (c).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciera.errors import require
from sciera.eval.aggregate import Row, complete_repeats, is_cost, mean_std, qids_of
from sciera.eval.metrics import evaluate, parse_metric, trec_order
from sciera.eval.runstore import Results, final_run

RANK_WINDOW = 30  # ranks shown: DeepEra reranks the top 30
K_GRID = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500, 1000)


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (an install hint when matplotlib is missing)."""
    mpl = require("matplotlib", "plots")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _ranks(ids: list[str], wanted: set[str]) -> list[int]:
    return [i + 1 for i, d in enumerate(ids) if d in wanted]


def rank_samples(results: Results, pipeline: str) -> dict[str, list[int]]:
    """Ranks of gold / distractor items before and (with a reranker) after reranking."""
    ds = results.dataset
    reps = complete_repeats(results, pipeline)
    out: dict[str, list[int]] = {}
    if not reps:
        return out
    # with distractors anywhere in the dataset, only they count (a Base instance has none);
    # without any, every non-gold item stands in for them
    any_distractors = any(ds.get("distractors", {}).values())
    for qid, rec in results.records[pipeline][reps[0]].items():
        gold = {d for d, g in ds["qrels"].get(qid, {}).items() if g > 0}
        first = trec_order({i: s for i, s in rec["first"]})
        if "rerank_input" in rec:
            first = first[: rec["rerank_input"]]
        distract = set(ds.get("distractors", {}).get(qid, []))
        if not any_distractors:
            distract = set(first) - gold
        lists = {"before": first}
        if "reranked" in rec:
            lists["after"] = trec_order({i: s for i, s in rec["reranked"]})
        for when, ids in lists.items():
            out.setdefault(f"gold {when}", []).extend(_ranks(ids, gold))
            out.setdefault(f"distractor {when}", []).extend(_ranks(ids, distract))
    return out


def plot_rank_distribution(results: Results, path: Path) -> Path:
    plt = pyplot()
    names = results.pipelines
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    has_distractors = any(results.dataset.get("distractors", {}).values())
    other = "distractor" if has_distractors else "non-gold"
    colors = {"gold": "#2a9d8f", "distractor": "#e76f51"}
    for ax, name in zip(axes[0], names, strict=True):
        samples = rank_samples(results, name)
        window = min(RANK_WINDOW, max([max(v) for v in samples.values() if v] or [1]))
        bins = [b + 0.5 for b in range(window + 1)]
        for key, values in samples.items():
            kind, when = key.split()
            shown = [v for v in values if v <= window]
            if not shown:
                continue
            after = when == "after"
            ax.hist(
                shown,
                bins=bins,
                density=True,
                histtype="stepfilled" if after else "step",
                alpha=0.4 if after else 1.0,
                linestyle="-" if after else "--",
                linewidth=1.8,
                color=colors[kind],
                label=f"{kind if kind == 'gold' else other} {when} (n={len(shown)})",
            )
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("rank")
        ax.set_ylabel("share of items")
        ax.legend(fontsize=7)
    fig.suptitle(f"Where gold and other items rank (top {RANK_WINDOW}), before / after reranking")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def k_family(metrics: Sequence[str]) -> str | None:
    """The metric family plotted against K: hit if present, else the first ``name@K``."""
    query = [m for m in metrics if "@" in m and parse_metric(m).definition.kind == "query"]
    fams = [m.split("@")[0] for m in query if m.split("@")[0] not in ("rp", "nrs")]
    if not fams:
        return None
    return "hit" if "hit" in fams else fams[0]


def metric_vs_k(results: Results, family: str, setting: str = "all") -> dict[str, list[tuple]]:
    """``{pipeline: [(K, mean, std), ...]}`` over the complete repeats."""
    qids = qids_of(results, setting)
    qrels = {q: results.dataset["qrels"][q] for q in qids}
    out: dict[str, list[tuple]] = {}
    for name in results.pipelines:
        reps = complete_repeats(results, name)
        if not reps:
            continue
        runs = [final_run({q: results.records[name][r][q] for q in qids}) for r in reps]
        depth = max(len(d) for run in runs for d in run.values())
        ks = [k for k in K_GRID if k <= max(depth, 1)]
        rows = []
        for k in ks:
            spec = f"{family}@{k}"
            cell = mean_std([evaluate(run, qrels, [spec])[spec] for run in runs])
            rows.append((k, cell.mean, cell.std))
        out[name] = rows
    return out


def plot_metric_vs_k(results: Results, path: Path) -> Path | None:
    family = k_family(results.metrics)
    if family is None:
        return None
    plt = pyplot()
    series = metric_vs_k(results, family)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, rows in series.items():
        ks = [r[0] for r in rows]
        means = [r[1] for r in rows]
        stds = [r[2] for r in rows]
        ax.plot(ks, means, marker="o", markersize=3.5, label=name)
        ax.fill_between(
            ks,
            [m - s for m, s in zip(means, stds, strict=True)],
            [m + s for m, s in zip(means, stds, strict=True)],
            alpha=0.2,
        )
    ax.set_xscale("log")
    ax.set_xlabel("K (log scale)")
    ax.set_ylabel(f"{family}@K")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{family}@K by pipeline")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_ablation(rows: Sequence[Row], path: Path) -> Path | None:
    cols = [c for c in dict.fromkeys(c for r in rows for c in r.cells) if not is_cost(c)]
    cols = [c for c in cols if all(0.0 <= r.cells[c].mean <= 1.0 for r in rows if c in r.cells)]
    if not cols:
        return None
    plt = pyplot()
    settings = list(dict.fromkeys(r.setting for r in rows))
    fig, axes = plt.subplots(
        1,
        len(settings),
        figsize=(max(6.0, 1.3 * len(cols) * 2) * len(settings) / 1.5, 4.0),
        squeeze=False,
    )
    for ax, setting in zip(axes[0], settings, strict=True):
        group = [r for r in rows if r.setting == setting]
        width = 0.8 / max(len(group), 1)
        shown, series = ablation_bars(group, cols, width)
        for label, xs, means, stds in series:
            bars = ax.bar(xs, means, width, yerr=stds, capsize=3, label=label)
            ax.bar_label(bars, fmt="%.3f", fontsize=6, padding=2)
        ax.set_xticks(range(len(shown)), shown, fontsize=8)
        ax.set_ylim(0, 1.08)
        ax.set_title(f"setting: {setting}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Pipelines compared (mean ± std over repeats)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def ablation_bars(
    group: Sequence[Row], cols: Sequence[str], width: float
) -> tuple[list[str], list[tuple[str, list[float], list[float], list[float]]]]:
    """One setting's panel: the columns shown and, per pipeline, its bars (x, mean, std),
    side by side ``width`` apart around each tick. A metric no row of the setting has (CDR
    in the Base setting) gets no tick, and a row without a metric gets no bar there: never
    a bar drawn at 0 for a missing value."""
    shown = [c for c in cols if any(c in r.cells for r in group)]
    series = []
    for j, r in enumerate(group):
        at = [i for i, c in enumerate(shown) if c in r.cells]
        series.append(
            (
                r.pipeline,
                [i + (j - (len(group) - 1) / 2) * width for i in at],
                [r.cells[shown[i]].mean for i in at],
                [r.cells[shown[i]].std for i in at],
            )
        )
    return shown, series


def write_plots(results: Results, rows: Sequence[Row], out: Path) -> dict[str, Path]:
    paths: dict[str, Path] = {}
    paths["rank_distribution"] = plot_rank_distribution(results, out / "rank_distribution.png")
    k = plot_metric_vs_k(results, out / "metric_vs_k.png")
    if k is not None:
        paths["metric_vs_k"] = k
    a = plot_ablation(rows, out / "ablation.png")
    if a is not None:
        paths["ablation"] = a
    return paths
