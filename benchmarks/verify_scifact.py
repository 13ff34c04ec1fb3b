"""SciFact claim verification over the 5,183 abstracts, on a verifier's held-out claims.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/verify_scifact.py --model verifier-dev                 # its dev claims
    python benchmarks/verify_scifact.py --model verifier-dev --llm           # + the 1.5B rows
    python benchmarks/verify_scifact.py --model verifier-cv0 --claims test   # a CV fold

Claims: the model card's dev claims (``--claims dev``; whole claims carved from
``claims_train.jsonl``, never trained on; for the default split also never trained on by the
shipped embedder and cross-encoder) or its held-out CV fold (``--claims test``).

Settings, side by side so retrieval and verification errors separate:

- ``oracle``: each claim's cited abstracts given (its evidence abstracts and the cited ones
  without evidence);
- ``open@k``: the top ``k`` abstracts of sciera's retrieval (hybrid first stage, Max-P to
  documents, top 30 reranked by the shipped cross-encoder ``scifact-minilm``, fused).

Systems (each a selector and a verdict model through :func:`sciera.verify.verify_abstracts`,
with the model card's policy, except the baseline):

- ``baseline``: BM25 top-1 abstract (open; every cited abstract in the oracle setting),
  always SUPPORT, its two BM25-closest sentences;
- ``bm25_sentences+trained_verdict``: the two BM25-closest sentences, the trained verdict;
- ``trained_no_gate``: the trained selector and verdict, every abstract decided by the
  verdict model (the policy before the relevance gate);
- ``trained``: the trained selector and verdict with the card's policy: in the open settings
  an abstract whose reranker P(relevant) is below ``min_relevance`` is NOT ENOUGH INFO, one
  at or above it SUPPORT or CONTRADICT by the verdict model (oracle abstracts carry no
  relevance: decided by the verdict model alone);
- ``trained_selector+llm`` (``--llm``): the trained selector, the 1.5B's zero-shot label
  probabilities as the verdict;
- ``combined`` (``--llm``): the trained verdict and the 1.5B's probabilities through the
  model folder's logistic combiner (fitted on the verifier's training claims by
  ``sciera train verifier --combine-llm``; these dev claims never), with its own gate (the
  card's ``combiner.policy``: an abstract is evidence when P(relevant)^w x
  (1 - P(NOT ENOUGH INFO))^(1 - w) reaches ``min_relevance``; w and the threshold chosen
  on the dev claims, so its dev numbers are optimistic: the card gives a cross-validated
  estimate beside them);
- ``combined_trained_gate`` (``--llm``): the same verdicts behind the trained verdict's gate
  (P(relevant) alone), paired with ``combined``;
- ``combined_citing_read`` (``--llm``): ``combined`` citing the sentences it reads (its
  card's ``min_cited`` unset), paired with ``combined``; ``trained_citing_read`` likewise
  for ``trained`` (paired with it as every system is).

A sweep of ``min_relevance`` at open@5 (``--sweep``) is reported beside, as sensitivity: the
card's value is fixed, not chosen on these claims.

Metrics: SciFact's four (precision, recall, F1; :mod:`sciera.eval.metrics.scifact`), the
claim-level verdict (refusal rate of answerable claims, precision of decisions) at the card's
``strong``; each system paired against ``baseline`` and ``trained`` on the same claims:
approximate randomization of abstract label-only F1 and sentence selection+label F1 (claims
swapped), exact McNemar on each gold abstract's label-only outcome. Speed: seconds per claim
of verification over its open@10 abstracts (retrieval apart), with and without the LLM.
Writes ``benchmarks/results/verify_scifact/<name>.json`` and the per-claim rows gzipped
(each system's predictions per setting; for ``trained`` and ``combined`` also each
abstract's verdict and confidence, under ``verdicts``, which ``verify_strong_sweep.py``
reads).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from sciera.datasets.claims import AbstractPrediction, ClaimPrediction, GoldClaim, read_gold
from sciera.eval.metrics.scifact import claim_counts, scifact_counts
from sciera.eval.significance import mcnemar_exact
from sciera.types import NOT_ENOUGH_INFO, SUPPORT, Verification
from sciera.verify.base import AbstractText
from sciera.verify.memo import MemoSelector, MemoVerdict
from sciera.verify.verifier import VerifyPolicy, verify_abstracts
from verify_common import (
    DATA,
    ROOT,
    Bm25Sentences,
    f1_randomization,
    log,
    retrieve_abstracts,
    write_rows,
)

LEVELS = ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label")
PAIRED = ("abstract_label_only", "sentence_label")


class Bm25Selector:
    """The baseline's sentences as a selector: 1.0 for the two BM25-closest, else 0."""

    name = "bm25_top2"

    def __init__(self) -> None:
        self.bm25 = Bm25Sentences()

    def score_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]]:
        out = []
        for a in abstracts:
            top = set(self.bm25.closest(claim, a.sentences, 2))
            out.append([1.0 if i in top else 0.0 for i in range(len(a.sentences))])
        return out


