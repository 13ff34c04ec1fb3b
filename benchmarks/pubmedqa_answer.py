"""PubMedQA answering benchmark: full / vanilla / rational / deepera evidence side by side.

Run from the repository root with the venv active (no network needed)::

    HF_HUB_OFFLINE=1 python benchmarks/pubmedqa_answer.py --n 100
    # quick check:  --n 5     other options: --settings reasoning retrieval
    #   --extractors full vanilla rational deepera deepera@0.5  --depth 5 --top-k 3 --tau 0.8
    #   --first-stage bm25  --ideal (also an ideal answer, token F1 vs LONG_ANSWER)

Data: ../shared/data/pubmedqa/pqal_dev.json (500 PQA-L questions, not the official test
split). Subset: ``--n`` questions drawn with ``random.Random(--seed)`` from the sorted
PubMed ids (``sciera.datasets.loaders.seeded_subset``; default 100 with seed 0); the ids
are written into the results.

Settings
(a) ``reasoning`` (PubMedQA's reasoning-required setting): the question's own contexts
    are the passages; each extractor turns them into evidence. DeepEra grades raw here:
    its calibrator reads first-stage rank and score, and this setting has no first stage.
(b) ``retrieval``: the contexts of all 500 dev questions are ingested as a corpus (one
    document per PubMed id, contexts joined) and indexed; the question is answered from
    the first stage's top ``--depth`` passages. full / vanilla / rational read the top
    ``--top-k`` of them; deepera reranks all ``--depth`` (threshold ``--tau``), keeps at
    most ``--top-k`` and summarizes. ``deepera@0.5`` is DeepEra at threshold 0.5 instead
    of ``--tau``, so several thresholds run paired in one pass (grades come from the
    cache). Evidence recall = share of questions whose own abstract is among the evidence
    passages (first-stage recall is reported beside it).

Answers: yes/no/maybe decided by choice probabilities over the three options (no
explanation call). A refusal (no evidence survived; with ``--refuse insufficient`` also
the extractor's "insufficient" verdict) or an unreadable reply counts as wrong.
Metrics: accuracy and macro-F1 over yes/no/maybe, refusal and degraded rates, mean CR
over the answers that had evidence (``with_evidence`` of them), mean seconds per question.
Questions run one at a time, each through every selected (setting, extractor) before the
next, and every answer is appended to a JSONL file; a rerun skips what is there for the
same configuration (resumable). ``--limit-minutes`` starts no
new question after the budget; SIGTERM or Ctrl-C stops cleanly. Either way the report
covers, per setting, the questions every extractor answered (``questions_paired``).
The LLM response cache (SCIERA_HOME/llm-cache.sqlite) is on, so DeepEra's grades are
computed once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data" / "pubmedqa" / "pqal_dev.json"
LABELS = ("yes", "no", "maybe")
EXTRACTORS = ("full", "vanilla", "rational", "deepera", "deepera_ce")


def extractor_name(value: str) -> str:
    """An extractor name, or ``deepera@TAU`` / ``deepera_ce@TAU`` for DeepEra at its own
    threshold."""
    base, at, tau = value.partition("@")
    if base not in EXTRACTORS or (at and not base.startswith("deepera")):
        raise argparse.ArgumentTypeError(f"unknown extractor {value!r}: {', '.join(EXTRACTORS)}")
    if at:
        try:
            ok = 0.0 <= float(tau) <= 1.0
        except ValueError:
            ok = False
        if not ok:
            raise argparse.ArgumentTypeError(f"{value!r}: the threshold must be in [0, 1]")
    return value


def config_key(args: argparse.Namespace, model_id: str, scorer_model: str | None = None) -> str:
    """The rows' identity: a rerun resumes only rows with the same key. The cross-encoder
    DeepEra-CE scores with enters it only when it is not the default (rows written before it
    did were all made with the default), so other scorers never mix into a file."""
    fields: dict[str, Any] = {
        k: getattr(args, k)
        for k in ("depth", "top_k", "tau", "first_stage", "refuse", "passage_words", "ideal")
    }
    fields["model"] = model_id
    from sciera.settings import DeepEraSettings

    if scorer_model not in (None, DeepEraSettings.model_fields["scorer_model"].default):
        fields["scorer_model"] = scorer_model
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:12]


def load_done(path: Path, key: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    from sciera.eval.resultlog import is_stored, read_text

    done: dict[tuple[str, str, str], dict[str, Any]] = {}
    if is_stored(path):  # the plain log, or the packed .gz of a committed run
        for line in read_text(path).splitlines():
            try:
                r = json.loads(line)
            except ValueError:  # a line cut by a kill: redo that question
                continue
            if r.get("config") == key:
                done[(r["setting"], r["extractor"], r["pmid"])] = r
    return done


def open_corpus(data: Mapping[str, Any], work: Path, settings: Any, first_stage: str) -> Any:
    """A retriever over one document per PubMed id (contexts joined), built once."""
    from sciera.corpus.ingest import ingest
    from sciera.errors import ScieraError
    from sciera.retrieve.build import build_indexes
    from sciera.retrieve.open import open_retriever

    corpus = work / "corpus"
    try:
        return open_retriever(corpus, first_stage, settings)
    except ScieraError:  # missing or stale: (re)build below
        pass
    work.mkdir(parents=True, exist_ok=True)
    docs = work / "pubmedqa_dev.jsonl"
    with docs.open("w", encoding="utf-8") as out:
        for pmid, item in sorted(data.items()):
            text = " ".join(str(c) for c in item["CONTEXTS"])
            out.write(json.dumps({"_id": pmid, "title": "", "text": text}) + "\n")
    ingest(docs, corpus, format="beir")
    which = ["bm25"] if first_stage == "bm25" else ["bm25", "dense"]
    build_indexes(corpus, settings, which=which)
    return open_retriever(corpus, first_stage, settings)


class Runner:
    """One answering pipeline per (setting, extractor), sharing one LLM; every question
    runs through :meth:`sciera.pipeline.Pipeline.run` with its candidates given."""

    def __init__(self, args: argparse.Namespace) -> None:
        from sciera.llm.registry import make_llm

        self.args = args
        self.settings = self._settings(args.tau)
        self.llm = make_llm(self.settings)
        self.pipelines = {
            (setting, name): self._pipeline(setting, name)
            for setting in args.settings
            for name in args.extractors
        }

    def _settings(self, tau: float) -> Any:
        from sciera.settings import load_settings

        a = self.args
        return load_settings(
            a.preset,
            retrieve={"retriever": a.first_stage},
            rerank={"depth": a.depth},
            filter={"top_k": a.top_k, "tau": tau},
            answer={"passage_words": a.passage_words},
        )

    def _pipeline(self, setting: str, name: str) -> Any:
        """DeepEra reranks every candidate, keeps those >= tau (at most --top-k) and
        summarises them; its calibrator reads first-stage rank and score, and the
        reasoning setting has no first stage (the question's own contexts, in order), so
        there it grades raw (LLM) or with the logit-only calibrator (cross-encoder). The
        other extractors read the first stage's top --top-k (retrieval) or every context
        (reasoning)."""
        from sciera.pipeline import CANDIDATES, PipelineSpec, build_pipeline
        from sciera.settings import FilterSettings

        calibrated = setting == "retrieval"
        base, _, tau = name.partition("@")
        settings = self._settings(float(tau)) if tau else self.settings
        generator_params = {
            "allow_maybe": True,
            "explain_yesno": False,
            "refuse_on_insufficient": self.args.refuse == "insufficient",
        }
        reranker, params = None, {}
        keep = FilterSettings(use_tau=False, top_k=self.args.top_k if calibrated else None)
        evidence = base
        if base == "deepera":
            reranker = "deepera"
            params = {"scorer": "llm", "calibrator": "auto" if calibrated else None}
        elif base == "deepera_ce":
            from sciera.rerank.registry import make_reranker

            reranker, evidence = "deepera", "deepera"
            scorer = make_reranker(
                "cross_encoder",
                settings,
                model=settings.deepera.scorer_model,
                score="auto" if calibrated else "calibrated",
            )
            params = {"scorer": scorer}
        if reranker is not None:
            keep = settings.filter
        spec = PipelineSpec(
            retriever=CANDIDATES,
            reranker=reranker,
            reranker_params=params,
            rerank_depth=self.args.depth,
            filter=keep,
            evidence=evidence,
            generator="llm",
            generator_params=generator_params,
        )
        return build_pipeline(spec, settings, llm=self.llm)

    def answer(self, setting: str, name: str, pmid: str, item: Mapping[str, Any], retriever):
        from sciera.generate.base import exact_answer
        from sciera.types import Passage, Ranking, ScoredPassage

        question = item["QUESTION"]
        t0 = time.perf_counter()
        if setting == "reasoning":
            passages = [
                Passage(f"{pmid}#{i}", pmid, i, "", c) for i, c in enumerate(item["CONTEXTS"])
            ]
            items = tuple(ScoredPassage(p, 1.0, i + 1) for i, p in enumerate(passages))
            candidates = Ranking(question, items, "given")
        else:
            candidates = retriever.search(question, self.args.depth)
        pipe = self.pipelines[setting, name]
        result = pipe.run(question, "yesno", candidates=candidates)
        ev, answer = result.evidence, result.answer
        assert ev is not None and answer is not None
        exact = exact_answer(answer)
        pred = exact[0] if exact else ("refused" if answer.insufficient else "degraded")
        record: dict[str, Any] = {
            "setting": setting,
            "extractor": name,
            "pmid": pmid,
            "gold": item["final_decision"],
            "pred": pred,
            "probs": dict(answer.trace.get("probs", {})),
            "sufficient": ev.sufficient,
            "cr": ev.compression_ratio,
            "evidence_ids": [e.passage.passage_id for e in ev.evidence],
            "own_in_evidence": any(e.passage.doc_id == pmid for e in ev.evidence),
            "own_in_candidates": any(it.passage.doc_id == pmid for it in candidates),
            "evidence_parse_error": ev.trace.get("parse_error", ""),
        }
        if self.args.ideal and ev.evidence:
            from sciera.eval.metrics.generation import token_f1

            # the same evidence answered as a paragraph (the pipeline's own generator)
            ideal = pipe.generator.answer(question, ev.evidence, "ideal")
            record["ideal"] = ideal.text
            record["ideal_f1"] = token_f1(ideal.text, item.get("LONG_ANSWER") or "")
        record["seconds"] = time.perf_counter() - t0
        return record


def summarize(records: Sequence[dict[str, Any]], setting: str) -> dict[str, Any]:
    from sciera.eval.metrics.bioasq import macro_f1

    gold = [r["gold"] for r in records]
    pred = [r["pred"] for r in records]
    crs = [r["cr"] for r in records if r["evidence_ids"]]
    out: dict[str, Any] = {
        "n": len(records),
        "accuracy": sum(g == p for g, p in zip(gold, pred, strict=True)) / len(records),
        "macro_f1": macro_f1(gold, pred, LABELS),  # "refused"/"degraded" count as wrong
        "refusal_rate": sum(p == "refused" for p in pred) / len(records),
        "degraded_rate": sum(p == "degraded" for p in pred) / len(records),
        # CR of empty evidence is the passage token count (finite by convention); a mean
        # over refusals would mostly measure how often the extractor refused
        "mean_cr": statistics.fmean(crs) if crs else None,
        "with_evidence": len(crs),
        "judged_insufficient": sum(r["sufficient"] is False for r in records) / len(records),
        "mean_seconds": statistics.fmean(r["seconds"] for r in records),
        "predicted": {c: pred.count(c) for c in sorted(set(pred))},
    }
    if setting == "retrieval":
        out["evidence_recall"] = statistics.fmean(r["own_in_evidence"] for r in records)
        out["first_stage_recall"] = statistics.fmean(r["own_in_candidates"] for r in records)
    ideal = [r for r in records if "ideal_f1" in r]
    if ideal:
        out["ideal_token_f1"] = statistics.fmean(r["ideal_f1"] for r in ideal)
        out["ideal_mean_words"] = statistics.fmean(len(r["ideal"].split()) for r in ideal)
    if any(r["sufficient"] is not None for r in records):
        out["by_sufficiency"] = by_sufficiency(records)
    return out


def by_sufficiency(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Accuracy (and ideal-answer token F1) where the extractor judged its evidence
    sufficient and where it judged it insufficient: does its own judgment predict the
    answer? Records without a judgment are left out."""
    out: dict[str, dict[str, Any]] = {}
    for name, judged in (("sufficient", True), ("insufficient", False)):
        rows = [r for r in records if r["sufficient"] is judged]
        if not rows:
            continue
        out[name] = {
            "n": len(rows),
            "accuracy": sum(r["gold"] == r["pred"] for r in rows) / len(rows),
        }
        ideal = [r["ideal_f1"] for r in rows if "ideal_f1" in r]
        if ideal:
            out[name]["ideal_token_f1"] = statistics.fmean(ideal)
    return out


def run_questions(
    args: argparse.Namespace,
    runner: Runner,
    pmids: Sequence[str],
    data: Mapping[str, Any],
    retriever: Any,
    done: dict[tuple[str, str, str], dict[str, Any]],
    key: str,
    log: Any,
    started: float,
) -> str:
    """Question by question, every (setting, extractor) pending for it, so a partial run
    still compares the extractors on the same questions; returns why it stopped early."""
    for i, pmid in enumerate(pmids):
        pending = [
            (setting, name)
            for setting in args.settings
            for name in args.extractors
            if (setting, name, pmid) not in done
        ]
        if not pending:
            continue
        if (
            args.limit_minutes is not None
            and time.perf_counter() - started >= 60 * args.limit_minutes
        ):
            return f"time budget of {args.limit_minutes} min reached"
        for setting, name in pending:
            rec = runner.answer(setting, name, pmid, data[pmid], retriever)
            rec["config"] = key
            log.write(json.dumps(rec) + "\n")
            log.flush()
            done[(setting, name, pmid)] = rec
            print(
                f"[{setting}/{name}] {i + 1}/{len(pmids)} {pmid}: gold {rec['gold']} "
                f"pred {rec['pred']} cr {rec['cr']:.1f} {rec['seconds']:.1f}s",
                file=sys.stderr,
                flush=True,
            )
    return ""


def paired_questions(
    done: Mapping[tuple[str, str, str], dict[str, Any]],
    pmids: Sequence[str],
    setting: str,
    extractors: Sequence[str],
) -> list[str]:
    """The questions every extractor answered in ``setting``, in subset order."""
    return [p for p in pmids if all((setting, n, p) in done for n in extractors)]


def paired_results(
    done: Mapping[tuple[str, str, str], dict[str, Any]],
    pmids: Sequence[str],
    settings: Sequence[str],
    extractors: Sequence[str],
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Per setting, every extractor summarized over the questions all of them answered."""
    results: dict[str, dict[str, Any]] = {}
    paired: dict[str, int] = {}
    for setting in settings:
        qs = paired_questions(done, pmids, setting, extractors)
        paired[setting] = len(qs)
        if qs:
            results[setting] = {
                n: summarize([done[(setting, n, p)] for p in qs], setting) for n in extractors
            }
            for n in extractors[1:]:
                results[setting][n][f"vs_{extractors[0]}"] = paired_tests(
                    [done[(setting, extractors[0], p)] for p in qs],
                    [done[(setting, n, p)] for p in qs],
                )
    return results, paired


def always_yes(
    done: Mapping[tuple[str, str, str], dict[str, Any]],
    pmids: Sequence[str],
    settings: Sequence[str],
    extractors: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """Per setting, the trivial answer "yes" to every question on the paired questions:
    gold label counts, its accuracy and macro-F1, and each extractor tested against it
    (exact McNemar on right/wrong answers)."""
    from sciera.eval.metrics.bioasq import macro_f1
    from sciera.eval.significance import mcnemar_exact

    out: dict[str, dict[str, Any]] = {}
    for setting in settings:
        qs = paired_questions(done, pmids, setting, extractors)
        if not qs:
            continue
        rows = {n: [done[(setting, n, p)] for p in qs] for n in extractors}
        gold = [r["gold"] for r in rows[extractors[0]]]
        trivial = [g == "yes" for g in gold]
        out[setting] = {
            "n": len(qs),
            "gold": {c: gold.count(c) for c in LABELS},
            "accuracy": sum(trivial) / len(gold),
            "macro_f1": macro_f1(gold, ["yes"] * len(gold), LABELS),
            "extractors_vs_always_yes": {
                n: mcnemar_exact(trivial, [r["pred"] == r["gold"] for r in rs]).as_dict()
                for n, rs in rows.items()
            },
        }
    return out


def paired_tests(base: Sequence[dict[str, Any]], other: Sequence[dict[str, Any]]) -> dict:
    """``other`` against ``base`` on the same questions: exact McNemar on right/wrong
    answers and, with ideal answers, a paired randomization test on their token F1."""
    from sciera.eval.significance import mcnemar_exact, paired_randomization

    out = {
        "accuracy": mcnemar_exact(
            [r["gold"] == r["pred"] for r in base], [r["gold"] == r["pred"] for r in other]
        ).as_dict()
    }
    pairs = [
        (a["ideal_f1"], b["ideal_f1"])
        for a, b in zip(base, other, strict=True)
        if "ideal_f1" in a and "ideal_f1" in b
    ]
    if pairs:
        out["ideal_token_f1"] = paired_randomization(*zip(*pairs, strict=True)).as_dict()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--n", type=int, default=100, help="Questions in the seeded subset.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--settings", nargs="+", default=["reasoning", "retrieval"])
    ap.add_argument(
        "--extractors",
        nargs="+",
        default=list(EXTRACTORS),
        type=extractor_name,
        help="full, vanilla, rational, deepera, or deepera@TAU (DeepEra at threshold TAU).",
    )
    ap.add_argument("--first-stage", default="bm25", choices=["bm25", "dense", "hybrid"])
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--top-k", type=int, default=3)
    ap.add_argument("--tau", type=float, default=0.8)
    ap.add_argument("--passage-words", type=int, default=200)
    ap.add_argument("--refuse", choices=["empty", "insufficient"], default="empty")
    ap.add_argument("--ideal", action="store_true", help="Also score ideal answers (token F1).")
    ap.add_argument("--preset", default=None)
    ap.add_argument("--limit-minutes", type=float, help="Start no new question after this.")
    ap.add_argument(
        "--report-only", action="store_true", help="Answer nothing; report the rows on disk."
    )
    ap.add_argument("--work", type=Path, default=Path("/tmp/sciera-bench/pubmedqa"))
    ap.add_argument("--jsonl", type=Path, default=ROOT / "benchmarks/results/pubmedqa_answer.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/pubmedqa_answer.json")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from sciera.datasets.loaders import seeded_subset

    data = json.loads(args.data.read_text(encoding="utf-8"))
    pmids = seeded_subset(sorted(data), args.n, args.seed)
    runner = Runner(args)
    key = config_key(args, runner.llm.model_id, runner.settings.deepera.scorer_model)
    done = load_done(args.jsonl, key)
    retriever = None
    if "retrieval" in args.settings and not args.report_only:
        retriever = open_corpus(data, args.work, runner.settings, args.first_stage)

    args.jsonl.parent.mkdir(parents=True, exist_ok=True)
    started, load_start = time.perf_counter(), os.getloadavg()[0]
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop cleanly, still report
    stopped = ""
    try:
        if args.report_only:
            stopped = "report only"
        else:
            from sciera.eval.resultlog import unpack_for_append

            with unpack_for_append(args.jsonl).open("a", encoding="utf-8") as log:
                stopped = run_questions(
                    args, runner, pmids, data, retriever, done, key, log, started
                )
    except KeyboardInterrupt:
        stopped = "interrupted"
    results, paired = paired_results(done, pmids, args.settings, args.extractors)
    trivial = always_yes(done, pmids, args.settings, args.extractors)

    out = {
        "benchmark": "pubmedqa_answer",
        "data": "pqal_dev.json (PQA-L, 500 labelled questions outside the official test split)",
        "subset": {"n": len(pmids), "seed": args.seed, "pmids": pmids},
        "config": {**{k: str(v) for k, v in vars(args).items()}, "key": key},
        "model": runner.llm.model_id,
        "llm_threads": runner.settings.llm.threads,  # SCIERA_LLM__THREADS; seconds depend on it
        "load_average": {"start": load_start, "end": os.getloadavg()[0]},
        "seconds": time.perf_counter() - started,
        "stopped": stopped or "all questions done",
        "questions_paired": paired,
        "results": results,
        "always_yes": trivial,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    for setting, per in results.items():
        print(f"\n{setting}: extractor  acc  macroF1  refused  CR  recall  p(acc vs first)")
        for name, m in per.items():
            recall = f"{m['evidence_recall']:.2f}" if "evidence_recall" in m else "-"
            cr = "-" if m["mean_cr"] is None else f"{m['mean_cr']:.2f}"
            vs = next((v for k, v in m.items() if k.startswith("vs_")), None)
            p = "-" if vs is None else f"{vs['accuracy']['p_value']:.3g}"
            print(
                f"  {name:11s} {m['accuracy']:.3f}  {m['macro_f1']:.3f}  "
                f"{m['refusal_rate']:.2f}  {cr}  {recall}  {p}"
            )
        t = trivial[setting]
        print(f"  always yes  {t['accuracy']:.3f}  {t['macro_f1']:.3f}  gold {t['gold']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
