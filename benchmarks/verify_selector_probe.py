"""A dedicated rationale selector against the verifier's rationale head: the shipped relevance
cross-encoder (``scifact-minilm``) fine-tuned on the verifier's rationale labels with the
selector loss alone, fully or through low-rank adapters on its linear layers (LoRA: a few MB
beside the shipped cross-encoder, which the 50 MB model budget can hold; a second full
encoder cannot). The probe that asked whether a selector trained apart from the verdict
cites better sentences; the product path it led to is the verifier's citer
(``sciera train verifier --citer-rank 16``, :mod:`sciera.verify.citer`). Kept to reproduce
the probe's results (it also tries the full fine-tune and other contexts).

``train`` reads the verifier's data as ``sciera train verifier`` does (the same claims, dev
split and sentence examples; ``--cv-fold K`` also holds out fold K of the training claims)
and samples sentences per epoch as the verifier does (every rationale, the two hardest and
one random other sentence per claim and abstract); after each epoch it scores the held-out
claims' evidence abstracts (fold K's with ``--cv-fold``, else the dev claims'): AP over their
sentences and how often the best-scored sentence is a gold rationale. ``score`` re-picks the
cited sentences of a ``verify_scifact.py`` run (labels kept as the run decided them: only
the sentences change) by a selector's logits: the best sentence, and up to two more within
``gap`` of its logit, for the verifier's head and each selector, SciFact's F1s per gap, and
the paired tests of each selector against the head (each at its best gap on these claims).

Run from the repository root with the venv active::

    python benchmarks/verify_selector_probe.py train --out sel-none --context none \
        --work SCIERA_HOME/models/NAME.work   # a `sciera train verifier --out NAME` run's
    python benchmarks/verify_selector_probe.py score --rows scifact-verifier_dev_llm_negated \
        --selector sel-none/epoch3

Writes ``benchmarks/results/verify_selector/<name>.json`` (``train``: its per-epoch
held-out log; each epoch's trainable weights go to ``--out``/epochN, which ``score`` reads).
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sciera.datasets.claims import AbstractPrediction, ClaimPrediction, read_gold
from sciera.embed.adapters import add_adapters
from sciera.eval.metrics.scifact import scifact_counts
from sciera.settings import load_settings
from sciera.train.verifier_data import VerifierDataSpec, load_abstracts, prepare_verifier
from sciera.train.verifier_fit import sample_sentences
from sciera.types import NOT_ENOUGH_INFO
from sciera.verify.base import AbstractText
from sciera.verify.inputs import sentence_pair
from sciera.verify.trained import TrainedSelector
from verify_common import DATA, ROOT, log
from verify_product_path import benchmark_rows, compare

OUT = ROOT / "benchmarks" / "results" / "verify_selector"
BASE = "scifact-minilm"
GAPS = (0.5, 1.0, 2.0, 3.0, 4.0, 100.0)


def add_lora(model: Any, r: int) -> int:
    """Freeze ``model`` and give its encoder's linear layers rank-``r`` adapters (alpha
    2r; :func:`sciera.embed.adapters.add_adapters`, as the citer trains); the classifier
    and pooler stay trainable. Trainable parameters."""
    return add_adapters(model, r, 2.0 * r)


class Scorer:
    """A selector folder's logit for (claim, sentence in its context), batched."""

    def __init__(self, model: Any, tokenizer: Any, context: str, max_length: int = 128) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.context, self.max_length = context, max_length

    @classmethod
    def load(cls, folder: Path) -> Scorer:
        import torch
        import transformers

        meta = json.loads((folder / "probe.json").read_text(encoding="utf-8"))
        from sciera.artifacts.registry import CROSS_ENCODER, resolve

        base = resolve(CROSS_ENCODER, meta["base"])
        tok = transformers.AutoTokenizer.from_pretrained(base)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            base, dtype=torch.float32
        )
        if meta["lora"]:
            add_lora(model, meta["lora"])
        state = torch.load(folder / "weights.pt", weights_only=True)
        missing = set(state) - {n for n, _ in model.named_parameters()}
        if missing:
            raise SystemExit(f"{folder}: weights name unknown parameters {sorted(missing)[:3]}")
        model.load_state_dict(state, strict=False)
        return cls(model.float().eval(), tok, meta["context"])

    def pairs(self, claim: str, a: AbstractText) -> list[tuple[str, str]]:
        sep = self.tokenizer.sep_token
        return [
            sentence_pair(claim, a.sentences, i, a.title, context=self.context, sep=sep)
            for i in range(len(a.sentences))
        ]

    def logits(self, pairs: Sequence[tuple[str, str]], batch: int = 64) -> np.ndarray:
        import torch

        self.model.eval()
        out = []
        with torch.no_grad():
            for i in range(0, len(pairs), batch):
                chunk = pairs[i : i + batch]
                enc = self.tokenizer(
                    [p[0] for p in chunk],
                    [p[1] for p in chunk],
                    truncation="only_second",
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                )
                out.append(self.model(**enc).logits[:, 0].float().numpy())
        return np.concatenate(out) if out else np.zeros(0)


