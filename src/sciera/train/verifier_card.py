"""The verifier's model card: ``sciera-card.json`` (read back by the loaders: heads, inputs,
calibrators, decision policy) and its ``README.md`` rendering, in the style of the
cross-encoder's card (:mod:`sciera.artifacts.card`). Every field is filled by the trainer."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sciera.artifacts.files import CARD_FILE, README_FILE, write_atomic

LEVELS = (
    ("abstract_label_only", "abstract label-only"),
    ("abstract_rationalized", "abstract rationalized"),
    ("sentence_selection", "sentence selection"),
    ("sentence_label", "sentence selection+label"),
)


def _f(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _scifact_rows(label: str, m: Mapping[str, float] | None) -> list[str]:
    if not m:
        return []
    cells = " | ".join(
        f"{_f(m[f'{k}_precision'])} / {_f(m[f'{k}_recall'])} / **{_f(m[f'{k}_f1'])}**"
        for k, _ in LEVELS
    )
    return [f"| {label} | {cells} |"]


def _scifact_table(title: str, section: Mapping[str, Any] | None) -> list[str]:
    if not section:
        return []
    head = " | ".join(name for _, name in LEVELS)
    return [
        f"## {title} ({section['claims']} claims)",
        "",
        "Precision / recall / F1 per level.",
        "",
        f"| setting | {head} |",
        "|---|" + "---|" * len(LEVELS),
        *_scifact_rows("oracle (cited abstracts given)", section.get("oracle")),
        *_scifact_rows("open (the top abstracts ask reads)", section.get("open")),
        "",
        *(
            [
                f"Verdict head on gold rationales: accuracy "
                f"{_f(section['oracle_rationale']['accuracy'])}, macro-F1 "
                f"{_f(section['oracle_rationale']['macro_f1'])}, ECE "
                f"{_f(section['oracle_rationale']['ece'])} "
                f"({section['oracle_rationale']['n']} evidence abstracts).",
                "",
            ]
            if section.get("oracle_rationale")
            else []
        ),
        *(
            [
                f"Claim level (open, strong {section['open_claims']['strong']}): "
                f"{section['open_claims']['refusal_rate']:.3f} of "
                f"{section['open_claims']['answerable']} answerable claims get NOT ENOUGH "
                f"INFO; {section['open_claims']['decided']} decisions, precision "
                f"{section['open_claims']['precision']:.3f}.",
                "",
            ]
            if section.get("open_claims")
            else []
        ),
    ]


def _epochs(rows: list[Mapping[str, Any]], metric: str) -> list[str]:
    keys = [
        k
        for k in (
            metric,
            "abstract_label_only_f1",
            "sentence_label_f1",
            "oracle_rationale_accuracy",
            "rationale_ap",
            "pubmedqa_accuracy",
            "pubmedqa_macro_f1",
        )
        if any(k in r["dev"] for r in rows)
    ]
    return [
        "| epoch | steps | loss | " + " | ".join(keys) + " | minutes |",
        "|---|---|---|" + "---|" * len(keys) + "---|",
        *(
            f"| {r['epoch']}{' (partial)' if r.get('partial') else ''} | {r['steps']} | "
            f"{r['mean_loss']:.3f} | "
            + " | ".join(_f(r["dev"].get(k, "")) for k in keys)
            + f" | {r['seconds'] / 60:.1f} |"
            for r in rows
        ),
    ]


def _pubmedqa(section: Mapping[str, Any] | None) -> list[str]:
    if not section:
        return []
    lines = [
        "## PubMedQA, held-out questions",
        "",
        "| task | n | accuracy | macro-F1 |",
        "|---|---|---|---|",
    ]
    names = {
        "reasoning": "reasoning setting (own contexts)",
        "reasoning_majority": "always the majority label",
        "bioasq_proxy": "BioASQ-format proxy (yes/no, long answer as snippet)",
    }
    for key, name in names.items():
        if key in section:
            s = section[key]
            lines.append(f"| {name} | {s['n']} | {s['accuracy']:.3f} | {s['macro_f1']:.3f} |")
    return [*lines, ""]


def _reproduce(card: Mapping[str, Any]) -> list[str]:
    """How to rebuild the model: its command and, when it has one, its recipe file."""
    recipe = card.get("recipe") or {}
    lines = ["Reproduce:", "", "```bash", card["command"], "```", ""]
    if recipe.get("path"):
        lines[0] = (
            f"Reproduce (the recipe `{recipe['path']}`, recorded in `sciera-card.json`; a "
            "rerun resumes its stages):"
        )
    return lines


def _command(section: Mapping[str, Any]) -> list[str]:
    """An older step's command, where the card records one (cards written before recipes)."""
    return ["", "```bash", section["command"], "```"] if section.get("command") else []


