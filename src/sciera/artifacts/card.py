"""Model cards: what a trained model was made from, how, and how well it did on dev.

A card is ``sciera-card.json`` in the model folder (read back by the loaders: max length,
the calibrator to use, the default scoring mode) plus a ``README.md`` rendering of it for
people. Nothing a card states is typed in by hand: the trainer fills every field
(:mod:`sciera.train` writes cards with :func:`write_card`; the loaders read them with
:func:`read_card`).
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciera.artifacts.files import CARD_FILE, README_FILE, write_atomic

FUSED_MARGIN = 0.01


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("sciera", "torch", "transformers", "sentence-transformers"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


def default_score_mode(modes: Mapping[str, Mapping[str, float]]) -> str:
    """A cross-encoder's default scoring from its dev metrics: ``fused`` (the logit with
    the first stage's score and rank) unless the logit alone ranks better on dev by more
    than :data:`FUSED_MARGIN` nDCG@10. Fused is preferred on ties because its calibrator
    can lean on the first stage where the model is out of its domain; the logit alone
    cannot."""
    ce, fused = modes["ce"]["ndcg@10"], modes["fused"]["ndcg@10"]
    return "ce" if ce > fused + FUSED_MARGIN else "fused"


def read_card(model_dir: str | Path) -> dict[str, Any] | None:
    path = Path(model_dir) / CARD_FILE
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _table(rows: list[Mapping[str, Any]]) -> str:
    head = "| epoch | steps | loss | dev nDCG@10 | dev hit@1 | minutes |\n|---|---|---|---|---|---|"
    body = [
        f"| {r['epoch']}{' (partial)' if r.get('partial') else ''} | {r['steps']} | "
        f"{r['mean_loss']:.3f} | {r['dev']['ndcg@10']:.3f} | {r['dev']['hit@1']:.3f} | "
        f"{r['seconds'] / 60:.1f} |"
        for r in rows
    ]
    return "\n".join([head, *body])


def _held_out_rows(label: str, by_key: Mapping[str, Mapping[str, Any]] | None) -> list[str]:
    """Table rows of every scoring mode on rows apart from the dev claims (``label``), by
    precision key (``modes``: fp32, ``modes_int8``)."""
    return [
        f"| {k}, {label}{'' if key == 'modes' else ', int8 ONNX'} | "
        f"{v['ndcg@10']:.3f} | {v['hit@1']:.3f} | " + (f"{v['ece']:.4f} |" if "ece" in v else "|")
        for key, modes in (by_key or {}).items()
        for k, v in modes.items()
    ]


def _ssli_rows(card: Mapping[str, Any]) -> list[str]:
    """Table rows of the calibration SSLI questions (in-sample, distractors in the corpus)
    and a line on where they came from."""
    scores = card["dev"].get("calibration_ssli") or {}
    rows = _held_out_rows("calibration SSLI questions", scores)
    info = card["data"].get("calibration_ssli")
    if info:
        rows += [
            "",
            f"Fused weights also fitted on {info['used']} calibration SSLI questions "
            f"(x{card['config']['calibration_ssli']['weight']}) from "
            f"{', '.join(info['sets'])}, their {info['distractors']} distractors in "
            f"{info['corpus']}; {len(info['refused_seen_gold'])} refused (gold abstract seen "
            "in training, dev, calibration or evaluation). A distractor first: "
            + "; ".join(
                f"{k} {v['distractor_first']:.3f}" for k, v in (scores.get("modes") or {}).items()
            )
            + ".",
        ]
    return rows


def render(card: Mapping[str, Any]) -> str:
    """The card as Markdown."""
    dev = card["dev"]
    head = _soup(card) if "soup" in card else _trained(card)
    lines = [
        *head,
        "## Dev split: ranking the first stage's candidates",
        "",
        "| scoring | nDCG@10 | hit@1 | ECE |",
        "|---|---|---|---|",
        *(
            f"| {k} | {v['ndcg@10']:.3f} | {v['hit@1']:.3f} | "
            + (f"{v['ece']:.4f} |" if "ece" in v else "|")
            for k, v in dev["modes"].items()
        ),
        *(
            f"| {k}, int8 ONNX | {v['ndcg@10']:.3f} | {v['hit@1']:.3f} | "
            + (f"{v['ece']:.4f} |" if "ece" in v else "|")
            for k, v in (dev.get("modes_int8") or {}).items()
            if k != "first_stage"
        ),
        *_held_out_rows("calibration questions", dev.get("calibration_questions")),
        *_ssli_rows(card),
        "",
        *(
            [
                "Int8 calibrators (for `precision: int8`, fitted on the int8 ONNX export's "
                f"logits) refitted on {card['recalibrated_int8']['date']}:",
                "",
                "```bash",
                card["recalibrated_int8"]["command"],
                "```",
                "",
            ]
            if "recalibrated_int8" in card
            else []
        ),
        *(
            [
                f"Calibrators refitted on the dev split on {card['recalibrated']['date']} "
                f"(fused features {', '.join(card['recalibrated']['fused_features'])}; "
                f"first stage {card['recalibrated']['first_stage']}):",
                "",
                "```bash",
                card["recalibrated"]["command"],
                "```",
                "",
            ]
            if "recalibrated" in card
            else []
        ),
        *(
            [
                f"Default scoring mode: `{card['score_mode']}` (fused unless the logit alone "
                f"beats it on dev nDCG@10 by more than {FUSED_MARGIN}).",
                "",
            ]
            if "score_mode" in card
            else []
        ),
        f"Versions: {json.dumps(card['versions'])}",
        "",
    ]
    return "\n".join(lines)


def write_card(model_dir: str | Path, card: Mapping[str, Any]) -> None:
    """The card and its rendering into ``model_dir``, each file written atomically."""
    model_dir = Path(model_dir)
    write_atomic(model_dir / CARD_FILE, json.dumps(card, indent=1) + "\n")
    write_atomic(model_dir / README_FILE, render(card))


def _extra_negatives(data: dict[str, Any]) -> list[str]:
    lines = []
    if data.get("ssli_negatives"):
        lines.append(f"- SSLI distractors as negatives: {json.dumps(data['ssli_negatives'])}")
    if data.get("spliced_negatives"):
        sp = data["spliced_negatives"]
        lines.append(
            f"- spliced negatives (gold background, + a mined negative's results): "
            f"{sp['background']} + {sp['spliced']} for {sp['queries']} queries"
        )
    return lines


def _calibration_questions(data: dict[str, Any]) -> list[str]:
    cq = data.get("calibration_questions")
    if not cq:
        return []
    styles = str(cq.get("style", "question")).replace("+", ", ")
    return [
        f"- calibration questions (calibrators only, never trained on): {cq['kept']} kept of "
        f"{cq['queries']} written by `{cq['llm']}` for {cq['passages']} {cq['source']}, "
        f"{cq.get('from_dev_gold', 0)} of them dev gold (kept when the first stage ranks the "
        f"abstract in its top {cq['keep_top']})"
        + (f"; one question per abstract in each style: {styles}" if ", " in styles else "")
    ]


def _continued_from(card: Mapping[str, Any]) -> list[str]:
    """A model trained on from another one: that model's own command first."""
    prev = card.get("continued_from")
    if not prev:
        return []
    return [
        f"Trained on from `{prev['name']}` ({prev['what']}), itself made by:",
        "",
        "```bash",
        prev["command"],
        "```",
        "",
        "then:",
        "",
    ]