def held_out_scores(scorer: Scorer, data: Any, ids: Sequence[str]) -> dict[str, Any]:
    """AP over the held-out evidence abstracts' sentences and best-sentence hits."""
    from sklearn.metrics import average_precision_score

    y: list[int] = []
    z: list[float] = []
    hits = n = 0
    for cid in ids:
        claim = data.claims[cid]
        for doc, gold in claim.evidence.items():
            rationale = {i for r in gold.rationales for i in r}
            a = data.abstracts[doc]
            x = scorer.logits(scorer.pairs(claim.claim, a))
            y += [int(i in rationale) for i in range(len(x))]
            z += [float(v) for v in x]
            n += 1
            hits += int(int(np.argmax(x)) in rationale)
    return {
        "ap": round(float(average_precision_score(y, z)), 4),
        "best_right": hits,
        "abstracts": n,
    }


def train(args: argparse.Namespace) -> None:
    import torch
    import transformers

    from sciera.artifacts.registry import CROSS_ENCODER, resolve

    torch.manual_seed(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "work"
    if not work.exists():
        work.mkdir()
        for name in ("mined.jsonl", "zero_shot.jsonl", "reranked.json"):
            if args.work and (args.work / name).is_file():
                shutil.copy(args.work / name, work / name)
    spec = VerifierDataSpec(
        claims=DATA / "scifact" / "claims_train.jsonl",
        sentences=DATA / "scifact" / "corpus_sentences.jsonl",
        corpus=args.corpus,
        exclude_qrels=[DATA / "scifact" / "qrels" / "test.tsv"],
        exclude_ssli=[ROOT / "benchmarks/results/ssli_scifact_100/build/instances.packed.jsonl.gz"],
        cv_fold=args.cv_fold,
    )
    data = prepare_verifier(spec, load_settings(), work)
    held = data.test_ids or data.dev_ids
    folder = resolve(CROSS_ENCODER, BASE)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        folder, dtype=torch.float32
    ).float()
    trainable = (
        add_lora(model, args.lora) if args.lora else sum(p.numel() for p in model.parameters())
    )
    scorer = Scorer(model, tok, args.context)
    meta = {"base": BASE, "lora": args.lora, "context": args.context}
    log_rows: list[dict[str, Any]] = [{"epoch": 0, **held_out_scores(scorer, data, held)}]
    log(f"{len(data.train_ids)} training claims, {len(held)} held out; epoch 0 {log_rows[0]}")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    rng = random.Random(args.seed)
    pos_weight = torch.tensor(2.0)
    for epoch in range(1, args.epochs + 1):
        sample = sample_sentences(data.sentence_examples, 2, 1, rng)
        rng.shuffle(sample)
        model.train()
        start, total = time.time(), 0.0
        steps = (len(sample) + args.batch - 1) // args.batch
        for step in range(steps):
            chunk = sample[step * args.batch : (step + 1) * args.batch]
            pairs = [
                scorer.pairs(data.claims[e.claim_id].claim, data.abstracts[e.doc_id])[e.index]
                for e in chunk
            ]
            enc = tok(
                [p[0] for p in pairs],
                [p[1] for p in pairs],
                truncation="only_second",
                max_length=128,
                padding=True,
                return_tensors="pt",
            )
            target = torch.tensor([float(e.label) for e in chunk])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                model(**enc).logits[:, 0], target, pos_weight=pos_weight
            )
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            total += loss.item()
            if step % 50 == 0:
                log(f"epoch {epoch} step {step}/{steps} loss {total / (step + 1):.3f}")
        row = {
            "epoch": epoch,
            "loss": round(total / max(steps, 1), 4),
            "minutes": round((time.time() - start) / 60, 1),
            **held_out_scores(scorer, data, held),
        }
        log_rows.append(row)
        log(f"epoch {epoch}: {row}")
        saved = args.out / f"epoch{epoch}"
        saved.mkdir(exist_ok=True)
        state = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
        torch.save(state, saved / "weights.pt")
        (saved / "probe.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
    result = {
        "command": "python benchmarks/verify_selector_probe.py " + shlex.join(sys.argv[1:]),
        **meta,
        "trainable_parameters": trainable,
        "lr": args.lr,
        "epochs": args.epochs,
        "training_claims": len(data.train_ids),
        "held_out": f"fold {args.cv_fold}" if args.cv_fold is not None else "dev",
        "held_out_claims": len(held),
        "log": log_rows,
    }
    write(args.name or f"train_{args.out.name}", result)


def repick(scores: np.ndarray, gap: float, most: int = 3) -> tuple[int, ...]:
    """The best sentence and up to ``most - 1`` more within ``gap`` of its logit."""
    order = np.argsort(-scores, kind="stable")[:most]
    best = scores[order[0]]
    return tuple(int(i) for i in order if scores[i] >= best - gap)


def score(args: argparse.Namespace) -> None:
    rows = benchmark_rows(
        OUT.parent / "verify_scifact" / f"{args.rows}_rows.jsonl.gz", args.setting, args.system
    )
    golds = [g for g in read_gold(DATA / "scifact" / "claims_train.jsonl") if g.id in rows]
    abstracts = load_abstracts(DATA / "scifact" / "corpus_sentences.jsonl")
    head = TrainedSelector(args.model, home=load_settings().home)
    selectors: dict[str, Any] = {"head": None}
    selectors.update({str(p): Scorer.load(p) for p in args.selector})
    logits: dict[str, dict[tuple[str, str], np.ndarray]] = {name: {} for name in selectors}
    for g in golds:
        docs = [d for d, p in rows[g.id].evidence.items() if p.label != NOT_ENOUGH_INFO]
        items = [abstracts[d] for d in docs]
        for name, sel in selectors.items():
            values = (
                head.logits(g.claim, items)
                if sel is None
                else [sel.logits(sel.pairs(g.claim, a)) for a in items]
            )
            for d, v in zip(docs, values, strict=True):
                logits[name][(g.id, d)] = np.asarray(v, dtype=float)

    def predictions(name: str, gap: float) -> dict[str, ClaimPrediction]:
        out = {}
        for g in golds:
            ev = {}
            for d, p in rows[g.id].evidence.items():
                picked = p.sentences
                if (g.id, d) in logits[name]:
                    picked = repick(logits[name][(g.id, d)], gap)
                ev[d] = AbstractPrediction(p.label, picked)
            out[g.id] = ClaimPrediction(g.id, ev)
        return out

    result: dict[str, Any] = {
        "command": "python benchmarks/verify_selector_probe.py " + shlex.join(sys.argv[1:]),
        "rows": args.rows,
        "setting": args.setting,
        "system": args.system,
        "claims": len(golds),
        "as_run": scifact_counts(golds, [rows[g.id] for g in golds]).metrics(),
        "gaps": {},
        "paired": {},
    }
    best: dict[str, float] = {}
    for name in selectors:
        per_gap = {}
        for gap in args.gaps:
            m = scifact_counts(golds, list(predictions(name, gap).values())).metrics()
            per_gap[f"{gap:g}"] = {k: round(v, 4) for k, v in m.items() if k.startswith("sentence")}
        result["gaps"][name] = per_gap
        best[name] = max(args.gaps, key=lambda x: per_gap[f"{x:g}"]["sentence_label_f1"])
        log(f"{name}: " + " ".join(f"{k}:{v['sentence_label_f1']:.3f}" for k, v in per_gap.items()))
    for name in selectors:
        if name == "head":
            continue
        scores, tests, _ = compare(
            golds, predictions(name, best[name]), predictions("head", best["head"])
        )
        result["paired"][name] = {
            "gap": best[name],
            "head_gap": best["head"],
            "f1": {k: round(v["sentence_label_f1"], 4) for k, v in scores.items()},
            "tests": tests,
        }
        log(
            f"{name} at gap {best[name]:g} vs head at {best['head']:g}: "
            f"{result['paired'][name]['f1']} p = {tests['sentence_label_f1']}"
        )
    write(args.name or f"score_{args.rows}", result)


def write(name: str, result: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fine-tune a selector from the relevance cross-encoder")
    t.add_argument("--out", type=Path, required=True, help="folder for the epochs' weights")
    t.add_argument("--context", choices=("none", "title", "neighbours"), default="none")
    t.add_argument("--lora", type=int, default=0, help="adapter rank (0: fine-tune it all)")
    t.add_argument("--lr", type=float, default=2e-5)
    t.add_argument("--epochs", type=int, default=3)
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--cv-fold", type=int, help="hold out this fold of the training claims")
    t.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "scifact")
    t.add_argument("--work", type=Path, help="a verifier's .work folder (its mined abstracts)")
    t.add_argument("--name", help="result name")
    s = sub.add_parser("score", help="re-pick a verify_scifact.py run's cited sentences")
    s.add_argument("--rows", required=True, help="verify_scifact.py result name")
    s.add_argument("--selector", type=Path, nargs="+", required=True, help="epoch folders")
    s.add_argument("--model", default="scifact-verifier", help="the verifier whose head to compare")
    s.add_argument("--setting", default="open@5")
    s.add_argument("--system", default="combined")
    s.add_argument("--gaps", type=float, nargs="+", default=list(GAPS))
    s.add_argument("--name", help="result name")
    args = ap.parse_args()
    train(args) if args.command == "train" else score(args)


if __name__ == "__main__":
    main()