def _stages(section: Mapping[str, Any]) -> str:
    names = section.get("stages")
    return f"; the recipe's {' and '.join(names)} stage{'s' * (len(names) > 1)}" if names else ""


def _recalibrated(section: Mapping[str, Any] | None) -> list[str]:
    if not section:
        return []
    colon = ":" if section.get("command") else "."
    return [
        f"Recalibrated {section['date']} ({section['weights_from']}{_stages(section)}){colon}",
        *_command(section),
        "",
    ]


def _citer_added(section: Mapping[str, Any] | None) -> list[str]:
    if not section:
        return []
    colon = ":" if section.get("command") else "."
    return [
        f"Citer added {section['date']} (the weights, the other calibrators, the rest of the "
        "policy and the LLM combiners kept; the citer's calibrator and `min_quoted` chosen on "
        f"the dev claims{_stages(section)}){colon}",
        *_command(section),
        "",
    ]


def _member(t: Mapping[str, Any], k: int) -> str:
    """An ensemble member's training, as the citer's own is stated."""
    cfg = t["config"]
    best = next((e for e in t["epochs"] if e["epoch"] == t["best_epoch"]), None)
    ap = (best or {}).get("dev", {}).get("average_precision", 0.0)
    return (
        f"; member {k} the same with {cfg['hard_negatives']} hard and "
        f"{cfg['random_negatives']} random negatives per abstract, seed {cfg['seed']} "
        f"({len(t['epochs'])} epochs, {t['train_seconds'] / 60:.1f} min; epoch "
        f"{t['best_epoch']} kept, dev average precision {ap:.4f})"
    )


def _citer(
    section: Mapping[str, Any] | None,
    stats: Mapping[str, Any] | None,
    trials: Sequence[Mapping[str, Any]] | None,
    quoted: float | None,
    combined_trials: Sequence[Mapping[str, Any]] | None = None,
    combined_quoted: float | None = None,
) -> list[str]:
    if not section or not stats:
        return []
    t = section["training"]
    best = next((e for e in t["epochs"] if e["epoch"] == t["best_epoch"]), None)
    dev = best["dev"] if best else {}
    files = section["adapters"]
    files = [files] if isinstance(files, str) else list(files)
    members = t.get("members") or []
    return [
        f"- cited sentences: the citer {', '.join(f'`{f}`' for f in files)}, the relevance "
        f"cross-encoder `{section['base']}` with rank-{section['rank']} low-rank adapters "
        f"({t['trainable_parameters']:,} parameters) trained on the rationale labels alone "
        f"({len(t['epochs'])} epochs, {t['train_seconds'] / 60:.1f} min; epoch {t['best_epoch']} "
        f"kept by dev average precision over the evidence abstracts' sentences, "
        f"{dev.get('average_precision', 0.0):.4f}; best sentence a rationale in "
        f"{dev.get('best_right', 0.0):.1%} of them)"
        + "".join(_member(m, k + 2) for k, m in enumerate(members))
        + (f"; its logit the mean of the {len(files)} members'" if members else "")
        + f"; sentence context: {section['context']}; "
        f"P(rationale) by Platt scaling (`{section['calibrator']}`) on the same "
        f"{stats['sentences']} dev sentences, ECE {stats['ece_sigmoid']:.4f} (sigmoid) -> "
        f"{stats['ece']:.4f}; their average precision {stats['average_precision_head']:.4f} "
        f"(the rationale head) -> {stats['average_precision_citer']:.4f} (the citer). The "
        "head picks what the verdict reads, the citer which sentences are quoted: those with "
        "P(rationale) >= `min_quoted`, chosen on dev after everything else (the `trained` "
        f"verdict's: {_quote_choice(trials, quoted)}"
        + (
            f"; the `combined` verdict's: {_quote_choice(combined_trials, combined_quoted)}"
            if combined_trials
            else ""
        )
        + ")"
    ]