class TimedLLM:
    """An LLM whose ``choice_logprobs`` calls are counted and timed (uncached ones apart)."""

    def __init__(self, llm: Any) -> None:
        self.llm, self.calls, self.cached, self.seconds = llm, 0, 0, 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)

    def choice_logprobs(self, messages: Any, choices: Any) -> Any:
        out = self.llm.choice_logprobs(messages, choices)
        self.calls += 1
        self.cached += bool(out.cached)
        self.seconds += 0.0 if out.cached else out.seconds
        return out


def to_prediction(cid: str, v: Verification) -> ClaimPrediction:
    ev = {}
    for a in v.verdicts:
        if a.label != NOT_ENOUGH_INFO:
            order = sorted(a.rationales, key=lambda r: -r.score)
            ev[a.doc_id] = AbstractPrediction(a.label, tuple(r.index for r in order))
    return ClaimPrediction(cid, ev)


def baseline(claim: str, abstracts: Sequence[AbstractText]) -> dict[str, AbstractPrediction]:
    bm25 = Bm25Sentences()
    return {
        a.doc_id: AbstractPrediction(SUPPORT, tuple(bm25.closest(claim, a.sentences, 2)))
        for a in abstracts
    }


# systems whose abstract verdicts (document, label, confidence) the rows keep, so the
# claim-level decision can be recomputed for another ``strong`` (verify_strong_sweep.py)
KEEP_VERDICTS = ("trained", "combined")


def claim_level(gold: GoldClaim, v: Verification | None, pred: ClaimPrediction) -> dict[str, Any]:
    """The overall label (the baseline's: SUPPORT when it predicts anything)."""
    label = v.label if v is not None else (SUPPORT if pred.evidence else NOT_ENOUGH_INFO)
    return {"gold": gold.label, "label": label}


def claim_summary(rows: Sequence[Mapping[str, str]]) -> dict[str, float]:
    """Claim-level refusals of answerable claims (gold evidence in the corpus) and the
    precision of the decisions given: over every claim (``precision``, what
    ``sciera train verifier`` chooses ``strong`` by) and over the answerable claims alone
    (``answerable_precision``, the issue's refusal target's set)."""
    answerable = [r for r in rows if r["gold"] != NOT_ENOUGH_INFO]
    decided = [r for r in rows if r["label"] != NOT_ENOUGH_INFO]
    decided_answerable = [r for r in answerable if r["label"] != NOT_ENOUGH_INFO]
    return {
        "answerable": len(answerable),
        "refusal_rate": sum(r["label"] == NOT_ENOUGH_INFO for r in answerable)
        / max(1, len(answerable)),
        "decided": len(decided),
        "precision": sum(r["label"] == r["gold"] for r in decided) / max(1, len(decided)),
        "decided_answerable": len(decided_answerable),
        "answerable_precision": sum(r["label"] == r["gold"] for r in decided_answerable)
        / max(1, len(decided_answerable)),
        "accuracy": sum(r["label"] == r["gold"] for r in rows) / max(1, len(rows)),
    }


