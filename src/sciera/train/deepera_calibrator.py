"""Fit DeepEra's calibrator on SciFact TRAIN and report its reliability
(``sciera train deepera-calibrator``).

1. A fixed, seeded subset of SciFact train claims (qrels/train.tsv; never test).
2. First stage: hybrid top-``depth`` over whole abstracts = reciprocal rank fusion (k=60)
   of BM25 (bm25s, k1=0.9, b=0.4, English stemming) and all-MiniLM-L6-v2 cosine, both
   over the full 5,183-abstract corpus. Self-contained here so the calibrator does not move
   when the retrieval package changes.
3. DeepEra intent + relevance assessment with the real LLM (default model): per passage the
   grade expectation E[grade]/10 and P(yes) (same prompt prefix, different last line).
4. Calibrators (L2 logistic regression) on two feature sets; reliability measured on
   out-of-fold predictions (5-fold, grouped by claim: every prediction comes from a model
   that never saw that claim). The final calibrators are fitted on all sampled claims and
   saved as artifacts (the results folder, SCIERA_HOME/calibrators/ and, in a checkout,
   src/sciera/rerank/calibrators/ so it ships with the package; ``DeepEraReranker.
   from_settings`` finds the one for its model and prompt, the user's own first).

Per-claim LLM results (the rows) are appended to a JSONL file as they finish, so an
interrupted run resumes where it stopped; ``analyze_only`` fits on the rows already there
(no LLM, no first stage): a refit from the same rows writes the same calibrator.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sciera.corpus.readers.beir import load_beir_qrels, load_beir_queries
from sciera.rerank.calibrate import Calibrator

FEATURE_SETS = {
    "grade+first_stage": ("grade", "first_stage_norm", "reciprocal_rank"),
    "grade+p_yes+first_stage": ("grade", "p_yes", "first_stage_norm", "reciprocal_rank"),
    "grade_only": ("grade",),
}
"""The calibrators fitted; the final one is the best out-of-fold log loss of all but
``grade_only``."""
TAUS = (0.5, 0.6, 0.7, 0.8, 0.9)
FIRST_STAGE = "RRF(k=60) of BM25 (k1 0.9, b 0.4) and all-MiniLM-L6-v2, whole abstracts"


@dataclass(frozen=True)
class CalibratorRun:
    """One fit: which claims, how they are scored, where its files go."""

    scifact: Path  # corpus.jsonl, queries.jsonl, qrels/train.tsv
    results: Path  # rows, first-stage candidates, per-feature-set calibrators, report, PNG
    claims: int = 18
    depth: int = 10
    seed: int = 13
    max_words: int = 200
    l2: float = 1.0
    use_intent: bool = True  # False: ablation v1, its own rows, calibrator and report
    folds: int = 5
    analyze_only: bool = False
    command: str = ""  # what the report says made it

    @property
    def tag(self) -> str:
        return f"s{self.seed}_n{self.claims}_d{self.depth}"

    @property
    def suffix(self) -> str:
        return "" if self.use_intent else "_nointent"  # the ablation never replaces the real files

    @property
    def rows_path(self) -> Path:
        return self.results / f"rerank_calibrate_rows_{self.tag}{self.suffix}.jsonl"

    @property
    def candidates_path(self) -> Path:
        return self.results / f"rerank_calibrate_candidates_{self.tag}.json"


def load_scifact(folder: Path) -> tuple[dict, dict, dict[str, set[str]]]:
    """(corpus ``{id: (title, text)}``, queries ``{id: text}``, train qrels ``{qid: {doc}}``
    of the claims with a relevant abstract)."""
    corpus = {}
    for line in (folder / "corpus.jsonl").open():
        d = json.loads(line)
        corpus[d["_id"]] = (d.get("title", ""), d.get("text", ""))
    judged = load_beir_qrels(folder, "train")
    relevant = {q: {d for d, grade in docs.items() if grade > 0} for q, docs in judged.items()}
    return corpus, load_beir_queries(folder), {q: docs for q, docs in relevant.items() if docs}


def sample_claims(
    queries: dict[str, str], qrels: dict[str, set[str]], n: int, seed: int
) -> list[tuple[str, str]]:
    """``n`` judged train claims drawn with ``seed``, as ``(qid, text)``."""
    pool = sorted(q for q in qrels if q in queries)
    return [(q, queries[q]) for q in random.Random(seed).sample(pool, n)]


def hybrid_candidates(corpus: dict, claims: list[tuple[str, str]], depth: int) -> dict:
    """Each claim's top ``depth`` abstracts by :data:`FIRST_STAGE`, with their fused score."""
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