def _quote_choice(trials: Sequence[Mapping[str, Any]] | None, quoted: float | None) -> str:
    """``min_quoted`` as chosen, with the dev sentence F1 it was chosen by."""
    f1 = {t["min_quoted"]: t["sentence_label_f1"] for t in trials or ()}
    if quoted is None:
        return "none, quoted as without the citer" + (
            f" (dev open sentence selection+label F1 {f1[None]:.3f})" if None in f1 else ""
        )
    if None not in f1 or quoted not in f1:
        return str(quoted)
    return (
        f"{quoted}; dev open sentence selection+label F1 {f1[None]:.3f} quoting as without "
        f"it, {f1[quoted]:.3f} chosen"
    )


def _combiner(section: Mapping[str, Any] | None) -> list[str]:
    if not section:
        return []
    lines = [
        "## LLM combiners (the `combined` verdict)",
        "",
        f"The verdict head's and the LLM's (`{section['llm']}`, prompts {section['prompts']}) "
        f"label probabilities through a logistic regression per kind of input, fitted on "
        f"{section['fitted_on']}; at most {section['per_label']} inputs per label."
        + (
            " Each combiner's intercepts are then corrected from the rows' label mix to the "
            "training data's (the natural counts below), the prior it predicts under."
            if section.get("prior")
            else ""
        ),
        "",
        "| inputs | rows | reads | combined | trained | LLM | LLM, negated claim |",
        "|---|---|---|---|---|---|---|",
    ]
    searches = []
    for kind, file in section["files"].items():
        cv = section[kind]["cross_validated"]
        reads = section[kind].get("inputs", ["trained", "llm"])
        lines.append(
            f"| {kind}s (`{file}`) | {json.dumps(section[kind]['rows'])}"
            + (f" of {json.dumps(section[kind]['natural'])}" if "natural" in section[kind] else "")
            + f" | {', '.join(reads)} | "
            + " | ".join(
                f"{_f(cv[m]['accuracy'])} / {_f(cv[m]['macro_f1'])}" if m in cv else "-"
                for m in ("combined", "trained", "llm", "llm_negated")
            )
            + " |"
        )
        search = section[kind].get("input_search") or {}
        if len(search) > 1:
            searches.append(
                f"{kind}s: "
                + ", ".join(f"{name} {_f(s['macro_f1'])}" for name, s in search.items())
            )
    lines += [
        "",
        f"Accuracy / macro-F1, {section[next(iter(section['files']))]['folds']}-fold "
        "cross-validated by claim or question on those training rows (the trained head has "
        "seen these claims: its column is optimistic)."
        + (
            " What a combiner reads was chosen by the same cross-validated macro-F1 (more "
            "inputs only for a higher one): " + "; ".join(searches) + "."
            if searches
            else ""
        )
        + (
            " The combined column is of the corrected combiners, scored on the capped rows: "
            "where those under-represent a label the training data holds more of, it reads "
            "lower than on inputs mixed as the data is."
            if section.get("prior")
            else ""
        ),
        "",
        *_combined_policy(section.get("policy"), section.get("policy_search")),
    ]
    return lines


def _drawn(section: Mapping[str, Any]) -> str:
    """Which training questions the decider read: all of them (its rows are their label
    mix), or at most ``per_label`` of each, the intercepts corrected to that mix."""
    mix = json.dumps(section["natural"])
    read = [sum(m["rows"][k] for m in section["by_source"].values()) for k in section["natural"]]
    if read == list(section["natural"].values()):
        return f"every one of them, so their rows are the label mix {mix}"
    return (
        f"at most {section['per_label']} per label and source, its intercepts corrected to "
        f"the training questions' label mix {mix}"
    )


