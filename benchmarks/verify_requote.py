"""A verifier run of ``verify_scifact.py`` quoted again by a citer trained on the same split.

The citer (``sciera train verifier --citer-rank``) changes which sentences are quoted, never
the labels: the rationale head still picks what the verdict reads. So a run's stored labels,
quoted again by the citer trained on that run's split (:func:`sciera.verify.verifier.quoted`
at a fixed ``min_quoted``, on every abstract decided SUPPORT or CONTRADICT), are what the
model with the citer predicts, without the verifier's weights or the LLM behind the labels::

    python benchmarks/verify_requote.py --rows verifier-cv2ng_test_llm --fold 2 \\
        --out verifier-cv2ngq_test_llm

Trains (or reuses) the citer on the fold's split (the same claims, dev split and guard as
the fold's verifier: ``sciera train verifier``'s data options), fits its Platt calibrator on
the sentences of the dev claims' candidate abstracts (as ``sciera train verifier`` does),
and writes ``benchmarks/results/verify_scifact/<out>_rows.jsonl.gz`` (``--system``'s
predictions quoted again, the other systems as they were) and ``<out>.json`` (the citer's
training log and calibrator). Pair with ``verify_compare.py --system combined``.

``min_quoted`` is fixed (default 0.1, what ``sciera train verifier`` chose on the dev
claims of both the shipped split and fold 4), not chosen on the claims scored.

Another citer recipe (``--hard-negatives``, ``--random-negatives``, ``--seed``: the
:class:`sciera.train.citer_fit.CiterConfig` fields, the rest as shipped) trains in its own
folder of the same work folder. ``--ensemble`` quotes by the two-citer ensemble of
``sciera train verifier --citer-members 2`` (the shipped recipe, reused when trained, and
a second with 4 hard and 2 random negatives per abstract and the next seed): ``logit`` as
the product scores it, their mean logit calibrated as one; ``mean`` by the mean of the two
calibrated P(rationale); ``soup`` by one citer whose weights are the mean of the two (both
are the same cross-encoder with adapters, so the mean is one adapter file of twice the
rank: one pass over the sentences, as a single citer)::

    python benchmarks/verify_requote.py --rows verifier-cv4ng_test_llm --fold 4 \\
        --ensemble logit --out verifier-cv4ngq42l_test_llm
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from sciera.embed.adapters import load_adapters, save_adapters
from sciera.settings import load_settings
from sciera.train.citer_fit import CiterConfig, FittedCiter, evidence_ranking, fit_citer
from sciera.train.prepare import model_dir_for
from sciera.train.verifier_data import VerifierData, VerifierDataSpec, prepare_verifier
from sciera.train.verifier_run import dev_sentences, fit_citer_calibrator
from sciera.types import NOT_ENOUGH_INFO
from sciera.verify.citer import Citer
from sciera.verify.verifier import VerifyPolicy, quoted
from verify_common import DATA, ROOT, log, write_rows

OUT = ROOT / "benchmarks" / "results" / "verify_scifact"
SETTINGS = ("oracle", "open@3", "open@5", "open@10")


def fold_spec(fold: int | None) -> VerifierDataSpec:
    """The data options every verifier of the results was trained with (their cards'
    ``command``), on ``fold``'s split (None: the shipped split)."""
    ssli = ROOT / "benchmarks" / "results"
    return VerifierDataSpec(
        claims=DATA / "scifact" / "claims_train.jsonl",
        sentences=DATA / "scifact" / "corpus_sentences.jsonl",
        corpus=ROOT / "corpora" / "scifact",
        cv_fold=fold,
        pubmedqa=DATA / "pubmedqa" / "pqal_dev.json",
        exclude_ssli=(ssli / "ssli_scifact_100" / "build" / "instances.packed.jsonl.gz",),
        ssli_negatives=(
            ssli / "ssli_scifact_negatives" / "train_set" / "instances.packed.jsonl.gz",
        ),
    )


def calibrated(citers: list[Citer], data: VerifierData, open_k: int) -> list[tuple[Citer, dict]]:
    """Each citer with its Platt calibrator, fitted on every sentence of the dev claims'
    candidate abstracts (as ``sciera train verifier`` fits it; their labels read once), and
    its stats."""
    dev = dev_sentences(None, data, {cid: data.candidates(cid, open_k) for cid in data.dev_ids})
    out = []
    for citer in citers:
        citer.calibrator, stats = fit_citer_calibrator(citer, dev)
        out.append((citer, stats))
    return out


def soup(fitted: list[FittedCiter], folder: Path) -> Citer:
    """One citer whose weights are the mean of ``fitted``'s (each the same base with
    adapters of one rank): the adapters side by side, each B scaled by 1/n, at n times the
    rank and alpha (so the scale alpha/rank is each one's), the head's own weights averaged."""
    states = [load_adapters(f.adapters) for f in fitted]
    ranks = {(r, a) for _, r, a in states}
    if len(ranks) != 1:
        raise SystemExit(f"the citers differ in rank or alpha: {sorted(ranks)}")
    (rank, alpha), n = ranks.pop(), len(states)
    merged: dict = {}
    for name in states[0][0]:
        parts = [s[name].float() for s, _, _ in states]
        if name.endswith(".A"):
            merged[name] = torch.cat(parts, dim=0)
        elif name.endswith(".B"):
            merged[name] = torch.cat(parts, dim=1) / n
        else:
            merged[name] = torch.stack(parts).mean(dim=0)
    path = folder / "citer-soup.safetensors"
    save_adapters(merged, path, rank * n, alpha * n)
    return Citer.load(folder, {**fitted[0].section(path.name), "rank": rank * n})


