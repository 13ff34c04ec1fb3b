"""Fit DeepEra's calibrator on SciFact TRAIN and report its reliability.

    python benchmarks/rerank_calibrate.py --claims 18 --depth 10 --seed 13

1. A fixed, seeded subset of SciFact train claims (qrels/train.tsv; never test).
2. First stage: hybrid top-``depth`` over whole abstracts = reciprocal rank fusion (k=60)
   of BM25 (bm25s, k1=0.9, b=0.4, English stemming) and all-MiniLM-L6-v2 cosine, both
   over the full 5,183-abstract corpus. Self-contained here so the benchmark does not move
   when the retrieval package changes.
3. DeepEra intent + relevance assessment with the real LLM (default model): per passage the
   grade expectation E[grade]/10 and P(yes) (same prompt prefix, different last line).
4. Calibrators (L2 logistic regression) on two feature sets; reliability measured on
   out-of-fold predictions (5-fold, grouped by claim: every prediction comes from a model
   that never saw that claim). The final calibrators are fitted on all sampled claims and
   saved as artifacts (benchmarks/results/, SCIERA_HOME/calibrators/ and, in a checkout,
   src/sciera/rerank/calibrators/ so it ships with the package; ``DeepEraReranker.
   from_settings`` finds the one for its model and prompt, the user's own first).

Per-claim LLM results are appended to a JSONL file as they finish, so an interrupted run
resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = (ROOT / ".." / "shared" / "data" / "scifact").resolve()
RESULTS = ROOT / "benchmarks" / "results"
FEATURE_SETS = {
    "grade+first_stage": ("grade", "first_stage_norm", "reciprocal_rank"),
    "grade+p_yes+first_stage": ("grade", "p_yes", "first_stage_norm", "reciprocal_rank"),
    "grade_only": ("grade",),
}


def load_scifact() -> tuple[dict, dict, dict[str, set[str]]]:
    corpus = {}
    for line in (DATA / "corpus.jsonl").open():
        d = json.loads(line)
        corpus[d["_id"]] = (d.get("title", ""), d.get("text", ""))
    queries = {}
    for line in (DATA / "queries.jsonl").open():
        q = json.loads(line)
        queries[q["_id"]] = q["text"]
    qrels: dict[str, set[str]] = {}
    for i, line in enumerate((DATA / "qrels" / "train.tsv").open()):
        parts = line.rstrip("\n").split("\t")
        if i == 0 and not parts[-1].isdigit():
            continue
        if int(parts[2]) > 0:
            qrels.setdefault(parts[0], set()).add(parts[1])
    return corpus, queries, qrels


def hybrid_candidates(corpus: dict, claims: list[tuple[str, str]], depth: int) -> dict:
    import bm25s
    import Stemmer

    from sciera.embed.registry import create_embedder
    from sciera.settings import EmbedSettings

    ids = list(corpus)
    texts = [f"{t}\n{x}" if t else x for t, x in (corpus[i] for i in ids)]
    stemmer = Stemmer.Stemmer("english")
    bm = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    bm.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False))
    emb = create_embedder(EmbedSettings())
    P = np.asarray(emb.embed_passages(texts))
    out = {}
    for qid, text in claims:
        docs, _ = bm.retrieve(
            bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False),
            k=100,
            show_progress=False,
        )
        bm_rank = [ids[int(d)] for d in docs[0]]
        dense = P @ np.asarray(emb.embed_queries([text]))[0]
        dn_rank = [ids[int(i)] for i in np.argsort(-dense)[:100]]
        fused: dict[str, float] = {}
        for ranking in (bm_rank, dn_rank):
            for r, d in enumerate(ranking):
                fused[d] = fused.get(d, 0.0) + 1.0 / (60 + r + 1)
        top = sorted(fused, key=lambda d: (-fused[d], d))[:depth]
        out[qid] = [(d, fused[d]) for d in top]
    return out


def score_claims(args: argparse.Namespace, corpus, queries, qrels, claims, cands, out_path):
    from sciera.eval.resultlog import unpack_for_append
    from sciera.llm.registry import make_llm
    from sciera.rerank.calibrate import first_stage_features
    from sciera.rerank.deepera.assess import assess_passage
    from sciera.rerank.deepera.intent import recognize_intent
    from sciera.settings import load_settings
    from sciera.types import Passage

    done = set()
    if unpack_for_append(out_path).exists():  # a packed (.gz) log goes on as a plain one
        done = {json.loads(line)["qid"] for line in out_path.open()}
    llm = make_llm(load_settings())
    for n, (qid, text) in enumerate(claims):
        if qid in done:
            continue
        t0 = time.perf_counter()
        intent = None if args.no_intent else recognize_intent(llm, text)
        docs = cands[qid]
        fs = first_stage_features([s for _, s in docs], list(range(1, len(docs) + 1)))
        rows = []
        for (doc, fscore), f in zip(docs, fs, strict=True):
            title, body = corpus[doc]
            p = Passage(f"{doc}#0", doc, 0, title, body)
            structured = intent.intent if intent is not None else None
            a = assess_passage(llm, text, structured, p, max_words=args.max_words, with_yes=True)
            rows.append(
                {
                    "doc": doc,
                    "label": int(doc in qrels[qid]),
                    "grade": a.grade_expectation,
                    "p_yes": a.p_yes,
                    "grade_mass": a.grade_mass,
                    "first_stage_score": fscore,
                    **f,
                    "prompt_tokens": a.prompt_tokens,
                    "seconds": a.seconds,
                }
            )
        rec = {
            "qid": qid,
            "claim": text,
            "intent": intent.intent.intent if intent is not None else None,
            "intent_fallback": intent.fallback if intent is not None else False,
            "model_id": llm.model_id,
            "seconds": time.perf_counter() - t0,
            "rows": rows,
        }
        with out_path.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        print(f"[{n + 1}/{len(claims)}] {qid} {rec['seconds']:.0f}s", file=sys.stderr, flush=True)
    return llm.model_id


def out_of_fold(records: list[dict], feats: Sequence[str], *, folds: int, l2: float) -> np.ndarray:
    """Each passage's calibrated score from a calibrator fitted without its claim: claims are
    dealt round-robin into ``folds`` folds (claim i -> fold i % folds)."""
    from sciera.rerank.calibrate import fit_calibrator

    X = np.array([[row[f] for f in feats] for r in records for row in r["rows"]], dtype=float)
    y = np.array([row["label"] for r in records for row in r["rows"]], dtype=float)
    group = np.array([i for i, r in enumerate(records) for _ in r["rows"]])
    fold_of = np.arange(len(records)) % folds
    oof = np.zeros(len(y))
    for k in range(folds):
        test = np.isin(group, np.where(fold_of == k)[0])
        cal = fit_calibrator(X[~test], y[~test], feats, model_id="oof", prompt_version="oof", l2=l2)
        oof[test] = cal.predict_matrix(X[test])
    return oof


def auc(p: np.ndarray, y: np.ndarray) -> float:
    pos, neg = p[y == 1], p[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    return float(((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean())


def logloss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def hit_at_1(records: list[dict], scores: list[np.ndarray]) -> float:
    hits = [r["rows"][int(np.argmax(s))]["label"] for r, s in zip(records, scores, strict=True)]
    return float(np.mean(hits))


def prf_at(p: np.ndarray, y: np.ndarray, tau: float) -> dict[str, float]:
    kept = p >= tau
    tp = float((kept & (y == 1)).sum())
    return {
        "kept": int(kept.sum()),
        "precision": tp / kept.sum() if kept.sum() else 0.0,
        "recall": tp / (y == 1).sum() if (y == 1).sum() else 0.0,
    }


TAUS = (0.5, 0.6, 0.7, 0.8, 0.9)


def tau_sweep(p: np.ndarray, y: np.ndarray) -> dict[str, dict[str, float]]:
    """Kept-passage precision/recall against qrels for each tau (DeepEra's filter)."""
    return {f"{tau:.1f}": prf_at(p, y, tau) for tau in TAUS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--claims", type=int, default=18)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--max-words", type=int, default=200)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument(
        "--no-intent",
        action="store_true",
        help="ablation v1: assess without the structured intent (separate rows file)",
    )
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--analyze-only",
        action="store_true",
        help="fit and report on the claims already scored (no LLM calls)",
    )
    args = ap.parse_args()

    from sciera.rerank.calibrate import (
        BUNDLED,
        artifact_name,
        artifact_path,
        expected_calibration_error,
        fit_calibrator,
        reliability,
        reliability_diagram,
    )
    from sciera.rerank.deepera.agent import calibration_key
    from sciera.settings import load_settings

    RESULTS.mkdir(parents=True, exist_ok=True)
    corpus, queries, qrels = load_scifact()
    pool = sorted(q for q in qrels if q in queries)
    claims = [(q, queries[q]) for q in random.Random(args.seed).sample(pool, args.claims)]
    tag = f"s{args.seed}_n{args.claims}_d{args.depth}"
    cand_path = RESULTS / f"rerank_calibrate_candidates_{tag}.json"
    if cand_path.exists():
        cands = json.loads(cand_path.read_text())
    else:
        t0 = time.perf_counter()
        cands = hybrid_candidates(corpus, claims, args.depth)
        cand_path.write_text(json.dumps(cands))
        print(f"first stage {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    suffix = "_nointent" if args.no_intent else ""  # the ablation never replaces the real files
    rows_path = RESULTS / f"rerank_calibrate_rows_{tag}{suffix}.jsonl"
    t0 = time.perf_counter()
    if not args.analyze_only:
        score_claims(args, corpus, queries, qrels, claims, cands, rows_path)
    llm_seconds = time.perf_counter() - t0

    from sciera.eval.resultlog import read_text

    records = [json.loads(line) for line in read_text(rows_path).splitlines()]
    records = [r for r in records if r["qid"] in dict(claims)]
    model_id = records[0]["model_id"]
    y = np.array([row["label"] for r in records for row in r["rows"]], dtype=float)
    group = np.array([i for i, r in enumerate(records) for _ in r["rows"]])
    prompt_version = calibration_key(use_intent=not args.no_intent)

    def matrix(features):
        return np.array([[row[f] for f in features] for r in records for row in r["rows"]])

    report: dict = {
        "command": "python benchmarks/rerank_calibrate.py " + " ".join(sys.argv[1:]),
        "split": "SciFact train (qrels/train.tsv)",
        "assessed_with_intent": not args.no_intent,
        "claims": len(records),
        "claims_sampled": len(claims),
        "passages": len(y),
        "relevant": int(y.sum()),
        "model_id": model_id,
        "prompt_version": prompt_version,
        "first_stage": "RRF(k=60) of BM25 (k1 0.9, b 0.4) and all-MiniLM-L6-v2, whole abstracts",
        "seconds_per_passage": float(
            np.mean([row["seconds"] for r in records for row in r["rows"]])
        ),
        "seconds_per_claim": float(np.mean([r["seconds"] for r in records])),
        "llm_seconds_this_run": llm_seconds,
        "intent_fallbacks": sum(r["intent_fallback"] for r in records),
        "first_stage_hit@1": hit_at_1(records, [-np.arange(len(r["rows"])) for r in records]),
        "variants": {},
    }
    curves = {}
    raw = matrix(["grade"])[:, 0]
    for name, p in (("raw grade", raw), ("raw P(yes)", matrix(["p_yes"])[:, 0])):
        report["variants"][name] = {
            "ece": expected_calibration_error(p, y),
            "logloss": logloss(p, y),
            "auc": auc(p, y),
            "tau_sweep": tau_sweep(p, y),
        }
        curves[name] = (p.tolist(), y.tolist())
    best, best_loss = None, float("inf")
    for name, feats in FEATURE_SETS.items():
        X = matrix(feats)
        oof = out_of_fold(records, feats, folds=args.folds, l2=args.l2)
        per_claim = [oof[group == i] for i in range(len(records))]
        loss = logloss(oof, y)
        report["variants"][f"calibrated[{name}] (out-of-fold)"] = {
            "features": list(feats),
            "ece": expected_calibration_error(oof, y),
            "logloss": loss,
            "auc": auc(oof, y),
            "hit@1": hit_at_1(records, per_claim),
            "tau_sweep": tau_sweep(oof, y),
            "reliability": reliability(oof, y),
        }
        curves[f"calibrated {name}"] = (oof.tolist(), y.tolist())
        final = fit_calibrator(
            X,
            y,
            feats,
            model_id=model_id,
            prompt_version=prompt_version,
            l2=args.l2,
            notes={
                "fitted_on": f"SciFact train, {len(records)} claims seed {args.seed}",
                "oof_ece": expected_calibration_error(oof, y),
                "oof_logloss": loss,
            },
        )
        final.save(RESULTS / f"rerank_calibrator_{name}{suffix}.json")
        if name != "grade_only" and loss < best_loss:
            best, best_loss = final, loss
    report["variants"]["raw grade"]["hit@1"] = hit_at_1(
        records, [np.array([row["grade"] for row in r["rows"]]) for r in records]
    )
    report["variants"]["raw P(yes)"]["hit@1"] = hit_at_1(
        records, [np.array([row["p_yes"] for row in r["rows"]]) for r in records]
    )
    assert best is not None
    # DeepEra grades only passages whose calibrated score could still reach tau (pruning):
    # how many of the `depth` candidates per claim that is, from first-stage features alone
    fs_rows = [row for r in records for row in r["rows"]]
    bounds = np.array([best.upper_bound(row, ("grade", "p_yes")) for row in fs_rows])
    report["graded_per_claim_at_tau"] = {
        f"{tau:.1f}": float((bounds >= tau).sum() / len(records)) for tau in TAUS
    }
    # keyed by prompt version and intent use, so ablation v1 (no intent) has its own artifact
    installed = best.save(artifact_path(load_settings().home, model_id, prompt_version))
    report["installed_calibrator"] = {"features": list(best.features), "path": str(installed)}
    if BUNDLED.resolve().is_relative_to(ROOT):  # a checkout: ship it with the package
        shipped = best.save(BUNDLED / artifact_name(model_id, prompt_version))
        report["installed_calibrator"]["bundled"] = str(shipped.relative_to(ROOT))
    png = reliability_diagram(
        curves,
        RESULTS / f"rerank_calibration_reliability{suffix}.png",
        title=f"DeepEra on SciFact train ({len(records)} claims, OOF)",
    )
    report["reliability_png"] = str(png.relative_to(ROOT))
    out = RESULTS / f"rerank_calibrate{suffix}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    short = {
        k: {m: v[m] for m in ("ece", "logloss", "auc", "hit@1") if m in v}
        for k, v in report["variants"].items()
    }
    print(
        json.dumps(
            {
                k: report[k]
                for k in (
                    "claims",
                    "passages",
                    "relevant",
                    "first_stage_hit@1",
                    "seconds_per_passage",
                )
            },
            indent=1,
        )
    )
    print(json.dumps(short, indent=1))


if __name__ == "__main__":
    main()