def _decider(section: Mapping[str, Any] | None) -> list[str]:
    if not section:
        return []
    sets = [k for k in section["cross_validated"]]
    head = "| questions | rows | aggregated | " + " | ".join(sets) + " |"
    lines = [
        "## Question decider",
        "",
        f"A yes/no question's verdict from the decisive abstract's combined verdict and the "
        f"LLM's (`{section['llm']}`, prompt {section['prompt']}) yes / no / maybe over all its "
        f"evidence at once, through a logistic regression (`{section['file']}`) reading "
        f"{' and '.join(section['inputs'])}; fitted on training questions only (BioASQ 7B and "
        f"8B from `{section['bioasq']}`, the PubMedQA training questions), {_drawn(section)}.",
        "",
        head,
        "|" + "---|" * (3 + len(sets)),
    ]
    rows = {**section["by_source"], "all": {**section["cross_validated"]}}
    rows["all"]["aggregated"] = section["aggregated"]
    for source, m in rows.items():
        n = json.dumps(m["rows"]) if "rows" in m else "-"
        cells = [f"{_f(m[k]['accuracy'])} / {_f(m[k]['macro_f1'])}" for k in ["aggregated", *sets]]
        lines.append(f"| {source} | {n} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Accuracy / macro-F1, {section['folds']}-fold cross-validated by question on those "
        "rows (aggregated: the abstracts' verdicts aggregated as for a claim, no decider); the "
        "inputs were chosen by that macro-F1 (more inputs only for a higher one).",
        "",
    ]
    return lines


def _combined_policy(
    policy: Mapping[str, Any] | None, search: Mapping[str, Any] | None
) -> list[str]:
    if not policy or not search:
        return []
    cv, gate = search["cross_validated"], search["card_gate"]
    row = "| {} | {} / {} / **{}** | {} / {} / **{}** |"

    def cells(name: str, m: Mapping[str, Any]) -> str:
        return row.format(
            name,
            *(_f(m[f"abstract_label_only_{k}"]) for k in ("precision", "recall", "f1")),
            *(_f(m[f"sentence_label_{k}"]) for k in ("precision", "recall", "f1")),
        )

    cite = [t for t in search.get("cite_trials", ()) if t["min_cited"] == policy.get("min_cited")]
    quote = [
        t for t in search.get("quote_trials", ()) if t["min_quoted"] == policy.get("min_quoted")
    ]
    return [
        "### The combined verdict's gate (chosen on the dev claims)",
        "",
        "An open-setting abstract is evidence when its score P(relevant)^w x "
        "(1 - P(NOT ENOUGH INFO))^(1 - w) reaches `min_relevance` (w = `relevance_weight`; "
        "w = 1 is the trained verdict's gate, P(relevant) alone); its cited rationale "
        "sentences are the best ones with P(rationale) >= `min_cited` (else the best one; "
        "`null`: the sentences read), and the verdict reads them too. All chosen on "
        f"{search['chosen_on']} by the mean of abstract label-only F1 and sentence "
        "selection+label F1 (the gate first, then `min_cited`), then `strong`: "
        f"`{json.dumps(dict(policy))}`",
        "",
        "| combined verdict, dev open setting | abstract label-only P / R / F1 "
        "| sentence selection+label P / R / F1 |",
        "|---|---|---|",
        cells("the trained verdict's gate (P(relevant) alone, its `min_relevance`)", gate),
        cells("chosen gate, citing the sentences read", search["trials"][0]),
        *(
            [cells("chosen gate and `min_cited`, on the claims they were chosen on", cite[0])]
            if cite
            else []
        ),
        *(
            [
                cells(
                    "chosen gate, `min_cited` and the citer's `min_quoted` (what is quoted), "
                    "on the claims they were chosen on",
                    quote[0],
                )
            ]
            if quote
            else []
        ),
        cells(
            f"chosen, {cv['folds']}-fold cross-validated over the dev claims "
            "(chosen on the other folds)",
            cv,
        ),
        "",
    ]


def _cited(policy: Mapping[str, Any], trials: Sequence[Mapping[str, Any]] | None) -> list[str]:
    if not trials:
        return []
    by = {t["min_cited"]: t for t in trials}
    read, chosen = by.get(None), by.get(policy.get("min_cited"))
    if read is None or chosen is None:
        return []
    return [
        f"- cited sentences (`min_cited`, chosen after the policy from "
        f"{', '.join('read' if t['min_cited'] is None else str(t['min_cited']) for t in trials)}"
        f"): {json.dumps(policy.get('min_cited'))}; dev open sentence selection+label F1 "
        f"{_f(read['sentence_label_f1'])} citing the sentences read, "
        f"{_f(chosen['sentence_label_f1'])} chosen"
    ]