def candidates(run: CalibratorRun, corpus: dict, claims: list[tuple[str, str]], log) -> dict:
    """The first stage's candidates, read from the results folder when already there."""
    if run.candidates_path.exists():
        return json.loads(run.candidates_path.read_text())
    t0 = time.perf_counter()
    cands = hybrid_candidates(corpus, claims, run.depth)
    run.candidates_path.write_text(json.dumps(cands))
    log(f"first stage {time.perf_counter() - t0:.0f}s")
    return cands


def _assessed_rows(llm, run, text, intent, docs, corpus, relevant) -> list[dict[str, Any]]:
    from sciera.rerank.calibrate import first_stage_features
    from sciera.rerank.deepera.assess import assess_passage
    from sciera.types import Passage

    fs = first_stage_features([s for _, s in docs], list(range(1, len(docs) + 1)))
    rows = []
    for (doc, fscore), f in zip(docs, fs, strict=True):
        title, body = corpus[doc]
        p = Passage(f"{doc}#0", doc, 0, title, body)
        structured = intent.intent if intent is not None else None
        a = assess_passage(llm, text, structured, p, max_words=run.max_words, with_yes=True)
        rows.append(
            {
                "doc": doc,
                "label": int(doc in relevant),
                "grade": a.grade_expectation,
                "p_yes": a.p_yes,
                "grade_mass": a.grade_mass,
                "first_stage_score": fscore,
                **f,
                "prompt_tokens": a.prompt_tokens,
                "seconds": a.seconds,
            }
        )
    return rows


def score_claims(llm, run: CalibratorRun, corpus, qrels, claims, cands, log) -> None:
    """Append one record per claim not yet in the rows file: the LLM's intent and its
    assessment of each candidate (a packed ``.gz`` rows file goes on as a plain one)."""
    from sciera.eval.resultlog import unpack_for_append
    from sciera.rerank.deepera.intent import recognize_intent

    out_path = run.rows_path
    done = set()
    if unpack_for_append(out_path).exists():
        done = {json.loads(line)["qid"] for line in out_path.open()}
    for n, (qid, text) in enumerate(claims):
        if qid in done:
            continue
        t0 = time.perf_counter()
        intent = recognize_intent(llm, text) if run.use_intent else None
        rows = _assessed_rows(llm, run, text, intent, cands[qid], corpus, qrels[qid])
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
        log(f"[{n + 1}/{len(claims)}] {qid} {rec['seconds']:.0f}s")


def read_records(path: Path, claims: Sequence[tuple[str, str]]) -> list[dict]:
    """The scored claims of ``path`` (or ``path.gz``) that are among ``claims``."""
    from sciera.eval.resultlog import read_text

    wanted = dict(claims)
    records = [json.loads(line) for line in read_text(path).splitlines()]
    return [r for r in records if r["qid"] in wanted]


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


def tau_sweep(p: np.ndarray, y: np.ndarray) -> dict[str, dict[str, float]]:
    """Kept-passage precision/recall against qrels for each tau (DeepEra's filter)."""
    return {f"{tau:.1f}": prf_at(p, y, tau) for tau in TAUS}


def _matrix(records: list[dict], features: Sequence[str]) -> np.ndarray:
    return np.array([[row[f] for f in features] for r in records for row in r["rows"]])


@dataclass
class Fitted:
    """What :func:`analyze` gives: the report, the calibrator of each feature set, the
    one to install, and the reliability curves ``{name: (probs, labels)}``."""

    report: dict[str, Any]
    calibrators: dict[str, Calibrator]
    best: Calibrator
    curves: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)