def mean_scores(citers: list, claim: str, abstracts: list) -> list[list[float]]:
    """Each abstract's P(rationale) per sentence, averaged over the citers."""
    if not abstracts:
        return []
    each = [c.score_many(claim, abstracts) for c, _ in citers]
    return [np.mean(np.array(per, dtype=float), axis=0).tolist() for per in zip(*each, strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", required=True, help="the verify_scifact.py run (result name)")
    ap.add_argument("--fold", type=int, help="its CV fold (omit for the shipped split)")
    ap.add_argument("--out", required=True, help="the result name to write")
    ap.add_argument("--system", default="combined")
    ap.add_argument("--min-quoted", type=float, default=0.1)
    ap.add_argument("--max-rationales", type=int, default=3)
    ap.add_argument("--open-k", type=int, default=5, help="dev candidates for the calibrator")
    shipped = CiterConfig()
    ap.add_argument("--hard-negatives", type=int, default=shipped.hard_negatives)
    ap.add_argument("--random-negatives", type=int, default=shipped.random_negatives)
    ap.add_argument("--seed", type=int, default=shipped.seed)
    ap.add_argument(
        "--ensemble",
        choices=("mean", "logit", "soup"),
        help="the two-citer ensemble (--citer-members 2) by its mean logit, the mean of "
        "their P(rationale), or the mean of their weights",
    )
    ap.add_argument(
        "--work",
        help="the work folder's model name (default citer-fold<K> or citer-split; the "
        "verifier's own, e.g. scifact-verifier, reuses the citer --add-citer trained)",
    )
    args = ap.parse_args()
    recipe = (args.hard_negatives, args.random_negatives, args.seed)
    second = replace(shipped, members=2).member(1)
    if args.ensemble and recipe not in {
        (c.hard_negatives, c.random_negatives, c.seed) for c in (shipped, second)
    }:
        raise SystemExit(
            "--ensemble pairs the shipped recipe with --citer-members 2's second citer "
            f"({second.hard_negatives} hard and {second.random_negatives} random negatives, "
            f"seed {second.seed}); give no other recipe options"
        )
    src = OUT / f"{args.rows}_rows.jsonl.gz"
    if not src.is_file():
        raise SystemExit(f"{src}: no such rows file (run verify_scifact.py first)")
    settings = load_settings()
    name = args.work or ("citer-split" if args.fold is None else f"citer-fold{args.fold}")
    work = model_dir_for(name, settings).with_name(name + ".work")
    work.mkdir(parents=True, exist_ok=True)

    def progress(what: str, n: int, total: int) -> None:
        if n == total or n % max(1, total // 10) == 0:
            log(f"{what}: {n}/{total}")

    data = prepare_verifier(fold_spec(args.fold), settings, work, progress)
    if args.ensemble:
        pair = fit_citer(replace(shipped, members=2), data, work, progress)
        fitted = [replace(pair, members=()), *pair.members]
        if args.ensemble == "logit":  # as a model folder's citer ensemble loads
            loaded = [pair.load()]
        elif args.ensemble == "soup":
            loaded = [soup(fitted, pair.members[0].adapters.parent)]
        else:
            loaded = [f.load() for f in fitted]
    else:
        cfg = replace(
            shipped,
            hard_negatives=args.hard_negatives,
            random_negatives=args.random_negatives,
            seed=args.seed,
        )
        fitted = [fit_citer(cfg, data, work, progress)]
        loaded = [fitted[0].load()]
    citers = calibrated(loaded, data, args.open_k)
    policy = VerifyPolicy(max_rationales=args.max_rationales, min_quoted=args.min_quoted)

    with gzip.open(src, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    changed = decided = 0
    for row in rows:
        text = data.claims[row["id"]].claim
        for setting in SETTINGS:
            preds = row.get(setting, {}).get(args.system)
            if not preds:
                continue
            docs = [d for d, p in preds.items() if p["label"] != NOT_ENOUGH_INFO]
            abstracts = [data.abstracts[d] for d in docs]
            scores = mean_scores(citers, text, abstracts)
            for d, s in zip(docs, scores, strict=True):
                new = quoted(s, policy)
                decided += 1
                changed += int(sorted(preds[d]["sentences"]) != new)
                preds[d]["sentences"] = new
    write_rows(OUT / f"{args.out}_rows.jsonl.gz", rows)
    summary = {
        "command": "python benchmarks/verify_requote.py " + shlex.join(sys.argv[1:]),
        "rows": args.rows,
        "fold": args.fold,
        "system": args.system,
        "policy": {"min_quoted": args.min_quoted, "max_rationales": args.max_rationales},
        "claims": len(rows),
        "decided_abstracts": decided,
        "quoted_otherwise": changed,
        "citers": [f.report() for f in fitted],
        "ensemble": args.ensemble if len(fitted) > 1 else None,
        "calibrators": [stats for _, stats in citers],
        # the fold's held-out claims' evidence abstracts (none for the shipped split)
        "held_out_ranking": [evidence_ranking(c, data, list(data.test_ids)) for c, _ in citers],
    }
    path = OUT / f"{args.out}.json"
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    log(f"{changed} of {decided} decided abstracts quoted otherwise; wrote {path}")


if __name__ == "__main__":
    main()