def gold_abstract_outcomes(
    golds: Sequence[GoldClaim], preds: Mapping[str, ClaimPrediction]
) -> list[bool]:
    """One 0/1 per gold (claim, abstract): predicted with the right label."""
    out = []
    for g in golds:
        p = preds[g.id].evidence
        for doc, ga in g.evidence.items():
            out.append(doc in p and p[doc].label == ga.label)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", default="scifact-verifier")
    ap.add_argument("--claims", choices=("dev", "test"), default="dev")
    ap.add_argument("--k", type=int, nargs="+", default=[3, 5, 10])
    ap.add_argument("--llm", action="store_true", help="add the 1.5B zero-shot and combined rows")
    ap.add_argument(
        "--min-relevance",
        type=float,
        help="the relevance gate (default: the card's policy); --sweep reports others",
    )
    ap.add_argument(
        "--sweep",
        type=float,
        nargs="*",
        default=[0.0, 0.3, 0.5, 0.7, 0.9],
        help="gates reported at open@5 for trained (and combined) as sensitivity, not chosen",
    )
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "scifact")
    ap.add_argument("--work", type=Path, default=Path("/tmp/sciera-bench/verify"))
    ap.add_argument("--name", help="result name (default: model and claims)")
    args = ap.parse_args()

    from sciera.settings import load_settings
    from sciera.train.verifier_data import load_abstracts
    from sciera.verify.network import read_card, resolve_model
    from sciera.verify.trained import TrainedSelector, TrainedVerdict

    settings = load_settings()
    path = resolve_model(args.model, settings.home)
    card = read_card(path)
    ids = card["data"]["dev_ids" if args.claims == "dev" else "test_ids"]
    if not ids:
        raise SystemExit(f"{args.model}: its card has no {args.claims} claims")
    every = {g.id: g for g in read_gold(DATA / "scifact" / "claims_train.jsonl")}
    golds = [every[i] for i in ids]
    abstracts = load_abstracts(DATA / "scifact" / "corpus_sentences.jsonl")
    claims = {g.id: g.claim for g in golds}
    kmax = max(args.k)
    retrieved = retrieve_abstracts(claims, args.corpus, args.work / "retrieval.json", keep=kmax)
    bm25_top = retrieve_abstracts(
        claims,
        args.corpus,
        args.work / "retrieval_bm25.json",
        keep=1,
        retriever="bm25",
        rerank=False,
    )

    def docs_of(setting: str, cid: str) -> list[AbstractText]:
        if setting == "oracle":
            g = every[cid]
            docs = list(dict.fromkeys([*g.evidence, *g.cited_doc_ids]))
        elif setting == "open@bm25top1":
            docs = [d for d, _ in bm25_top[cid]]
        else:  # the reranker's calibrated P(relevant) goes with each abstract (the gate)
            top = retrieved[cid][: int(setting.split("@")[1])]
            return [replace(abstracts[d], relevance=float(s)) for d, s in top if d in abstracts]
        return [abstracts[d] for d in docs if d in abstracts]

    settings_list = ["oracle", *(f"open@{k}" for k in sorted(args.k))]
    policy = VerifyPolicy.from_card(card, min_relevance=args.min_relevance)
    selector = MemoSelector(TrainedSelector(model=str(path)))
    trained = MemoVerdict(TrainedVerdict(model=str(path)))
    systems: dict[str, tuple[Any, Any, VerifyPolicy]] = {
        "bm25_sentences+trained_verdict": (Bm25Selector(), trained, replace(policy, fallback=0)),
        "trained_no_gate": (selector, trained, replace(policy, min_relevance=0.0)),
        "trained_citing_read": (selector, trained, replace(policy, min_cited=None)),
        "trained": (selector, trained, policy),
    }
    llm_stats: dict[str, Any] = {}
    if args.llm:
        from sciera.llm.registry import make_llm
        from sciera.verify.llm_verdict import CombinedVerdict, LLMVerdict

        timed_llm = TimedLLM(make_llm(settings))
        llm = MemoVerdict(LLMVerdict(timed_llm))
        systems["trained_selector+llm"] = (selector, llm, replace(policy, min_confidence=0.0))
        shipped = CombinedVerdict.from_settings(settings, llm=timed_llm, model=str(path))
        combined = CombinedVerdict(trained, llm, shipped.combiners)
        memo = MemoVerdict(combined)
        # the combined verdict's own gate (its card's ``combiner.policy``), and the trained
        # verdict's gate (P(relevant) alone) beside it, paired
        own = VerifyPolicy.from_card(shipped.card, min_relevance=args.min_relevance)
        systems["combined_trained_gate"] = (selector, memo, replace(policy, relevance_weight=1.0))
        systems["combined_citing_read"] = (selector, memo, replace(own, min_cited=None))
        systems["combined"] = (selector, memo, own)
        llm_stats = {"fitted_on": card.get("combiner", {}).get("data", "training claims")}

    out: dict[str, Any] = {
        "command": shlex.join(["python", *sys.argv]),
        "model": args.model,
        "model_path": str(path),
        "claims": args.claims,
        "n_claims": len(ids),
        "policy": asdict(policy),
        "retrieval": "hybrid top 30 (Max-P), reranked by scifact-minilm (fused)",
        "results": {},
        "paired": {},
    }
    per_claim: dict[str, dict[str, Any]] = {g.id: {"id": g.id, "gold": g.label} for g in golds}
    preds_by: dict[tuple[str, str], dict[str, ClaimPrediction]] = {}
    for setting in settings_list:
        # the baseline: BM25 top-1 in the open settings, every cited abstract in the oracle
        base_setting = "oracle" if setting == "oracle" else "open@bm25top1"
        sysrows: dict[str, dict[str, ClaimPrediction]] = {"baseline": {}}
        levels: dict[str, list] = {"baseline": []}
        for g in golds:
            p = ClaimPrediction(g.id, baseline(g.claim, docs_of(base_setting, g.id)))
            sysrows["baseline"][g.id] = p
            levels["baseline"].append(claim_level(g, None, p))
        for name, (sel, ver, pol) in systems.items():
            sysrows[name], levels[name] = {}, []
            for g in golds:
                v = verify_abstracts(g.claim, docs_of(setting, g.id), sel, ver, pol)
                p = to_prediction(g.id, v)
                sysrows[name][g.id] = p
                levels[name].append(claim_level(g, v, p))
                if name in KEEP_VERDICTS:
                    per_claim[g.id].setdefault("verdicts", {}).setdefault(setting, {})[name] = [
                        [a.doc_id, a.label, round(a.confidence, 4)] for a in v.verdicts
                    ]
        res = {}
        for name, preds in sysrows.items():
            counts = scifact_counts(golds, list(preds.values()))
            res[name] = {
                **{k: round(v, 4) for k, v in counts.metrics().items()},
                "claim_level": claim_summary(levels[name]),
            }
            for g in golds:
                per_claim[g.id].setdefault(setting, {})[name] = preds[g.id].to_json()["evidence"]
            preds_by[(setting, name)] = preds
        out["results"][setting] = res
        paired = {}
        pairs = [(ref, n) for ref in ("baseline", "trained") for n in sysrows if n != ref]
        if "combined" in sysrows:
            pairs += [("combined_trained_gate", "combined"), ("combined_citing_read", "combined")]
        for ref, name in pairs:
            tests = {}
            for level in PAIRED:
                per = []
                for who in (ref, name):
                    cc = [claim_counts(g, sysrows[who][g.id]) for g in golds]
                    s = [c.score(level) for c in cc]
                    per.append([(x.correct, x.predicted, x.gold) for x in s])
                tests[f"{level}_f1"] = f1_randomization(per[0], per[1])
            tests["gold_abstract_label"] = mcnemar_exact(
                gold_abstract_outcomes(golds, sysrows[ref]),
                gold_abstract_outcomes(golds, sysrows[name]),
            ).as_dict()
            paired[f"{name}_vs_{ref}"] = tests
        out["paired"][setting] = paired
        log(
            f"{setting}: "
            + "; ".join(
                f"{n} {r['abstract_label_only_f1']:.3f}/{r['sentence_label_f1']:.3f}"
                for n, r in res.items()
            )
        )
    # sensitivity: other gates at open@5 (reported, not chosen)
    sweep: dict[str, dict[str, Any]] = {}
    for name in ("trained", "combined"):
        if name not in systems or "open@5" not in settings_list:
            continue
        sel, ver, pol = systems[name]
        for gate in args.sweep:
            preds, lv = [], []
            for g in golds:
                v = verify_abstracts(
                    g.claim, docs_of("open@5", g.id), sel, ver, replace(pol, min_relevance=gate)
                )
                preds.append(to_prediction(g.id, v))
                lv.append(claim_level(g, v, preds[-1]))
            m = scifact_counts(golds, preds).metrics()
            sweep.setdefault(name, {})[str(gate)] = {
                **{k: round(m[k], 4) for k in ("abstract_label_only_f1", "sentence_label_f1")},
                "claim_level": claim_summary(lv),
            }
    out["min_relevance_sweep_open@5"] = sweep
    # speed: verification of one claim over its open@10 abstracts, fresh (no memo), warm
    fresh_sel = TrainedSelector(model=str(path))
    fresh_ver = TrainedVerdict(model=str(path))
    ten = [g for g in golds if len(docs_of(f"open@{kmax}", g.id)) == kmax]
    verify_abstracts(ten[0].claim, docs_of(f"open@{kmax}", ten[0].id), fresh_sel, fresh_ver, policy)
    t = time.perf_counter()
    for g in ten[:30]:
        verify_abstracts(g.claim, docs_of(f"open@{kmax}", g.id), fresh_sel, fresh_ver, policy)
    out["speed"] = {
        "abstracts_per_claim": kmax,
        "claims_timed": len(ten[:30]),
        "seconds_per_claim_trained": (time.perf_counter() - t) / max(1, len(ten[:30])),
    }
    if args.llm:
        out["speed"]["llm"] = {
            "calls": timed_llm.calls,
            "cached_calls": timed_llm.cached,
            "uncached_seconds": timed_llm.seconds,
            "seconds_per_uncached_call": timed_llm.seconds
            / max(1, timed_llm.calls - timed_llm.cached),
            "seconds_per_claim_llm_over_k_abstracts_estimate": kmax
            * timed_llm.seconds
            / max(1, timed_llm.calls - timed_llm.cached),
        }
        out["combiner"] = llm_stats
    name = args.name or f"{Path(str(args.model)).name}_{args.claims}" + ("_llm" if args.llm else "")
    dest = ROOT / "benchmarks" / "results" / "verify_scifact"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    write_rows(dest / f"{name}_rows.jsonl.gz", list(per_claim.values()))
    log(f"wrote {dest / (name + '.json')}")


if __name__ == "__main__":
    main()