def _raw_variants(
    records: list[dict], y: np.ndarray
) -> tuple[dict[str, Any], dict[str, tuple[list[float], list[float]]]]:
    from sciera.rerank.calibrate import expected_calibration_error

    variants: dict[str, Any] = {}
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for name, feature in (("raw grade", "grade"), ("raw P(yes)", "p_yes")):
        p = _matrix(records, [feature])[:, 0]
        variants[name] = {
            "ece": expected_calibration_error(p, y),
            "logloss": logloss(p, y),
            "auc": auc(p, y),
            "tau_sweep": tau_sweep(p, y),
        }
        curves[name] = (p.tolist(), y.tolist())
    return variants, curves


def _calibrated_variants(
    records: list[dict], y: np.ndarray, run: CalibratorRun, model_id: str, prompt_version: str
) -> tuple[dict[str, Any], dict[str, Calibrator], dict[str, tuple]]:
    from sciera.rerank.calibrate import expected_calibration_error, fit_calibrator, reliability

    group = np.array([i for i, r in enumerate(records) for _ in r["rows"]])
    variants: dict[str, Any] = {}
    finals: dict[str, Calibrator] = {}
    curves: dict[str, tuple] = {}
    for name, feats in FEATURE_SETS.items():
        oof = out_of_fold(records, feats, folds=run.folds, l2=run.l2)
        per_claim = [oof[group == i] for i in range(len(records))]
        loss = logloss(oof, y)
        variants[f"calibrated[{name}] (out-of-fold)"] = {
            "features": list(feats),
            "ece": expected_calibration_error(oof, y),
            "logloss": loss,
            "auc": auc(oof, y),
            "hit@1": hit_at_1(records, per_claim),
            "tau_sweep": tau_sweep(oof, y),
            "reliability": reliability(oof, y),
        }
        curves[f"calibrated {name}"] = (oof.tolist(), y.tolist())
        finals[name] = fit_calibrator(
            _matrix(records, feats),
            y,
            feats,
            model_id=model_id,
            prompt_version=prompt_version,
            l2=run.l2,
            notes={
                "fitted_on": f"SciFact train, {len(records)} claims seed {run.seed}",
                "oof_ece": expected_calibration_error(oof, y),
                "oof_logloss": loss,
            },
        )
    return variants, finals, curves


