"""The claim combiner out of fold: does the verdict decide better when its combiner is fitted
on rows whose trained head never saw the claim, and with the LLM asked the negated claim too?

Run from the repository root with the venv active (no network needed)::

    python benchmarks/verify_claim_combiner_oof.py --folds verifier-cv2 verifier-cv3 verifier-cv4

Each cross-validation model (``sciera train verifier --cv-fold K``) never trained on its
held-out claims (its card's ``test_ids``). For each of them the rows ``sciera train verifier
--combine-llm`` fits the claim combiner on are read as that command reads them (each evidence
abstract with its label, each cited abstract of a claim without evidence as NOT ENOUGH INFO;
the model's selector picks the sentences under its card's policy), so the trained head's
probabilities are out of fold. Per row:

- ``trained``: the fold model's verdict head;
- ``llm``: the 1.5B's support / contradict / neither probabilities on the claim;
- ``neg``: the same on the claim negated (``sciera.verify.llm_verdict.NegatedLLMVerdict``:
  its support and contradict swapped; uniform when no rule negates the claim).

Systems, each scoring fold K's rows:

- ``shipped_recipe``: fold K's own combiner (``sciera-combiner-claim.json``, fitted on its
  training claims, where its head is in-sample): what the default does today;
- ``oof``: a combiner of ``trained`` + ``llm`` fitted on the other folds' rows (nested: no
  label of fold K's claims is seen);
- ``oof_neg``: the same with ``neg`` as a third input;
- ``llm_neg``: ``llm`` + ``neg`` without the head (fitted out of fold the same way).

Accuracy and macro-F1 over the pooled rows, accuracy on the evidence rows alone (SUPPORT vs
CONTRADICT is where the verdict loses its precision), each against ``shipped_recipe``, and
each combiner with the negated claim against the same without it, by the exact McNemar test
on per-row correctness. Row features are kept in
``benchmarks/results/verify_scifact/claim_combiner_oof_rows.jsonl`` (a stopped run resumes;
the LLM layer also caches every call). Writes ``claim_combiner_oof.json`` beside it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from sciera.eval.significance import mcnemar_exact
from sciera.verify.llm_verdict import UNIFORM
from verify_common import DATA, ROOT, log

OUT = ROOT / "benchmarks" / "results" / "verify_scifact"
PAIRS = [
    *(("shipped_recipe", k) for k in ("trained", "llm", "oof", "oof_neg", "llm_neg", "llm_oof")),
    ("oof", "oof_neg"),
    ("llm_oof", "llm_neg"),
]


def fold_rows(model: str, done: dict[str, dict[str, Any]], sink: Any) -> list[dict[str, Any]]:
    """Every row of ``model``'s held-out claims, read (or taken from ``done``)."""
    from dataclasses import replace

    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings
    from sciera.train.verifier_data import load_abstracts
    from sciera.types import VERDICT_LABELS
    from sciera.verify.base import VerdictInput
    from sciera.verify.llm_verdict import LLMVerdict, NegatedLLMVerdict
    from sciera.verify.network import read_card, resolve_model
    from sciera.verify.trained import TrainedSelector, TrainedVerdict
    from sciera.verify.verifier import VerifyPolicy, pick_rationales

    settings = load_settings()
    path = resolve_model(model, settings.home)
    card = read_card(path)
    held = set(card["data"].get("test_ids") or [])
    if not held:
        sys.exit(f"{path}: its card has no held-out claims (train it with --cv-fold K)")
    policy = replace(VerifyPolicy.from_card(card), min_cited=None)
    abstracts = load_abstracts(DATA / "scifact" / "corpus_sentences.jsonl")
    selector, verdict = TrainedSelector(model=str(path)), TrainedVerdict(model=str(path))
    llm: LLMVerdict | None = None
    out = []
    claims = [json.loads(line) for line in (DATA / "scifact" / "claims_train.jsonl").open()]
    claims = [c for c in claims if str(c["id"]) in held]
    for n, c in enumerate(claims, 1):
        cid, text = str(c["id"]), c["claim"]
        docs = [(str(d), VERDICT_LABELS.index(e[0]["label"])) for d, e in c["evidence"].items()]
        if not c["evidence"]:
            docs = [(str(d), 2) for d in c["cited_doc_ids"]]
        for doc, label in docs:
            key = f"{model}/{cid}/{doc}"
            if key in done:
                out.append(done[key])
                continue
            if doc not in abstracts:
                continue
            a = abstracts[doc]
            idx, _ = pick_rationales(selector.score_many(text, [a])[0], policy)
            item = VerdictInput(tuple(a.sentences[i] for i in idx), a.title)
            if llm is None:
                llm = LLMVerdict(make_llm(settings))
            neg = NegatedLLMVerdict(llm).predict_many(text, [item])[0]
            row = {
                "key": key,
                "fold": model,
                "claim": cid,
                "label": label,
                "trained": verdict.predict_many(text, [item])[0],
                "llm": llm.predict_many(text, [item])[0],
                "neg": neg,
                "negated": neg != UNIFORM,
            }
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            out.append(row)
        if n % 20 == 0 or n == len(claims):
            log(f"{model}: {n}/{len(claims)} claims, {len(out)} rows")
    return out