def _reproduce(card: Mapping[str, Any], steps: str) -> str:
    """The line before the command that made the model: a recipe's, or ``steps`` then it."""
    recipe = card.get("recipe")
    if recipe:
        return (
            f"Reproduce: every stage of its recipe `{recipe['path']}` (a rerun skips the "
            "stages done):"
        )
    return f"Reproduce: {steps}" if steps else "Reproduce:"


def _trained(card: Mapping[str, Any]) -> list[str]:
    """Header, data and training sections of a model trained by sciera."""
    data = card["data"]
    return [
        f"# {card['name']}",
        "",
        f"A {card['kind']} trained by sciera from `{card['base']}`.",
        "",
        _reproduce(card, ""),
        "",
        *_continued_from(card),
        "```bash",
        card["command"],
        "```",
        "",
        "## Data and splits",
        "",
        *_corpus_lines(card),
        f"- training queries: {data['train_queries']} ({data['train_groups']} groups); "
        f"dev queries (whole queries, seed {card['config']['seed']}): {data['dev_queries']}",
        f"- hard negatives: {data['negatives_from']}",
        *_extra_negatives(data),
        *_calibration_questions(data),
        f"- left out: {json.dumps(data['skipped'])}",
        f"- never trained on: {json.dumps(card['splits'])}",
        "",
        "## Hyperparameters",
        "",
        "```json",
        json.dumps(card["config"], indent=1),
        "```",
        "",
        "## Training (dev split after every epoch)",
        "",
        _table(card["epochs"]),
        "",
        f"Best epoch: {card['best_epoch']}; training time {card['train_seconds'] / 60:.1f} min.",
        "",
    ]


def _corpus_lines(card: Mapping[str, Any]) -> list[str]:
    data = card["data"]
    return [
        f"- corpus: `{data['corpus']}` (store fingerprint `{data['store_fingerprint']}`)",
        f"- queries: `{data['queries']}`, judgments: `{data['qrels']}`",
    ]


def _soup(card: Mapping[str, Any]) -> list[str]:
    """Header, ingredients and trials of a model soup (``sciera train soup``)."""
    soup, data = card["soup"], card["data"]
    chosen = set(soup["chosen"])
    lines = [
        f"# {card['name']}",
        "",
        f"A {card['kind']} made by sciera as {card['base']} (the weights averaged; "
        f"ingredients chosen by {soup['selection']}).",
        "",
        _reproduce(card, "make each ingredient below, then"),
        "",
        "```bash",
        card["command"],
        "```",
        "",
        "## Ingredients",
        "",
    ]
    for ing in soup["ingredients"]:
        used = "in the soup" if ing["name"] in chosen else "left out"
        lines += [
            f"- `{ing['name']}` ({used}; {ing['train_queries']} training queries, "
            f"loss {ing['loss']}):",
            "",
            *("  " + line if line else "" for line in _continued_from(ing)),
            "  ```bash",
            f"  {ing['command']}",
            "  ```",
            "",
        ]
    lines += [
        "## Dev trials",
        "",
        "| ingredients | fused nDCG@10 | fused hit@1 | logit nDCG@10 | logit hit@1 |",
        "|---|---|---|---|---|",
        *(
            f"| {' + '.join(t['members'])} | {t['modes']['fused']['ndcg@10']:.3f} | "
            f"{t['modes']['fused']['hit@1']:.3f} | {t['modes']['ce']['ndcg@10']:.3f} | "
            f"{t['modes']['ce']['hit@1']:.3f} |"
            for t in soup["trials"]
        ),
        "",
        "## Data and splits",
        "",
        *_corpus_lines(card),
        f"- dev queries (whole queries, seed {card['config']['seed']}): {data['dev_queries']}",
        *_calibration_questions(data),
        f"- abstracts an ingredient trained on beyond the labels (never a calibration "
        f"question): {len(data.get('calibration_banned', []))}",
        f"- never trained on (every ingredient): {json.dumps(card['splits'])}",
        "",
    ]
    return lines