def analyze(records: list[dict], run: CalibratorRun, claims_sampled: int) -> Fitted:
    """Reliability of the raw signals and of each :data:`FEATURE_SETS` calibrator (out of
    fold), the final calibrators fitted on every record, and the best one (lowest
    out-of-fold log loss among those that read first-stage features and the grade)."""
    from sciera.rerank.deepera.agent import calibration_key

    model_id = records[0]["model_id"]
    prompt_version = calibration_key(use_intent=run.use_intent)
    y = np.array([row["label"] for r in records for row in r["rows"]], dtype=float)
    report: dict[str, Any] = {
        "command": run.command,
        "split": "SciFact train (qrels/train.tsv)",
        "assessed_with_intent": run.use_intent,
        "claims": len(records),
        "claims_sampled": claims_sampled,
        "passages": len(y),
        "relevant": int(y.sum()),
        "model_id": model_id,
        "prompt_version": prompt_version,
        "first_stage": FIRST_STAGE,
        "seconds_per_passage": float(
            np.mean([row["seconds"] for r in records for row in r["rows"]])
        ),
        "seconds_per_claim": float(np.mean([r["seconds"] for r in records])),
        "llm_seconds_this_run": 0.0,
        "intent_fallbacks": sum(r["intent_fallback"] for r in records),
        "first_stage_hit@1": hit_at_1(records, [-np.arange(len(r["rows"])) for r in records]),
        "variants": {},
    }
    raw, curves = _raw_variants(records, y)
    calibrated, finals, oof_curves = _calibrated_variants(records, y, run, model_id, prompt_version)
    report["variants"] = {**raw, **calibrated}
    for name, feature in (("raw grade", "grade"), ("raw P(yes)", "p_yes")):
        raw[name]["hit@1"] = hit_at_1(
            records, [np.array([row[feature] for row in r["rows"]]) for r in records]
        )
    # strictly lower wins: on a tie the first of FEATURE_SETS stays
    choices = [n for n in FEATURE_SETS if n != "grade_only"]
    best = finals[
        min(choices, key=lambda n: calibrated[f"calibrated[{n}] (out-of-fold)"]["logloss"])
    ]
    # DeepEra grades only passages whose calibrated score could still reach tau (pruning):
    # how many of the `depth` candidates per claim that is, from first-stage features alone
    fs_rows = [row for r in records for row in r["rows"]]
    bounds = np.array([best.upper_bound(row, ("grade", "p_yes")) for row in fs_rows])
    report["graded_per_claim_at_tau"] = {
        f"{tau:.1f}": float((bounds >= tau).sum() / len(records)) for tau in TAUS
    }
    return Fitted(report, finals, best, {**curves, **oof_curves})


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is under it (as a report names
    files in a checkout), else as it is."""
    path = Path(path).resolve()
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def write_outputs(fitted: Fitted, run: CalibratorRun, home: Path, bundled: Path | None) -> dict:
    """Save each feature set's calibrator in the results folder, install the best one under
    ``home`` (and into ``bundled``, the calibrators shipped with sciera, when given), draw
    the reliability diagram and write the report; returns the report."""
    from sciera.rerank.calibrate import artifact_name, artifact_path, reliability_diagram

    report, best = fitted.report, fitted.best
    for name, cal in fitted.calibrators.items():
        cal.save(run.results / f"rerank_calibrator_{name}{run.suffix}.json")
    # keyed by prompt version and intent use, so ablation v1 (no intent) has its own artifact
    installed = best.save(artifact_path(home, best.model_id, best.prompt_version))
    report["installed_calibrator"] = {"features": list(best.features), "path": str(installed)}
    if bundled is not None:
        shipped = best.save(bundled / artifact_name(best.model_id, best.prompt_version))
        report["installed_calibrator"]["bundled"] = _shown(shipped)
    png = reliability_diagram(
        fitted.curves,
        run.results / f"rerank_calibration_reliability{run.suffix}.png",
        title=f"DeepEra on SciFact train ({report['claims']} claims, OOF)",
    )
    report["reliability_png"] = _shown(png)
    out = run.results / f"rerank_calibrate{run.suffix}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    return report


def fit_deepera_calibrator(
    run: CalibratorRun,
    *,
    home: Path,
    bundled: Path | None,
    make_llm: Callable[[], Any] | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Score the sampled claims not yet in the rows file with ``make_llm()`` (skipped with
    ``run.analyze_only``), fit and write the calibrators (:func:`write_outputs`); returns
    the report."""
    run.results.mkdir(parents=True, exist_ok=True)
    corpus, queries, qrels = load_scifact(run.scifact)
    claims = sample_claims(queries, qrels, run.claims, run.seed)
    t0 = time.perf_counter()
    if not run.analyze_only:
        if make_llm is None:
            raise ValueError("scoring claims needs an LLM (make_llm), or analyze_only")
        cands = candidates(run, corpus, claims, log)
        t0 = time.perf_counter()
        score_claims(make_llm(), run, corpus, qrels, claims, cands, log)
    llm_seconds = time.perf_counter() - t0
    records = read_records(run.rows_path, claims)
    fitted = analyze(records, run, claims_sampled=len(claims))
    fitted.report["llm_seconds_this_run"] = llm_seconds
    return write_outputs(fitted, run, home, bundled)


def summary(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The headline counts and each variant's ece, logloss, auc and hit@1."""
    head = {
        k: report[k]
        for k in ("claims", "passages", "relevant", "first_stage_hit@1", "seconds_per_passage")
    }
    short = {
        k: {m: v[m] for m in ("ece", "logloss", "auc", "hit@1") if m in v}
        for k, v in report["variants"].items()
    }
    return head, short
