"""Yes/no/maybe questions with the verifier: PubMedQA's reasoning setting and a BioASQ-format
proxy, on the PubMedQA questions a verifier never trained on.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/verify_pubmedqa.py --model verifier-dev          # its held-out fold
    python benchmarks/verify_pubmedqa.py --model verifier-dev --llm    # + the 1.5B rows

Questions: the model card's held-out PubMedQA fold (``pubmedqa_held_ids``: whole questions
of ``pqal_dev.json``, split into 5 folds by question; the model trained on the others).

- Reasoning setting (PubMedQA's): the question's own contexts (the abstract without its
  conclusion) split into sentences; the trained selector's best 3 sentences, then the verdict
  (SUPPORT = yes, CONTRADICT = no, NOT ENOUGH INFO = maybe). Against always the majority
  label of the training questions, and against today's ``ask`` (``pubmedqa_answer.jsonl``,
  reasoning setting, extractor ``full``) on the questions both answered.
- BioASQ-format proxy: the yes/no questions, their LONG_ANSWER (the abstract's conclusion)
  as the gold snippet, yes vs no (P(SUPPORT) against P(CONTRADICT)). Against always "yes".
- With ``--llm``: the 1.5B's zero-shot probabilities on the same inputs (argmax), and the
  trained and 1.5B probabilities through a logistic combiner cross-fitted over the questions
  (5 folds: each question answered by a combiner fitted on the other folds), and
  ``combined_shipped``: the model folder's question combiner (fitted on the verifier's
  training questions by ``sciera train verifier --combine-llm``; these questions never).

Accuracy and macro-F1; every system paired with the baseline and the trained verdict by the
exact McNemar test on per-question correctness. Writes
``benchmarks/results/verify_pubmedqa/<name>.json`` and per-question rows gzipped (with each
model's label probabilities: ``p_*`` on the reasoning inputs, ``b_*`` on the snippets; a
fold model's are out of fold, what ``verify_pubmedqa_oof.py`` pools).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from sciera.eval.significance import mcnemar_exact
from verify_common import DATA, ROOT, log, pubmedqa_held_ids, write_rows

NAMES = ("yes", "no", "maybe")


def scores(pred: np.ndarray, y: np.ndarray, labels: list[int]) -> dict[str, float]:
    from sklearn.metrics import f1_score

    return {
        "n": len(y),
        "accuracy": round(float((pred == y).mean()), 4),
        "macro_f1": round(
            float(f1_score(y, pred, labels=labels, average="macro", zero_division=0)), 4
        ),
        "predicted": {NAMES[k]: int((pred == k).sum()) for k in labels},
    }


def each(model: Any, questions: list[str], inputs: list[Any]) -> np.ndarray:
    """One verdict per (question, input)."""
    pairs = zip(questions, inputs, strict=True)
    return np.array([model.predict_many(q, [v])[0] for q, v in pairs]).reshape(-1, 3)


def cross_fit(a: np.ndarray, b: np.ndarray, y: np.ndarray, ids: list[str], k: int) -> np.ndarray:
    """Combined probabilities, each question's from a combiner fitted on the other folds."""
    from sciera.train.verifier_data import folds
    from sciera.verify.calibration import LogisticCombiner

    out = np.zeros_like(a)
    where = {q: i for i, q in enumerate(ids)}
    for fold in folds(ids, k, 7):
        test = [where[q] for q in fold]
        train = [i for i in range(len(ids)) if i not in set(test)]
        comb = LogisticCombiner.fit([a[train], b[train]], y[train], ("trained", "llm"))
        out[test] = comb(a[test], b[test])
    return out