def scores(p: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    from sklearn.metrics import f1_score

    pred = p.argmax(1)
    ev = y < 2
    return {
        "rows": len(y),
        "accuracy": round(float((pred == y).mean()), 4),
        "macro_f1": round(float(f1_score(y, pred, labels=[0, 1, 2], average="macro")), 4),
        "evidence_rows": int(ev.sum()),
        "evidence_accuracy": round(float((pred[ev] == y[ev]).mean()), 4),
        "contradict_recall": round(float((pred[y == 1] == 1).mean()), 4),
        "predicted": [int((pred == k).sum()) for k in range(3)],
    }


INPUTS = {
    "oof": ("trained", "llm"),
    "oof_neg": ("trained", "llm", "neg"),
    "llm_neg": ("llm", "neg"),
    "llm_oof": ("llm",),
}


def _arr(rows: list[dict[str, Any]], name: str) -> np.ndarray:
    return np.array([r[name] for r in rows], dtype=float)


def evaluate(rows: dict[str, list[dict[str, Any]]], own: dict[str, Any]) -> dict[str, Any]:
    """Every system on every fold's rows (``own``: each fold's shipped-recipe combiner),
    pooled over the folds, scored and paired."""
    from sciera.verify.calibration import LogisticCombiner

    preds: dict[str, list[np.ndarray]] = {}
    ys = []
    for model, mine in rows.items():
        others = [r for m in rows if m != model for r in rows[m]]
        y_tr = np.array([r["label"] for r in others])
        ys.append(np.array([r["label"] for r in mine]))
        preds.setdefault("shipped_recipe", []).append(
            own[model](_arr(mine, "trained"), _arr(mine, "llm"))
        )
        preds.setdefault("trained", []).append(_arr(mine, "trained"))
        preds.setdefault("llm", []).append(_arr(mine, "llm"))
        for name, feats in INPUTS.items():
            comb = LogisticCombiner.fit([_arr(others, f) for f in feats], y_tr, feats)
            preds.setdefault(name, []).append(comb(*[_arr(mine, f) for f in feats]))
    y = np.concatenate(ys)
    pooled = {k: np.vstack(v) for k, v in preds.items()}
    right = {k: p.argmax(1) == y for k, p in pooled.items()}
    ev = y < 2
    return {
        "folds": list(rows),
        "rows_per_fold": {m: len(r) for m, r in rows.items()},
        "negated_rows": int(sum(r["negated"] for rs in rows.values() for r in rs)),
        "systems": {k: scores(p, y) for k, p in pooled.items()},
        "paired": {
            f"{b}_vs_{a}": {
                "all_rows": mcnemar_exact(right[a], right[b]).as_dict(),
                "evidence_rows": mcnemar_exact(right[a][ev], right[b][ev]).as_dict(),
            }
            for a, b in PAIRS
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--folds", nargs="+", required=True, help="cross-validation model names")
    args = ap.parse_args()
    if len(set(args.folds)) < 2:
        sys.exit("--folds: name at least two cross-validation models")

    from sciera.settings import load_settings
    from sciera.verify.calibration import load as load_combiner
    from sciera.verify.llm_verdict import COMBINER_FILES
    from sciera.verify.network import resolve_model

    OUT.mkdir(parents=True, exist_ok=True)
    rows_file = OUT / "claim_combiner_oof_rows.jsonl"
    done = {}
    if rows_file.is_file():
        for line in rows_file.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["key"]] = r
    rows: dict[str, list[dict[str, Any]]] = {}
    with rows_file.open("a") as sink:
        for model in args.folds:
            rows[model] = fold_rows(model, done, sink)

    home = load_settings().home
    own = {
        m: load_combiner(Path(resolve_model(m, home)) / COMBINER_FILES["claim"]) for m in args.folds
    }
    out = {"command": shlex.join(["python", *sys.argv]), **evaluate(rows, own)}
    dest = OUT / "claim_combiner_oof.json"
    dest.write_text(json.dumps(out, indent=2) + "\n")
    log(f"wrote {dest.relative_to(ROOT)}")
    for k, s in out["systems"].items():
        log(f"{k:15s} {s}")


if __name__ == "__main__":
    main()
