"""Two probes for the verdict's labels, where SciFact's held-out claims lose precision (a
contradicted claim called supported): can anything cheap separate SUPPORT from CONTRADICT
better than what the claim combiner already reads? Probes, not benchmarks: training claims
only (never the verifier's dev claims, never BEIR test claims), nothing chosen here ships.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/verify_label_probes.py --probe polarity
    python benchmarks/verify_label_probes.py --probe question --per-label 60
    python benchmarks/verify_label_probes.py --probe trained --per-label 60

- ``polarity``: lexical polarity features of (claim, abstract) beside the combiner's inputs
  on folds 2 to 4's held-out rows (``claim_combiner_oof_rows.jsonl`` of
  ``verify_claim_combiner_oof.py``: each row's verdict head, 1.5B and negated-claim
  probabilities): the claim's direction (the negation rules' word pairs) times the
  abstract's, a negation in the claim, null-result phrases ("no significant", "did not") in
  the abstract and in its last two sentences, and their products. A logistic regression on
  the log probabilities with and without them, fitted on two folds' rows and scored on the
  third's (out of fold); exact McNemar on per-row correctness, all rows and evidence rows.
- ``question``: the 1.5B asked the claim as a yes/no question ("Is it true that ...?",
  the question prompt) beside the claim prompt and the negated claim, on training claims'
  gold rationale sentences (up to 3), ``--per-label`` SUPPORT and as many CONTRADICT rows
  (seeded draw; claims no rule negates left out): each view's SUPPORT-vs-CONTRADICT AUC
  (log P(support) - log P(contradict)) and 5-fold cross-validated logistic regressions over
  views. The LLM layer caches every call (a stopped run resumes).
- ``trained``: a SUPPORT-vs-CONTRADICT model trained apart from the verifier, the citer's
  recipe (the shipped relevance cross-encoder with rank-16 adapters, binary cross-entropy,
  3 epochs, lr 3e-4) on (claim, gold rationale sentences) of the training claims outside the
  verifier's dev split, each claim the negation rules negate added again negated with its
  label swapped; cross-fitted over the question probe's rows (5 folds by claim: each fold's
  model never saw its rows' claims, negated or not), then its logit beside the 1.5B's views
  on those rows (the same AUCs and cross-validated regressions).

Writes ``benchmarks/results/verify_scifact/label_probe_<probe>.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shlex
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from sciera.datasets.claims import GoldClaim, read_gold
from sciera.train.verifier_data import load_abstracts
from sciera.verify.base import AbstractText
from verify_common import DATA, ROOT, log

OUT = ROOT / "benchmarks" / "results" / "verify_scifact"
SCIFACT = DATA / "scifact"
_NEGATION = re.compile(
    r"\b(not|no|never|cannot|fails?|failed|without|unrelated|lacks?|absence)\b|n't\b", re.I
)
_NULL = re.compile(
    r"no significant|not significant|did not|was not associated|were not associated|"
    r"no association|no effect|no difference|not associated|no evidence|failed to|"
    r"no change|did not differ|unchanged|no relationship|not affect",
    re.I,
)


def _abstracts() -> dict[str, AbstractText]:
    return load_abstracts(SCIFACT / "corpus_sentences.jsonl")


def _claims() -> list[GoldClaim]:
    return read_gold(SCIFACT / "claims_train.jsonl")


def polarity_features(claim: str, sentences: Sequence[str]) -> list[float]:
    """Direction agreement, claim negation and null-result cues of (claim, abstract)."""
    from sciera.verify.negation import DIRECTION_PAIRS

    up, down = {a for a, _ in DIRECTION_PAIRS}, {b for _, b in DIRECTION_PAIRS}
    text = " ".join(sentences)
    words_c, words_a = re.findall(r"[a-z\-]+", claim.lower()), re.findall(r"[a-z\-]+", text.lower())
    c_dir = float(np.sign(sum(w in up for w in words_c) - sum(w in down for w in words_c)))
    a_up, a_down = sum(w in up for w in words_a), sum(w in down for w in words_a)
    a_dir = (a_up - a_down) / (a_up + a_down + 1)
    c_neg = 1.0 if _NEGATION.search(claim) else 0.0
    a_null = min(len(_NULL.findall(text)), 3) / 3
    last_null = 1.0 if _NULL.search(" ".join(sentences[-2:])) else 0.0
    return [
        c_dir * a_dir,
        c_neg,
        a_null,
        last_null,
        c_neg * a_null,
        c_neg * last_null,
        c_dir,
        a_dir,
    ]


def _logp(p: list[float]) -> np.ndarray:
    return np.log(np.clip(np.asarray(p, dtype=float), 1e-6, 1.0))


def probe_polarity() -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    from sciera.eval.significance import mcnemar_exact

    text = {c.id: c.claim for c in _claims()}
    abstracts = _abstracts()
    rows_file = OUT / "claim_combiner_oof_rows.jsonl"
    if not rows_file.is_file():
        sys.exit(f"{rows_file}: missing; run verify_claim_combiner_oof.py first")
    rows = [json.loads(x) for x in rows_file.read_text().splitlines() if x.strip()]
    base = np.array(
        [np.concatenate([_logp(r[k]) for k in ("trained", "llm", "neg")]) for r in rows]
    )
    extra = np.array(
        [
            polarity_features(text[r["claim"]], abstracts[r["key"].split("/")[-1]].sentences)
            for r in rows
        ]
    )
    y = np.array([r["label"] for r in rows])
    fold = np.array([r["fold"] for r in rows])
    systems: dict[str, np.ndarray] = {}
    for name, x in (("combiner_inputs", base), ("with_polarity", np.hstack([base, extra]))):
        p = np.zeros((len(y), 3))
        for f in sorted(set(fold)):
            model = LogisticRegression(max_iter=2000).fit(x[fold != f], y[fold != f])
            p[fold == f] = model.predict_proba(x[fold == f])
        systems[name] = p.argmax(1)
    ev = y < 2
    right = {k: v == y for k, v in systems.items()}
    return {
        "rows": len(y),
        "systems": {
            k: {
                "accuracy": round(float(right[k].mean()), 4),
                "macro_f1": round(float(f1_score(y, v, average="macro")), 4),
                "evidence_accuracy": round(float(right[k][ev].mean()), 4),
                "contradict_recall": round(float((v[y == 1] == 1).mean()), 4),
            }
            for k, v in systems.items()
        },
        "paired": {
            "all_rows": mcnemar_exact(right["combiner_inputs"], right["with_polarity"]).as_dict(),
            "evidence_rows": mcnemar_exact(
                right["combiner_inputs"][ev], right["with_polarity"][ev]
            ).as_dict(),
        },
    }


def as_question(claim: str) -> str:
    """``claim`` as a yes/no question (its first letter lowercased unless an acronym)."""
    c = claim.strip().rstrip(".")
    if len(c) > 1 and c[1].islower():
        c = c[0].lower() + c[1:]
    return f"Is it true that {c}?"


Row = tuple[str, str, str, list[int]]  # label, claim, doc, gold rationale indices (<= 3)


def _evidence_rows(dev: set[str], abstracts: dict[str, AbstractText]) -> list[Row]:
    """Every (label, claim, doc, rationale) of the training claims outside ``dev``."""
    rows = []
    for c in _claims():
        if c.id in dev:
            continue
        for doc, gold in c.evidence.items():
            if doc in abstracts:
                idx = sorted(set().union(*gold.rationales))[:3]
                rows.append((gold.label, c.claim, doc, idx))
    return rows


def _probe_rows(evidence: list[Row], per_label: int) -> list[Row]:
    """``per_label`` rows of each label among claims the rules negate (seeded draw)."""
    from sciera.verify.negation import negate_claim

    rng = random.Random(0)
    rows = []
    for label in ("SUPPORT", "CONTRADICT"):
        items = [r for r in evidence if r[0] == label and negate_claim(r[1])]
        rng.shuffle(items)
        rows += items[:per_label]
    return rows


def _dev_ids(settings: Any) -> set[str]:
    from sciera.verify.network import read_card, resolve_model

    return set(read_card(resolve_model("scifact-verifier", settings.home))["data"]["dev_ids"])


def _llm_views(
    rows: list[Row], abstracts: dict[str, AbstractText], settings: Any
) -> dict[str, list[float]]:
    """log P(support) - log P(contradict) of the 1.5B per view and row."""
    from sciera.llm.registry import make_llm
    from sciera.verify.base import VerdictInput
    from sciera.verify.llm_verdict import LLMVerdict, NegatedLLMVerdict

    verdict = LLMVerdict(make_llm(settings))
    negated = NegatedLLMVerdict(verdict)
    views: dict[str, list[float]] = {"claim": [], "negated": [], "question": []}
    for k, (_, claim, doc, idx) in enumerate(rows, 1):
        a = abstracts[doc]
        item = [VerdictInput(tuple(a.sentences[i] for i in idx), a.title)]
        for name, model, text in (
            ("claim", verdict, claim),
            ("negated", negated, claim),
            ("question", verdict, as_question(claim)),
        ):
            p = _logp(list(model.predict_many(text, item)[0]))
            views[name].append(float(p[0] - p[1]))
        if k % 10 == 0 or k == len(rows):
            log(f"the 1.5B's views: {k}/{len(rows)} rows")
    return views


def _compare(
    rows: list[Row], views: dict[str, list[float]], combos: list[tuple[str, ...]]
) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    y = np.array([label == "SUPPORT" for label, *_ in rows], dtype=int)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    combined = {}
    for combo in combos:
        x = np.column_stack([views[v] for v in combo])
        p = cross_val_predict(LogisticRegression(), x, y, cv=cv, method="predict_proba")[:, 1]
        combined["+".join(combo)] = {
            "auc": round(float(roc_auc_score(y, p)), 4),
            "accuracy": round(float(((p > 0.5) == y).mean()), 4),
        }
    return {
        "rows": {"SUPPORT": int(y.sum()), "CONTRADICT": int(len(y) - y.sum())},
        "auc": {k: round(float(roc_auc_score(y, v)), 4) for k, v in views.items()},
        "cross_validated": combined,
    }


def probe_question(per_label: int) -> dict[str, Any]:
    from sciera.settings import load_settings

    settings = load_settings()
    abstracts = _abstracts()
    rows = _probe_rows(_evidence_rows(_dev_ids(settings), abstracts), per_label)
    combos = [("claim",), ("claim", "negated"), ("question",), ("claim", "negated", "question")]
    return _compare(rows, _llm_views(rows, abstracts, settings), combos)


def _sc_pairs(rows: list[Row], abstracts: dict[str, AbstractText]) -> list[tuple[str, str]]:
    return [(claim, " ".join(abstracts[d].sentences[i] for i in idx)) for _, claim, d, idx in rows]


def _train_sc(rows: list[Row], abstracts: dict[str, AbstractText], seed: int) -> Any:
    """(model, tokenizer): the cross-encoder with adapters trained SUPPORT (1) against
    CONTRADICT (0) on ``rows`` and their negations (labels swapped)."""
    import torch

    from sciera.embed.adapters import add_adapters
    from sciera.embed.plain import encode_pairs
    from sciera.errors import require
    from sciera.train.verifier_fit import resolve_verifier_base
    from sciera.verify.negation import negate_claim

    transformers = require("transformers", "dense")
    base = resolve_verifier_base("scifact-minilm")
    tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(base).float()
    add_adapters(model, 16)
    pairs = _sc_pairs(rows, abstracts)
    labels = [float(r[0] == "SUPPORT") for r in rows]
    for (claim, text), y in zip(list(pairs), list(labels), strict=True):
        negated = negate_claim(claim)
        if negated:
            pairs.append((negated, text))
            labels.append(1.0 - y)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=3e-4, weight_decay=0.01)
    batch, epochs = 16, 3
    total = epochs * ((len(pairs) + batch - 1) // batch)
    warm = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda t: min((t + 1) / warm, max(0.0, (total - t) / (total - warm)))
    )
    model.train()
    for epoch in range(epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        loss_sum = 0.0
        for i in range(0, len(order), batch):
            ids = order[i : i + batch]
            tokens = encode_pairs(tokenizer, [pairs[j] for j in ids], 256)
            logits = model(**tokens).logits[:, 0]
            y = torch.tensor([labels[j] for j in ids])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += float(loss.detach()) * len(ids)
        log(
            f"  epoch {epoch + 1}/{epochs}: {len(pairs)} pairs, "
            f"mean loss {loss_sum / len(pairs):.3f}"
        )
    model.eval()
    return model, tokenizer


def probe_trained(per_label: int, folds: int = 5) -> dict[str, Any]:
    from sciera.embed.plain import pair_logits
    from sciera.settings import load_settings

    settings = load_settings()
    abstracts = _abstracts()
    evidence = _evidence_rows(_dev_ids(settings), abstracts)
    rows = _probe_rows(evidence, per_label)
    claims = sorted({claim for _, claim, _, _ in rows})
    random.Random(0).shuffle(claims)
    fold_of = {c: k % folds for k, c in enumerate(claims)}
    trained = np.zeros(len(rows))
    for f in range(folds):
        held = {c for c, k in fold_of.items() if k == f}
        log(f"fold {f + 1}/{folds}: {len(held)} held-out claims")
        model, tokenizer = _train_sc([r for r in evidence if r[1] not in held], abstracts, seed=f)
        mine = [i for i, r in enumerate(rows) if r[1] in held]
        logits = pair_logits(model, tokenizer, _sc_pairs([rows[i] for i in mine], abstracts), 256)
        trained[mine] = np.asarray(logits, dtype=float).reshape(len(mine), -1)[:, 0]
    views = {**_llm_views(rows, abstracts, settings), "trained": trained.tolist()}
    combos = [("trained",), ("claim", "negated"), ("claim", "negated", "trained")]
    return {"folds": folds, **_compare(rows, views, combos)}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--probe", choices=("polarity", "question", "trained"), required=True)
    ap.add_argument("--per-label", type=int, default=60, help="rows per label (not polarity)")
    args = ap.parse_args()
    if args.probe == "polarity":
        result = probe_polarity()
    elif args.probe == "question":
        result = probe_question(args.per_label)
    else:
        result = probe_trained(args.per_label)
    out = {"command": shlex.join(["python", *sys.argv]), **result}
    dest = OUT / f"label_probe_{args.probe}.json"
    dest.write_text(json.dumps(out, indent=2) + "\n")
    log(f"wrote {dest.relative_to(ROOT)}: {json.dumps(result)}")


if __name__ == "__main__":
    main()