def paired(outcomes: dict[str, np.ndarray], refs: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for ref in refs:
        for name, right in outcomes.items():
            if name != ref:
                out[f"{name}_vs_{ref}"] = mcnemar_exact(outcomes[ref], right).as_dict()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", default="scifact-verifier")
    ap.add_argument("--llm", action="store_true")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--name")
    args = ap.parse_args()

    from sciera.settings import load_settings
    from sciera.train.verifier_data import load_pubmedqa_items
    from sciera.train.verifier_eval import QUESTION_POLICY
    from sciera.verify.base import AbstractText, VerdictInput
    from sciera.verify.network import read_card, resolve_model
    from sciera.verify.trained import TrainedSelector, TrainedVerdict
    from sciera.verify.verifier import pick_rationales

    settings = load_settings()
    path = resolve_model(args.model, settings.home)
    card = read_card(path)
    held = pubmedqa_held_ids(card, args.model)
    items = load_pubmedqa_items(DATA / "pubmedqa" / "pqal_dev.json")
    train_labels = Counter(q.label for q in items if q.id not in held)
    majority = train_labels.most_common(1)[0][0]
    items = [q for q in items if q.id in held]
    ids = [q.id for q in items]
    y = np.array([q.label for q in items])
    selector, verdict = TrainedSelector(model=str(path)), TrainedVerdict(model=str(path))
    log(f"{len(items)} held-out questions; majority of the training questions: {NAMES[majority]}")

    # reasoning setting: the selector's best sentences of the question's own contexts
    inputs = []
    for q in items:
        s = selector.score_many(q.question, [AbstractText(q.id, "", q.sentences)])[0]
        idx, _ = pick_rationales(s, QUESTION_POLICY)
        inputs.append(VerdictInput(tuple(q.sentences[i] for i in idx), ""))
    p_trained = each(verdict, [q.question for q in items], inputs)
    yn = [i for i, q in enumerate(items) if q.label != 2 and q.long_answer]
    snippets = [VerdictInput((items[i].long_answer,), "") for i in yn]
    yb = y[yn]
    b_trained = each(verdict, [items[i].question for i in yn], snippets)

    reasoning = {"always_majority": np.full(len(y), majority), "trained": p_trained.argmax(1)}
    bioasq = {"always_yes": np.zeros(len(yb), dtype=int), "trained": b_trained[:, :2].argmax(1)}
    llm_info: dict[str, Any] = {}
    if args.llm:
        from sciera.llm.registry import make_llm
        from sciera.verify.llm_verdict import LLMVerdict

        llm = LLMVerdict(make_llm(settings))
        log("1.5B on the reasoning inputs")
        p_llm = each(llm, [q.question for q in items], inputs)
        log("1.5B on the snippets")
        b_llm = each(llm, [items[i].question for i in yn], snippets)
        reasoning["llm"] = p_llm.argmax(1)
        reasoning["combined"] = cross_fit(p_trained, p_llm, y, ids, args.folds).argmax(1)
        bioasq["llm"] = b_llm[:, :2].argmax(1)
        yn_ids = [ids[i] for i in yn]
        comb = cross_fit(b_trained, b_llm, yb, yn_ids, args.folds)
        bioasq["combined"] = comb[:, :2].argmax(1)
        llm_info = {"model": settings.llm.model, "combiner_folds": args.folds, "fold_seed": 7}
        from sciera.verify.calibration import load as load_combiner
        from sciera.verify.llm_verdict import COMBINER_FILES

        shipped = Path(path) / COMBINER_FILES["question"]
        if shipped.is_file():  # the model's own, fitted on its training questions
            comb_q = load_combiner(shipped)
            reasoning["combined_shipped"] = comb_q(p_trained, p_llm).argmax(1)
            bioasq["combined_shipped"] = comb_q(b_trained, b_llm)[:, :2].argmax(1)
            llm_info["combined_shipped"] = str(shipped.name)

    out: dict[str, Any] = {
        "command": shlex.join(["python", *sys.argv]),
        "model": args.model,
        "questions": len(items),
        "majority_label": NAMES[majority],
        "reasoning": {k: scores(v, y, [0, 1, 2]) for k, v in reasoning.items()},
        "bioasq_proxy": {k: scores(v, yb, [0, 1]) for k, v in bioasq.items()},
        "llm": llm_info,
    }
    r_right = {k: v == y for k, v in reasoning.items()}
    b_right = {k: v == yb for k, v in bioasq.items()}
    out["paired"] = {
        "reasoning": paired(r_right, ("always_majority", "trained")),
        "bioasq_proxy": paired(b_right, ("always_yes", "trained")),
    }
    # today's ask on the same questions (reasoning setting, full contexts), where it answered
    ask_file = ROOT / "benchmarks" / "results" / "pubmedqa_answer.jsonl"
    if ask_file.is_file():
        ask = {}
        for line in ask_file.read_text().splitlines():
            r = json.loads(line)
            if r["setting"] == "reasoning" and r["extractor"] == "full" and r["pmid"] in held:
                ask[r["pmid"]] = r["pred"]
        both = [i for i, q in enumerate(items) if q.id in ask]
        if both:
            ask_right = np.array([ask[ids[i]] == NAMES[y[i]] for i in both])
            out["versus_ask"] = {
                "source": str(ask_file.relative_to(ROOT)),
                "questions": len(both),
                "ask_accuracy": round(float(ask_right.mean()), 4),
                **{
                    f"{k}_vs_ask": {
                        "accuracy": round(float(r_right[k][both].mean()), 4),
                        **mcnemar_exact(ask_right, r_right[k][both]).as_dict(),
                    }
                    for k in reasoning
                },
            }
    rows = []
    for i, q in enumerate(items):
        row = {
            "id": q.id,
            "gold": NAMES[q.label],
            "sentences": list(inputs[i].sentences),
            "reasoning": {k: NAMES[int(v[i])] for k, v in reasoning.items()},
            "p_trained": [round(float(x), 4) for x in p_trained[i]],
            **({"p_llm": [round(float(x), 4) for x in p_llm[i]]} if args.llm else {}),
        }
        if i in yn:
            j = yn.index(i)
            row["bioasq_proxy"] = {k: NAMES[int(v[j])] for k, v in bioasq.items()}
            row["b_trained"] = [round(float(x), 4) for x in b_trained[j]]
            if args.llm:
                row["b_llm"] = [round(float(x), 4) for x in b_llm[j]]
        rows.append(row)
    name = args.name or Path(str(args.model)).name + ("_llm" if args.llm else "")
    dest = ROOT / "benchmarks" / "results" / "verify_pubmedqa"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    write_rows(dest / f"{name}_rows.jsonl.gz", rows)
    log(json.dumps({"reasoning": out["reasoning"], "bioasq_proxy": out["bioasq_proxy"]}))


if __name__ == "__main__":
    main()
