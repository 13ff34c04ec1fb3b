"""Run an experiment: every pipeline x repeat x question, saved so it can resume.

    from sciera.eval.experiment import load_experiment
    from sciera.eval.runner import run_experiment
    run_experiment(load_experiment("benchmarks/experiments/scifact_first_stage.yaml"), "results/sf")

Layout of the results directory::

    manifest.json            experiment spec, fingerprint, seeds, models, finished repeats
    dataset.json             queries, judgments, answers, labels, distractors, settings
    runs/<pipeline>/r<i>/
        results.jsonl        one fsync'd line per finished question (the resume log)
        run.trec             final ranking (after reranking), TREC run format
        first_stage.trec     first-stage ranking
        answers.jsonl        generated answers (pipelines with a generator)
        traces.jsonl         reranker traces (DeepEra: every candidate's score and fate)

First-stage searches run in batches of ``BATCH`` questions (seconds per question =
batch time / batch size); everything after runs question by question. An agent pipeline
(``agent:``) runs its own searches per question instead (:mod:`sciera.eval.agent_query`).

A question is done when its line is in ``results.jsonl``; a restarted run skips
done questions (never writing a line twice) and continues with the next one. Each line
records the digest of the question's inputs (:meth:`EvalDataset.input_key`): if the
dataset has changed under a logged question since (a rebuilt SSLI set with the same ids),
the run stops with an error instead of mixing old and new results.
Each repeat r runs with seed ``seeds[r]``; its LLM is cached per seed (see
:mod:`sciera.llm.metered`), so re-running reuses every cached call.

Rankings are stored at the dataset's unit: documents (Max-P over passages,
BEIR) or passages (SSLI, PubMedQA), and scored with trec_eval semantics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciera.datasets.loaders import EvalDataset, load_dataset
from sciera.errors import ScieraError
from sciera.eval.aggregate import JUDGE_STAGE
from sciera.eval.experiment import Experiment, ExperimentPipeline
from sciera.eval.metrics.ranking import neutral_order
from sciera.eval.resultlog import QueryLog
from sciera.eval.runstore import (
    VERIFIER_TAG,
    mark_repeat_done,
    prepare_results_dir,
    write_repeat_outputs,
)
from sciera.eval.subcorpus import build_subcorpus
from sciera.executor import Executor
from sciera.llm.metered import MeteredLLM, SeedTagged
from sciera.pipeline import Pipeline, answer_json, build_pipeline
from sciera.settings import Settings, with_overrides
from sciera.types import Ranking, ScoredPassage

logger = logging.getLogger(__name__)

LLMFactory = Callable[[Settings, int], Any]
"""(settings, seed) -> an LLM; the default builds the configured backend, seed-tagged, cached."""
BATCH = 16  # questions per batched first-stage search
Progress = Callable[[str, int, int], None]
"""(label "pipeline r<i>", questions done, total) after each question."""


def default_llm(settings: Settings, seed: int) -> Any:
    from sciera.llm.cache import CachedLLM
    from sciera.llm.registry import CACHE_FILE, make_backend

    seeded = settings.model_copy(update={"llm": settings.llm.model_copy(update={"seed": seed})})
    inner = SeedTagged(make_backend(seeded), seed)
    if not settings.llm.cache:
        return inner
    return CachedLLM(inner, settings.home / CACHE_FILE)


@dataclass
class RunSummary:
    out_dir: Path
    ran: dict[str, int] = field(default_factory=dict)  # "pipeline/r0" -> questions run now
    skipped: dict[str, int] = field(default_factory=dict)  # ... already done before


@dataclass
class _Stages:
    """One experiment pipeline, built: the answering pipeline, or an agent in its place."""

    spec: ExperimentPipeline
    pipeline: Pipeline | None = None
    agent: Any = None
    llm: MeteredLLM | None = None
    judges: list[tuple[str, Any, MeteredLLM]] = field(default_factory=list)


class Retrievers:
    """First-stage retrievers opened once and shared by every pipeline that names them
    with the same settings (a pipeline's own ``settings:`` may name another embedder)."""

    def __init__(
        self, corpus: Path | None, settings: Settings, doc_ids: frozenset[str] | None = None
    ) -> None:
        self.corpus, self.settings, self.doc_ids = corpus, settings, doc_ids
        self._open: dict[tuple[str, str], Any] = {}
        self._embedders: dict[str, Any] = {}

    def get(self, name: str, settings: Settings | None = None) -> Any:
        if name == "candidates":
            return None
        settings = settings or self.settings
        key = (name, settings.model_dump_json(exclude={"llm", "answer", "verify", "deepera"}))
        if key not in self._open:
            from sciera.retrieve import open_retriever

            if self.corpus is None:
                raise ScieraError(f"retriever {name!r} needs a corpus directory")
            emb = self._embedder(settings) if name in ("dense", "hybrid") else None
            self._open[key] = open_retriever(
                self.corpus, name, settings, embedder=emb, doc_ids=self.doc_ids
            )
        return self._open[key]

    def _embedder(self, settings: Settings) -> Any:
        key = settings.embed.model_dump_json()
        if key not in self._embedders:
            from sciera.embed.registry import create_embedder

            self._embedders[key] = create_embedder(settings.embed, settings.home)
        return self._embedders[key]


def experiment_settings(exp: Experiment) -> Settings:
    from sciera.settings import load_settings

    try:
        return load_settings(exp.preset, **exp.settings)
    except Exception as exc:  # pydantic ValidationError or a bad preset
        first = str(exc).splitlines()
        raise ScieraError(f"settings: {' '.join(first[:3])}") from None


def run_experiment(
    exp: Experiment,
    out_dir: str | Path,
    *,
    repeats: int | None = None,
    settings: Settings | None = None,
    llm_factory: LLMFactory | None = None,
    progress: Progress | None = None,
    executor: Executor | None = None,
) -> RunSummary:
    """Run (or resume) ``exp`` into ``out_dir``; ``repeats`` overrides the experiment's.
    Without ``executor`` the questions run here one by one; with one (e.g. the Ray
    cluster's, :class:`sciera.scale.executor.RayExecutor`) they run in shards of
    ``executor.shard_size`` on its workers (:class:`EvalTask`); the log, outputs and
    resume are the same."""
    ds = exp.dataset
    data = load_dataset(ds.type, ds.path, corpus=exp.corpus, **ds.loader_options())
    if not data.queries:
        raise ScieraError(f"{ds.path}: the dataset has no judged question")
    settings = format_settings(settings or experiment_settings(exp), exp, data)
    for i, p in enumerate(exp.pipelines):
        if p.retriever == "candidates" and not data.has_candidates:
            raise ScieraError(
                f"pipelines[{i}].retriever: 'candidates' needs a dataset with candidate pools "
                f"(ssli, pubmedqa), not {ds.type!r}"
            )
    plan = {p.name: repeats or exp.repeats_of(p) for p in exp.pipelines}
    seeds_needed = max(plan.values())
    if exp.seeds is not None and len(exp.seeds) < seeds_needed:
        raise ScieraError(f"seeds: {len(exp.seeds)} seeds for {seeds_needed} repeats")
    out = Path(out_dir)
    identities = {p.name: pipeline_identity(p, settings) for p in exp.pipelines}
    sub = build_subcorpus(ds.subcorpus, data, exp.corpus, settings) if ds.subcorpus else None
    record = sub.record() if sub is not None else None
    prepare_results_dir(out, exp, data, plan, identities, subcorpus=record)
    summary = RunSummary(out)
    doc_ids = sub.doc_ids if sub is not None else None
    retrievers = Retrievers(exp.corpus, settings, doc_ids)
    factory = llm_factory or default_llm
    pool = _worker_pool(executor, exp, settings, data, factory, doc_ids)
    _run_all(
        exp, data, out, plan, identities, settings, retrievers, factory, pool, summary, progress
    )
    return summary


def format_settings(settings: Settings, exp: Experiment, data: EvalDataset) -> Settings:
    """``settings`` as the dataset's format asks: yes/no questions without a "maybe"
    answer (BioASQ's) get yes or no (``answer.allow_maybe`` off), unless the experiment's
    settings name ``allow_maybe`` (a pipeline's ``generator_params`` win over both)."""
    named = "allow_maybe" in (exp.settings.get("answer") or {})
    if named or not data.yesno_answers or "maybe" in data.yesno_answers:
        return settings
    answer = settings.answer.model_copy(update={"allow_maybe": False})
    return settings.model_copy(update={"answer": answer})


@dataclass(frozen=True)
class EvalTask:
    """An experiment's questions as executor shards ``(pipeline, seed, question ids)``:
    each worker opens the retrievers once and keeps the pipeline it was last asked for
    (retriever, models, LLM: each worker loads the embedded model for itself, or uses the
    OpenAI-compatible server pool the settings name), and answers a shard with
    :func:`run_questions`, so a record is what the single-process run writes. The dataset
    travels with the task (once through a cluster's object store)."""

    exp: Experiment
    settings: Settings
    data: EvalDataset
    factory: LLMFactory = default_llm
    doc_ids: frozenset[str] | None = None
    """The sub-corpus the first stages search (``dataset.subcorpus``); None: all of it."""

    def setup(self, threads: int | None) -> Callable[[tuple[str, int, list[str]]], list[dict]]:
        settings = self.settings
        if threads is not None:  # the worker's CPUs are its model threads
            llm = settings.llm.model_copy(update={"threads": threads})
            settings = settings.model_copy(update={"llm": llm})
        return _EvalWorker(self, settings, Retrievers(self.exp.corpus, settings, self.doc_ids))


class _EvalWorker:
    def __init__(self, task: EvalTask, settings: Settings, retrievers: Retrievers) -> None:
        self.task, self.settings, self.retrievers = task, settings, retrievers
        self.built: tuple[tuple[str, int], _Stages] | None = None  # one pipeline at a time

    def __call__(self, shard: tuple[str, int, list[str]]) -> list[dict]:
        pipeline, seed, qids = shard
        exp = self.task.exp
        if self.built is None or self.built[0] != (pipeline, seed):
            self.built = None  # free the previous pipeline's models first
            spec = next(p for p in exp.pipelines if p.name == pipeline)
            stages = _build(spec, exp, self.settings, self.retrievers, self.task.factory, seed)
            self.built = ((pipeline, seed), stages)
        return list(run_questions(self.built[1], self.task.data, qids, self.settings))


class _Sharded:
    """The questions of one repeat, in shards on ``executor``'s workers."""

    def __init__(self, executor: Executor, task: EvalTask) -> None:
        self.executor, self.task = executor, task

    def run(self, pipeline: str, repeat: int, qids: list[str]) -> Iterator[dict[str, Any]]:
        """Records of ``qids`` for ``pipeline`` repeat ``repeat``, shard by shard as they
        finish (not in ``qids`` order)."""
        seed = self.task.exp.seed_of(repeat)
        size = self.executor.shard_size
        shards = ((pipeline, seed, qids[i : i + size]) for i in range(0, len(qids), size))
        for _, records in self.executor.map(self.task, shards):
            yield from records


def _worker_pool(
    executor: Executor | None,
    exp: Experiment,
    settings: Settings,
    data: EvalDataset,
    factory: LLMFactory,
    doc_ids: frozenset[str] | None = None,
) -> _Sharded | None:
    if executor is None:
        return None
    if exp.corpus is None and any(p.retriever != "candidates" for p in exp.pipelines):
        raise ScieraError("an executor's workers need the experiment's corpus (a path they see)")
    return _Sharded(executor, EvalTask(exp, settings, data, factory, doc_ids))


def _run_all(
    exp: Experiment,
    data: EvalDataset,
    out: Path,
    plan: dict[str, int],
    identities: dict[str, str],
    settings: Settings,
    retrievers: Retrievers,
    factory: LLMFactory,
    pool: Any,
    summary: RunSummary,
    progress: Progress | None,
) -> None:
    """Run each repeat's missing questions; a repeat this run made whole records its
    pipeline's model identity."""
    for p in exp.pipelines:
        for r in range(plan[p.name]):
            seed = exp.seed_of(r)
            key = f"{p.name}/r{r}"
            folder = out / "runs" / p.name / f"r{r}"
            with QueryLog.open(folder / "results.jsonl") as log:
                _check_inputs(log, data)
                todo = [q for q in data.queries if q not in log]
                summary.skipped[key] = len(data.queries) - len(todo)
                summary.ran[key] = 0
                if todo:
                    if pool is not None:  # on the cluster's workers, shard by shard
                        records = pool.run(p.name, r, todo)
                    else:
                        stages = _build(p, exp, settings, retrievers, factory, seed)
                        records = run_questions(stages, data, todo, settings)
                    for rec in records:
                        log.append(rec)
                        summary.ran[key] += 1
                        if progress is not None:
                            progress(f"{p.name} r{r}", len(log.records), len(data.queries))
                write_repeat_outputs(folder, p.name, r, log.records, data)
            whole = summary.skipped[key] == 0
            model = stages_model(p, factory, settings, seed)
            mark_repeat_done(out, p.name, r, seed, model, identities[p.name] if whole else None)


def pipeline_identity(p: ExperimentPipeline, settings: Settings) -> str:
    """What a pipeline's results depend on beyond its spec and LLM: the files of the
    models its reranker loads by name (see :func:`~sciera.rerank.registry.reranker_identity`)
    and, with a verify stage, its verifier's (``verifier:<digest>`` after a space)."""
    from sciera.verify.network import verifier_identity

    own = with_overrides(settings, p.settings)
    rerank = ""
    if p.reranker is not None:
        from sciera.rerank.registry import reranker_identity

        rerank = reranker_identity(p.reranker, own, p.reranker_params)
    if p.verify is None or p.agent is not None:
        return rerank
    return f"{rerank} {VERIFIER_TAG}{verifier_identity(p.verify.model, own.home)}".lstrip()


def run_questions(
    stages: _Stages, data: EvalDataset, qids: list[str], settings: Settings
) -> Iterator[dict[str, Any]]:
    """Each question's result record, in ``qids`` order (first stages batched)."""
    for start in range(0, len(qids), BATCH):
        batch = qids[start : start + BATCH]
        first, seconds = _first_stage(stages, data, batch)
        for qid, ranking in zip(batch, first, strict=True):
            if stages.agent is not None:  # it searches by itself
                yield _run_agent(stages, data, qid)
            else:
                yield _run_query(stages, data, qid, ranking, seconds)


def _check_inputs(log: QueryLog, data: EvalDataset) -> None:
    """Refuse to resume over questions whose logged inputs differ from the dataset's now
    (lines written before inputs were recorded are taken as they are)."""
    changed = [
        q
        for q, rec in log.records.items()
        if q in data.queries and rec.get("input") not in (None, data.input_key(q))
    ]
    if changed:
        raise ScieraError(
            f"{log.path}: {len(changed)} logged question(s) were run on other inputs than "
            f"the dataset now holds (first: {changed[0]!r}); the dataset changed since. "
            "Use another --out, or delete this results directory to run it again"
        )


def stages_model(p: ExperimentPipeline, factory: LLMFactory, settings: Settings, seed: int) -> str:
    """The LLM model id recorded in the manifest ("" for pipelines without an LLM)."""
    if not p.uses_llm:
        return ""
    llm = with_overrides(settings, p.settings).llm
    return f"{llm.backend}:{llm.model}#seed={seed}"


def _build(
    p: ExperimentPipeline,
    exp: Experiment,
    settings: Settings,
    retrievers: Retrievers,
    factory: LLMFactory,
    seed: int,
) -> _Stages:
    settings = with_overrides(settings, p.settings)  # the pipeline's own overrides
    if p.agent is not None:
        return _build_agent(p, exp, settings, factory, seed)
    llm = MeteredLLM(factory(settings, seed)) if p.uses_llm else None
    retriever = retrievers.get(p.retriever, settings)
    # a verify stage over a searched corpus reads the sentences its store keeps, as
    # `sciera verify` does (a candidate pool's come with the dataset: _run_query)
    store = exp.corpus if p.verify is not None and p.retriever != "candidates" else None
    pipeline = build_pipeline(p.stages(), settings, corpus=store, retriever=retriever, llm=llm)
    stages = _Stages(p, pipeline, llm=pipeline.llm)
    if p.generator is not None:
        stages.judges = _judges(exp, settings, stages.llm, factory, seed)
    return stages


def _build_agent(
    p: ExperimentPipeline, exp: Experiment, settings: Settings, factory: LLMFactory, seed: int
) -> _Stages:
    """An agent pipeline: the agent searches the corpus itself (no shared retriever), with
    the pipeline's first stage and a context long enough for its growing conversation."""
    from sciera.research.api import RESEARCH_N_CTX
    from sciera.research.registry import make_agent

    settings = settings.model_copy(
        update={
            "retrieve": settings.retrieve.model_copy(update={"retriever": p.retriever}),
            "llm": settings.llm.model_copy(
                update={"n_ctx": max(settings.llm.n_ctx, RESEARCH_N_CTX)}
            ),
        }
    )
    llm = MeteredLLM(factory(settings, seed))
    agent = make_agent(p.agent or "", settings, corpus=exp.corpus, llm=llm, **p.agent_params)
    return _Stages(p, agent=agent, llm=llm, judges=_judges(exp, settings, llm, factory, seed))


def _judges(
    exp: Experiment, settings: Settings, llm: MeteredLLM | None, factory: LLMFactory, seed: int
) -> list[tuple[str, Any, MeteredLLM]]:
    """The experiment's judges: each on its own model, or on the pipeline's metered apart."""
    from sciera.eval.judges import JUDGES

    out = []
    for j in exp.judges:
        if j.llm:  # a judge model of its own
            merged = {**settings.llm.model_dump(), **j.llm}
            judge_settings = settings.model_copy(
                update={"llm": type(settings.llm).model_validate(merged)}
            )
            judge_llm = MeteredLLM(factory(judge_settings, seed))
        else:  # the pipeline's (already loaded) model, metered apart
            assert llm is not None
            judge_llm = MeteredLLM(llm.inner)
        judge = JUDGES[j.name](judge_llm, samples=j.samples, **j.options())
        out.append((j.name, judge, judge_llm))
    return out


@contextmanager
def _metered(
    cost: dict[str, dict[str, float]], name: str, llm: MeteredLLM | None
) -> Iterator[None]:
    """Time the block and count the LLM calls and tokens it made, as ``cost[name]``."""
    from sciera.llm.accounting import stage

    before = llm.totals() if llm is not None else {}
    start = time.perf_counter()
    with stage(name):
        yield
    row: dict[str, float] = {"seconds": time.perf_counter() - start}
    if llm is not None:
        after = llm.totals()
        row.update({k: after[k] - before[k] for k in after})
    cost[name] = row


def unit_scores(ranking: Ranking, unit: str, depth: int | None) -> list[list[Any]]:
    """``[[id, score], ...]`` at the dataset's unit (documents via Max-P), best first."""
    if unit == "document":
        from sciera.retrieve.maxp import maxp

        return [[it.passage.doc_id, it.score] for it in maxp(ranking, depth)]
    items = ranking.items if depth is None else ranking.items[:depth]
    return [[it.passage_id, it.score] for it in items]


def _first_stage(st: _Stages, data: EvalDataset, qids: list[str]) -> tuple[list[Ranking], float]:
    """First-stage rankings of ``qids`` (one batched search) and the seconds per question."""
    p = st.spec
    start = time.perf_counter()
    retriever = st.pipeline.retriever if st.pipeline is not None else None
    if st.agent is not None:
        return [Ranking(data.queries[q], (), "agent") for q in qids], 0.0
    if retriever is None:
        out = []
        for qid in qids:
            pool = data.candidates.get(qid, ())
            if p.pool_order == "neutral":  # cut as listed, then hide the order
                by_id = {ps.passage_id: ps for ps in pool[: p.depth]}
                order = neutral_order(qid, dict.fromkeys(by_id, 0.0))
                items = tuple(ScoredPassage(by_id[d], 1.0, i + 1) for i, d in enumerate(order))
            else:
                n = len(pool)
                items = tuple(ScoredPassage(ps, float(n - i), i + 1) for i, ps in enumerate(pool))
                items = items[: p.depth]
            out.append(Ranking(data.queries[qid], items, "candidates"))
    else:
        k = 10 * p.depth if data.unit == "document" else p.depth
        out = retriever.search_many([data.queries[q] for q in qids], k)
    return out, (time.perf_counter() - start) / max(len(qids), 1)


PIPELINE_COST = ("rerank", "verify", "evidence", "generate")
"""The pipeline's stage costs a result line keeps (its first stage is timed per batch)."""


def _run_query(
    st: _Stages, data: EvalDataset, qid: str, ranking: Ranking, first_seconds: float
) -> dict[str, Any]:
    """One question through the pipeline (its first-stage candidates given), as a record."""
    assert st.pipeline is not None
    pipe, query = st.pipeline, data.queries[qid]
    rec: dict[str, Any] = {"qid": qid, "setting": data.setting(qid), "input": data.input_key(qid)}
    rec["first"] = unit_scores(ranking, data.unit, st.spec.depth)
    # a candidate pool's abstracts, as sentence lists (a searched corpus has its own)
    own = data.sentences.get(qid) if st.spec.retriever == "candidates" else None
    qtype = question_type_of(st.spec, data, qid)
    if st.spec.rerank_unit == "document" and data.unit == "document":
        from sciera.retrieve.maxp import maxp

        ranking = maxp(ranking, st.spec.depth)  # each document as its best passage
    result = pipe.run(query, qtype, candidates=ranking, sentences=_Given(own) if own else None)
    cost = {"first_stage": {"seconds": first_seconds}}
    cost.update({k: v for k, v in result.cost.items() if k in PIPELINE_COST})
    rec["cost"] = cost  # judges add their rows to it
    if result.reranked is not None:
        if result.traces.get("rerank"):
            rec["trace"] = result.traces["rerank"]
        rec["rerank_input"] = len(unit_scores(ranking.top(pipe.rerank_depth), data.unit, None))
        rec["reranked"] = unit_scores(result.final, data.unit, None)
    if result.evidence is not None:
        ev = result.evidence
        rec["evidence"] = [
            {"passage_id": e.passage.passage_id, "score": e.score, "summary": e.summary}
            for e in ev.evidence
        ]
        rec["evidence_text"] = ev.text
        rec["evidence_sources"] = [it.passage.contents for it in result.kept]
        if ev.trace:
            rec["evidence_trace"] = dict(ev.trace)
    if result.verification is not None:
        from sciera.verify.stage import scifact_prediction, verification_json

        rec["verification"] = scifact_prediction(qid, result.verification)
        rec["verify"] = {
            k: v for k, v in verification_json(result.verification).items() if k != "abstracts"
        }
    if result.answer is not None:
        rec["answer"] = answer_json(result.answer, trace=False)
        _judge(st, data, qid, result.answer.text, rec)
    return rec


def question_type_of(spec: ExperimentPipeline, data: EvalDataset, qid: str) -> str | None:
    """The answer type a question is asked with: the pipeline's own (``generator_params``),
    else the one the dataset's format gives it, else ``None`` (detected from the text)."""
    return spec.generator_params.get("question_type") or data.question_types.get(qid)


@dataclass(frozen=True)
class _Given:
    """A question's own abstracts (``EvalDataset.sentences``) as the verify stage's source."""

    abstracts: Any

    def sentences(self, doc_ids: Any) -> dict[str, Any]:
        return {d: self.abstracts[d] for d in doc_ids if d in self.abstracts}


def _run_agent(st: _Stages, data: EvalDataset, qid: str) -> dict[str, Any]:
    from sciera.eval.agent_query import agent_record

    rec: dict[str, Any] = {"qid": qid, "setting": data.setting(qid), "input": data.input_key(qid)}
    cost: dict[str, dict[str, float]] = {}
    with _metered(cost, "agent", st.llm):
        run = st.agent.run(data.queries[qid])
    rec.update(agent_record(run, data.unit))
    rec["cost"] = cost
    _judge(st, data, qid, run.answer.text, rec)
    return rec


def _judge(st: _Stages, data: EvalDataset, qid: str, answer: str, rec: dict[str, Any]) -> None:
    """Every judge's verdict on ``answer`` against the first reference, into ``rec``
    (judges that need a reference skip questions without one); each judge's seconds and
    tokens go to ``rec["cost"]["judge:<name>"]``."""
    refs = data.answers.get(qid, ())
    cost = rec.setdefault("cost", {})
    judged = {}
    for name, judge, judge_llm in st.judges:
        if refs or not judge.needs_reference:
            with _metered(cost, f"{JUDGE_STAGE}{name}", judge_llm):
                verdict = judge.judge(data.queries[qid], refs[0] if refs else "", answer)
            judged[name] = verdict.to_dict()
    if judged:
        rec["judges"] = judged
