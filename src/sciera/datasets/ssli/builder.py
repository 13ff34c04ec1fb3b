"""Orchestration of a SciRAG-SSLI build (Algorithm 2), resumable step by step.

Files in the output folder::

    build.json        the options (a rerun with other options is refused)
    selection.json    step 1: selected documents/passages (or BEIR questions), written atomically
    extract.jsonl     step 2: one line per passage (notes or the error)
    qa.jsonl          step 3: one line per passage (accepted and rejected pairs)
    contexts.jsonl    steps 4-5: one line per question holding all its instances
    instances.jsonl   the dataset (rebuilt from contexts.jsonl at the end of every run)
    stats.json        counts per step, rejection reasons, timings, LLM usage

Every ``*.jsonl`` line is appended and fsynced after its work is done, so a run that is
killed loses at most the item in flight; the next run skips every item already logged
(a half-written last line is discarded). A question's logged LLM distractors are checked
again against the current distractor rules when a run resumes: if one fails (the rules
became stricter since it was written), the question's contexts are made again and the new
line supersedes the old one, which stays in the log (the latest line of a question wins).
LLM calls go through the caller's LLM, which :func:`sciera.llm.make_llm` wraps in the
persistent response cache, so distractors that still pass come back from it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.datasets.ssli import contexts as ctx
from sciera.datasets.ssli.config import BuildConfig
from sciera.datasets.ssli.io import INSTANCES_FILE, STATS_FILE, JsonlLog, write_instances
from sciera.datasets.ssli.io import instance_from_dict as _instance
from sciera.datasets.ssli.questions import QuestionSource
from sciera.datasets.ssli.sharded import CONTEXTS, PASSAGES, ShardedSteps, ShardResult
from sciera.datasets.ssli.specificity import check_set
from sciera.datasets.ssli.stats import build_stats
from sciera.datasets.ssli.validate import Rejection, answer_key
from sciera.executor import Executor
from sciera.types import Candidate, Passage, QAInstance

if TYPE_CHECKING:
    from sciera.embed.base import Embedder
    from sciera.llm.base import LLM
    from sciera.retrieve.base import Retriever
    from sciera.settings import Settings

logger = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]
"""``progress(step, done, total)``."""


def _noop(step: str, done: int, total: int) -> None:
    return None


class SSLIBuilder:
    """Builds ``out_dir`` from the corpus directory ``corpus_dir`` (ingested and indexed).

    ``llm``, ``retriever`` and ``embedder`` default to the ones ``settings`` configure.
    With ``executor`` (e.g. :class:`sciera.scale.executor.RayExecutor`), the questions and
    contexts are made in shards on its workers (:mod:`sciera.datasets.ssli.sharded`);
    without, here, item by item.
    """

    def __init__(
        self,
        corpus_dir: str | Path,
        out_dir: str | Path,
        config: BuildConfig,
        *,
        settings: Settings | None = None,
        llm: LLM | None = None,
        retriever: Retriever | None = None,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        executor: Executor | None = None,
    ) -> None:
        from sciera.settings import load_settings

        self.corpus_dir = Path(corpus_dir)
        self.out = Path(out_dir)
        self.config = config
        self.settings = settings or load_settings()
        self._llm, self._retriever, self._embedder = llm, retriever, embedder
        self.progress = progress or _noop
        self.executor = executor  # makes the questions and contexts in shards

    # -- lazily built dependencies -------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from sciera.embed.cache import with_cache
            from sciera.embed.registry import create_embedder

            # the selection embeds up to --pool documents: vectors `sciera index` made are reused
            self._embedder = with_cache(
                create_embedder(self.settings.embed, self.settings.home), self.settings
            )
        return self._embedder

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            from sciera.llm import make_llm

            self._llm = make_llm(self.settings)
        return self._llm

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            from sciera.retrieve import open_retriever

            embedder = self.embedder if self.config.retriever != "bm25" else None
            self._retriever = open_retriever(
                self.corpus_dir, self.config.retriever, self.settings, embedder
            )
        return self._retriever

    def cosine(self, anchor: str, texts: list[str]) -> list[float]:
        q = self.embedder.embed_queries([anchor])
        p = self.embedder.embed_passages(texts)
        return [float(x) for x in (p @ q[0])]

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Run (or resume) every step; returns the stats also written to ``stats.json``."""
        from sciera.corpus.store import PassageStore

        self.out.mkdir(parents=True, exist_ok=True)
        self._check_options()
        started = time.perf_counter()
        with PassageStore.open(self.corpus_dir) as store:
            source = QuestionSource(store, self.config, self.embedder_factory, self.progress)
            selection = source.select(self.out / "selection.json")
            workers = self._sharded()
            questions = source.questions(selection, self.out, self._llm_or_none(), workers)
            if workers is not None:
                workers.contexts(store, questions, JsonlLog(self.out / "contexts.jsonl"))
            else:
                self._contexts(store, questions)
            # the rule's index (built once per corpus, linear in its size): not built when
            # the rule is off, and then no specificity.json (`sciera dataset check` writes it)
            share = self.config.max_topic_share
            topics = source.topics if share is not None else None
        logged = JsonlLog(self.out / "contexts.jsonl").records
        latest = {r["qid"]: r for r in logged}
        order = {q["qid"]: i for i, q in enumerate(questions)}
        records = sorted(
            (r for r in latest.values() if r["qid"] in order), key=lambda r: order[r["qid"]]
        )
        instances = [_instance(d) for r in records for d in r["instances"]]
        write_instances(instances, self.out / INSTANCES_FILE)
        if topics is not None and share is not None:
            check_set(instances, topics, self.out, corpus=str(self.corpus_dir), max_share=share)
        stats = build_stats(self.out, selection, questions, records, self._llm_or_none())
        if "contexts" in stats:
            stats["contexts"]["made_again_after_rule_change"] = len(logged) - len(latest)
        if "qa" in stats:
            stats["qa"]["dropped_after_rule_change"] = source.dropped
            stats["qa"]["duplicates_of_earlier_passages"] = len(source.duplicates)
        stats["seconds_this_run"] = round(time.perf_counter() - started, 3)
        tmp = self.out / (STATS_FILE + ".tmp")
        tmp.write_text(json.dumps(stats, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, self.out / STATS_FILE)
        return stats

    def _sharded(self) -> ShardedSteps | None:
        if self.executor is None:
            return None
        task = BuildTask(str(self.corpus_dir), str(self.out), self.config, self.settings)
        return ShardedSteps(self.executor, task, self)

    def embedder_factory(self) -> Embedder:
        return self.embedder

    def _llm_or_none(self) -> LLM | None:
        return self.llm if self.config.uses_llm else None

    def _check_options(self) -> None:
        path = self.out / "build.json"
        if path.exists():
            self.config.check_resume(json.loads(path.read_text("utf-8"))["config"], self.out)
        data = {"config": self.config.to_dict(), "corpus": str(self.corpus_dir)}
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def _contexts(self, store: Any, questions: list[dict[str, Any]]) -> None:
        log = JsonlLog(self.out / "contexts.jsonl")
        todo = self.contexts_todo(store, questions, log)
        done = len(questions) - len(todo)
        for n, q in enumerate(todo):
            self.progress("contexts", done + n, len(questions))
            log.append(self.context_record(store, q))
        self.progress("contexts", len(questions), len(questions))

    def contexts_todo(
        self, store: Any, questions: list[dict[str, Any]], log: JsonlLog
    ) -> list[dict[str, Any]]:
        """The questions without a logged context line, or whose logged distractors fail
        the current rules (made again; the new line supersedes the old)."""
        done = {r["qid"]: r for r in log.records}
        todo = []
        for q in questions:
            if q["qid"] in done:
                failed = self._fails_current_rules(done[q["qid"]], store)
                if failed is None:
                    continue
                logger.warning(
                    "%s: a logged distractor fails the current rules (%s: %s); making its "
                    "contexts again",
                    q["qid"],
                    failed.reason,
                    failed.detail,
                )
            todo.append(q)
        return todo

    def context_record(self, store: Any, q: dict[str, Any]) -> dict[str, Any]:
        """One question's ``contexts.jsonl`` line: its instance in every setting (Base
        candidates; SSLI with the distractors injected) and the distractors' log. It
        depends on no other question, so workers can make lines in any order
        (:mod:`sciera.datasets.ssli.sharded`)."""
        from sciera.llm.accounting import stage

        t0 = time.perf_counter()
        gold = store.get_passages(q["gold_passage_ids"])
        ranking = self.retriever.search(q["question"], self.config.total + len(gold))
        base = ctx.base_candidates(ranking, gold, self.config.total)
        gold_ids = {g.passage_id for g in gold}
        extra, detail = [], {}
        if "ssli" in self.config.settings:
            with stage("ssli.distractors"):
                extra, detail = self._distractors(q, gold, base, gold_ids)
        seconds = round(time.perf_counter() - t0, 3)
        retrieved = [item.passage_id for item in ranking.items]
        gold_rank = min((retrieved.index(g) + 1 for g in gold_ids if g in retrieved), default=0)
        common = {**q["provenance"], "gold_retrieved_rank": gold_rank}
        common["timings"] = {**q["provenance"].get("timings", {}), "contexts_s": seconds}
        instances = []
        total = self.config.total
        for setting in self.config.settings:
            cands = base if setting == "base" else ctx.inject(base, extra, gold_ids, total)
            prov = common if setting == "base" else {**common, **detail}
            instances.append(self._instance(q, setting, cands, prov))
        return {"qid": q["qid"], "instances": instances, "distractors": detail}

    def _fails_current_rules(self, record: dict[str, Any], store: Any) -> Rejection | None:
        """The first logged LLM distractor of ``record`` the current rules reject, checked in
        the order they were accepted (so the duplicate rule sees the same earlier ones)."""
        if (record.get("distractors") or {}).get("distractor_source") != "llm":
            return None
        ssli = next((i for i in record["instances"] if i["setting"] == "ssli"), None)
        if ssli is None:
            return None
        gold_text = "\n".join(g.contents for g in store.get_passages(ssli["gold_passage_ids"]))
        key = answer_key(ssli["answer"], gold_text, ssli["question"])
        accepted: list[str] = []
        for c in ssli["candidates"]:
            if not c["is_distractor"]:
                continue
            rejection = ctx.check_distractor(
                c["text"],
                ssli["question"],
                gold_text,
                key,
                self.config.rules,
                self.cosine,
                accepted,
            )
            if rejection is not None:
                return rejection
            accepted.append(c["text"])
        return None

    def _distractors(
        self, q: dict[str, Any], gold: list[Passage], base: list[Candidate], gold_ids: set[str]
    ) -> tuple[list[Candidate], dict[str, Any]]:
        cfg = self.config
        if cfg.mode == "hard-negative":
            # not any Base candidate: injection keeps a prefix of Base, never a duplicate
            exclude = {c.passage_id for c in base}
            mined = ctx.mine_hard_negatives(self.retriever, gold, exclude, cfg.n_distractors)
            return mined, {"distractor_source": "hard_negative", "distractors_accepted": len(mined)}
        gold_text = "\n".join(g.contents for g in gold)
        by_id = {p.passage_id: p for p in store_passages(base, gold)}
        top3 = [by_id[c.passage_id] for c in base[:3] if c.passage_id in by_id]
        outcome = ctx.generate_distractors(
            self.llm,
            q["question"],
            q["answer"],
            gold_text,
            answer_key(q["answer"], gold_text, q["question"]),
            top3,
            cfg.n_distractors,
            retries=cfg.retries,
            rules=cfg.rules,
            cosine=self.cosine,
        )
        accepted = [(text, g.target_type) for text, g in outcome.accepted]
        detail = {
            "distractor_source": "llm",
            "guidance": [g.to_dict() for g in outcome.guidance],
            "guidance_error": outcome.error,
            "distractors_accepted": len(accepted),
            "distractors_salvaged": outcome.salvaged,
            "distractors_rejected": [
                {"reason": r.reason, "detail": r.detail, "text": text}
                for text, _, r in outcome.rejected
            ],
        }
        return ctx.distractor_candidates(q["qid"], accepted), detail

    def _instance(
        self, q: dict[str, Any], setting: str, cands: list[Candidate], prov: dict[str, Any]
    ) -> dict[str, Any]:
        from sciera.datasets.ssli.io import instance_to_dict

        inst = QAInstance(
            id=f"{q['qid']}/{setting}",
            question=q["question"],
            answer=q["answer"],
            gold_passage_ids=tuple(q["gold_passage_ids"]),
            setting=setting,
            candidates=tuple(cands),
            provenance=prov,
        )
        return instance_to_dict(inst)


@dataclass(frozen=True)
class BuildTask:
    """A build's steps 2-5 as executor shards ``(step, items)``: each worker holds its own
    :class:`SSLIBuilder` on the same corpus, output folder, options and settings (the LLM
    with the worker's threads), and returns its LLM's model id with each item's log lines
    (:mod:`sciera.datasets.ssli.sharded`)."""

    corpus: str
    out: str
    config: BuildConfig
    settings: Settings

    def setup(self, threads: int | None) -> Callable[[tuple[str, list]], ShardResult]:
        settings = self.settings
        if threads is not None:  # the worker's CPUs are its model threads
            llm = settings.llm.model_copy(update={"threads": threads})
            settings = settings.model_copy(update={"llm": llm})
        return _BuildWorker(SSLIBuilder(self.corpus, self.out, self.config, settings=settings))


class _BuildWorker:
    def __init__(self, builder: SSLIBuilder) -> None:
        from sciera.corpus.store import PassageStore

        self.builder = builder
        self.store = PassageStore.open(builder.corpus_dir)
        self.source = QuestionSource(
            self.store, builder.config, builder.embedder_factory, lambda *_: None
        )

    def __call__(self, shard: tuple[str, list]) -> ShardResult:
        step, work = shard
        b = self.builder
        model_id = b.llm.model_id if b.config.uses_llm else ""
        if step == PASSAGES:
            return model_id, [self.source.passage_records(b.llm, it, miss) for it, miss in work]
        if step == CONTEXTS:
            return model_id, [[(CONTEXTS, b.context_record(self.store, q))] for q in work]
        raise ValueError(f"unknown build step {step!r}")


def store_passages(base: list[Candidate], gold: list[Passage]) -> list[Passage]:
    """Base candidates as passages (title-less: the candidate text is already ``contents``)."""
    gold_by_id = {g.passage_id: g for g in gold}
    out = []
    for c in base:
        if c.passage_id in gold_by_id:
            out.append(gold_by_id[c.passage_id])
        else:
            doc = c.passage_id.split("#", 1)[0]
            out.append(Passage(c.passage_id, doc, 0, "", c.text))
    return out