def _data(card: Mapping[str, Any]) -> list[str]:
    """The card's "Data and splits" section."""
    data = card["data"]
    return [
        "## Data and splits",
        "",
        f"- claims: `{data['claims']}`, sentences: `{data['sentences']}`",
        f"- training claims: {data['train_claims']}; dev claims (whole claims, seed "
        f"{card['config']['seed']}): {data['dev_claims']}"
        + (
            " (the shipped cross-encoder's and embedder's dev split: never trained on by the "
            "first stage or the reranker)"
            if card.get("dev_same_as_shipped_reranker")
            else ""
        )
        + (f"; held-out CV fold: {data['test_claims']}" if data.get("test_claims") else ""),
        f"- rationale negatives and NOT ENOUGH INFO from: {data['negatives_from']}",
        f"- sentence examples (before per-epoch sampling): {json.dumps(data['sentence_examples'])}",
        f"- verdict examples: {json.dumps(data['verdict_examples'])}",
        f"- PubMedQA: {data['pubmedqa_train']} questions trained on, "
        f"{data['pubmedqa_held_out']} held out",
        *(
            [f"- SSLI distractors (NOT ENOUGH INFO): {json.dumps(data['ssli_negatives'])}"]
            if data.get("ssli_negatives")
            else []
        ),
        f"- zero-shot sentence scorer (picks hard negatives and noisy rationales): "
        f"`{data.get('zero_shot_scorer')}`",
        f"- left out: {json.dumps(data['skipped'])}",
        f"- never trained on: {json.dumps(card['splits'])}",
        "",
    ]


def render(card: Mapping[str, Any]) -> str:
    dev, policy = card["dev"], card["policy"]
    vc, rc = dev["verdict_calibration"], dev["rationale_calibration"]
    lines = [
        f"# {card['name']}",
        "",
        f"A {card['kind']} trained by sciera from `{card['base']}`.",
        "",
        *_reproduce(card),
        *_data(card),
        "## Hyperparameters",
        "",
        "```json",
        json.dumps(card["config"], indent=1),
        "```",
        "",
        f"## Training (dev split after every epoch; `{card['select_metric']}` picks the epoch)",
        "",
        "Per-epoch dev numbers: oracle setting, uncalibrated, rationale threshold 0.5, no "
        "fallback.",
        "",
        *_epochs(card["epochs"], card["select_metric"]),
        "",
        f"Best epoch: {card['best_epoch']}; training time {card['train_seconds'] / 60:.1f} min.",
        "",
        "## Calibration and decision policy (chosen on the dev claims)",
        "",
        f"- P(rationale): Platt scaling on {rc['sentences']} dev sentences ({rc['rationales']} "
        f"rationales); ECE {rc['ece_sigmoid']:.4f} (sigmoid) -> {rc['ece']:.4f}",
        *_citer(
            card.get("citer"),
            dev.get("citer_calibration"),
            dev.get("quote_trials"),
            policy.get("min_quoted"),
            (card.get("combiner") or {}).get("policy_search", {}).get("quote_trials"),
            (card.get("combiner") or {}).get("policy", {}).get("min_quoted"),
        ),
        f"- verdict: temperature scaling on {vc['inputs']} dev verdict inputs "
        f"{json.dumps(vc['labels'])}; top-label ECE {vc['ece_softmax']:.4f} (softmax) -> "
        f"{vc['ece']:.4f} (in-sample)",
        f"- open setting: top {dev['open_k']} of "
        + dev.get("open_candidates", "the first stage's top abstracts"),
        f"- policy (best mean of abstract label-only F1 and sentence selection+label F1, open "
        f"setting; `min_relevance` fixed, not chosen): `{json.dumps(policy)}`",
        *_cited(policy, dev.get("cite_trials")),
        f"- `strong` (claim level: fewest refusals of answerable dev claims with decision "
        f"precision >= 0.70): {policy['strong']}",
        "",
        *_recalibrated(card.get("recalibrated")),
        *_citer_added(card.get("citer_added")),
        *_combiner(card.get("combiner")),
        *_decider(card.get("decider")),
        *_scifact_table("Dev claims, with the chosen policy", dev),
        *_scifact_table("Held-out CV fold", card.get("test_fold")),
        *_pubmedqa(card.get("pubmedqa_held_out")),
        f"Versions: {json.dumps(card['versions'])}",
        "",
    ]
    return "\n".join(lines)


def write_card(model_dir: str | Path, card: Mapping[str, Any]) -> None:
    model_dir = Path(model_dir)
    write_atomic(model_dir / CARD_FILE, json.dumps(card, indent=1) + "\n")
    write_atomic(model_dir / README_FILE, render(card))
