"""Steps 1-3 of a build: which passages to ask about, and the accepted questions.

Questions come either from the LLM (structured notes + Figure 10 prompt, or LMQG-style)
over documents selected by clustering, or -- the no-LLM path -- from an existing BEIR
set (queries + qrels, e.g. SciFact claims with their gold abstracts).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciera.datasets.ssli.config import BuildConfig
from sciera.datasets.ssli.extract import PROMPT as EXTRACT_PROMPT
from sciera.datasets.ssli.extract import StructuredNotes, extract_notes
from sciera.datasets.ssli.io import JsonlLog
from sciera.datasets.ssli.qa import PROMPTS as QA_PROMPTS
from sciera.datasets.ssli.qa import (
    REPAIR_PROMPT,
    QAPair,
    generate_pairs,
    repair_question,
    screen_pairs,
)
from sciera.datasets.ssli.select import document_vectors, select_documents
from sciera.datasets.ssli.specificity import TopicIndex
from sciera.datasets.ssli.validate import Rejection, question_key
from sciera.errors import ScieraError

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from sciera.corpus.store import PassageStore
    from sciera.embed.base import Embedder
    from sciera.llm.base import LLM
    from sciera.types import Passage


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# rejections a question rewritten from its answer can fix
REPAIRABLE = frozenset({"self_reference", "underspecified"})


def doc_passages(store: PassageStore, doc_id: str, limit: int = 50) -> list[str]:
    """Passage ids of one document (``doc#0``, ``doc#1`` ... until one is missing)."""
    wanted = [f"{doc_id}#{i}" for i in range(limit)]
    found = store.find_passages(wanted)
    return list(itertools.takewhile(found.__contains__, wanted))


def question_id(passage_id: str, n: int) -> str:
    """``<doc>-p<passage index>-q<n>``: no ``#``, so ids never parse as a corpus passage."""
    doc, _, index = passage_id.rpartition("#")
    return f"{doc or passage_id}-p{index or 0}-q{n}"


def prompt_versions(names: list[str]) -> dict[str, str]:
    from sciera.llm.prompting import load_prompt

    return {n: load_prompt(n).version for n in names}


class QALogs:
    """``extract.jsonl`` and ``qa.jsonl`` of a build, read once and appended to."""

    def __init__(self, out: Path) -> None:
        self._logs = {"extract": JsonlLog(out / "extract.jsonl"), "qa": JsonlLog(out / "qa.jsonl")}
        self.extract = {r["passage_id"]: r for r in self._logs["extract"].records}
        self.qa = {r["passage_id"]: r for r in self._logs["qa"].records}

    def missing(self, item: dict[str, Any], mode: str = "ours") -> tuple[str, ...]:
        """The logs ``item`` still needs a line in (in the order they are made)."""
        pid = item["passage_id"]
        need = ("extract",) if mode == "ours" and pid not in self.extract else ()
        return (*need, "qa") if pid not in self.qa else need

    def with_notes(self, item: dict[str, Any]) -> dict[str, Any]:
        """``item`` carrying its logged notes (what a worker needs to write its pairs)."""
        notes = self.extract.get(item["passage_id"])
        return {**item, "_notes": notes} if notes is not None else item

    def append(self, name: str, rec: dict[str, Any]) -> None:
        self._logs[name].append(rec)
        getattr(self, name)[rec["passage_id"]] = rec


@dataclass
class _Tally:
    """Questions counted so far over a prefix of items: the keys seen (later duplicates are
    left out), what was dropped, and how many items and questions."""

    logs: QALogs
    items: int = 0
    count: int = 0
    seen: set[str] = field(default_factory=set)
    dropped: list[dict[str, str]] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)


class QuestionSource:
    def __init__(
        self,
        store: PassageStore,
        config: BuildConfig,
        embedder: Callable[[], Embedder],
        progress: Callable[[str, int, int], None],
    ) -> None:
        self.store, self.config, self._embedder, self.progress = store, config, embedder, progress
        # checkpointed questions the current question rules reject (left out of the set)
        self.dropped: list[dict[str, str]] = []
        # questions left out because an earlier passage asks them (their qids)
        self.duplicates: list[str] = []
        self._tally: _Tally | None = None  # what enough() has counted so far
        self._topics: TopicIndex | None = None

    @property
    def topics(self) -> TopicIndex:
        """The corpus's topic index (built on first use: the ``underspecified`` rule)."""
        if self._topics is None:
            self._topics = TopicIndex.from_store(self.store)
        return self._topics

    def screen(
        self, pairs: list[QAPair] | tuple[QAPair, ...], passage_text: str, seen: set[str]
    ) -> tuple[list[QAPair], list[tuple[QAPair, Rejection]]]:
        """:func:`screen_pairs` with this build's rules."""
        share = self.config.max_topic_share
        return screen_pairs(
            pairs,
            passage_text,
            seen,
            min_support=self.config.min_support,
            topics=self.topics if share is not None else None,
            max_topic_share=share,
        )

    # -- step 1 ----------------------------------------------------------------------------
    def select(self, path: Path) -> dict[str, Any]:
        if path.exists():
            return json.loads(path.read_text("utf-8"))
        t0 = time.perf_counter()
        data = self._select_beir() if self.config.queries else self._select_clusters()
        data["seconds"] = round(time.perf_counter() - t0, 3)
        _write_json(path, data)
        return data

    def _select_clusters(self) -> dict[str, Any]:
        cfg = self.config
        rng = np.random.default_rng(cfg.seed)
        excluded = cfg.excluded_docs()
        passages = [p for p in self.store.iter_passages() if p.doc_id not in excluded]
        doc_ids = list(dict.fromkeys(p.doc_id for p in passages))
        if cfg.pool is not None and len(doc_ids) > cfg.pool:
            chosen = set(rng.choice(len(doc_ids), size=cfg.pool, replace=False).tolist())
            doc_ids = [d for i, d in enumerate(doc_ids) if i in chosen]
        wanted = set(doc_ids)
        pool = [p for p in passages if p.doc_id in wanted]
        if not pool:
            raise ScieraError("the corpus has no passages to build questions from")
        embedder = self._embedder()
        self.progress("embed", 0, len(pool))
        vectors = embedder.embed_passages(
            [p.contents for p in pool], progress=lambda d, t: self.progress("embed", d, t)
        )
        per_doc = document_vectors([p.doc_id for p in pool], vectors)
        picked, counts = select_documents(
            doc_ids,
            np.stack([per_doc[d] for d in doc_ids]),
            n_docs=cfg.n_docs,
            cluster_size=cfg.cluster_size,
            min_size=cfg.min_cluster,
            seed=cfg.seed,
        )
        first = {}
        for p in pool:
            first.setdefault(p.doc_id, p.passage_id)
        items = [
            {
                "doc_id": s.doc_id,
                "passage_id": first[s.doc_id],
                "cluster": s.cluster,
                "cluster_size": s.cluster_size,
            }
            for s in picked
        ]
        counts["excluded_docs"] = len(excluded)
        return {"source": "clusters", "embedder": embedder.name, "counts": counts, "items": items}

    def _select_beir(self) -> dict[str, Any]:
        from sciera.corpus.readers import load_beir_queries, load_qrels

        cfg = self.config
        folder = Path(cfg.queries or "")
        queries = load_beir_queries(folder)
        qrels = load_qrels(folder / "qrels" / f"{cfg.qrels_split}.tsv")
        ids = sorted(qrels)
        order = np.random.default_rng(cfg.seed).permutation(len(ids)).tolist()
        limit = cfg.max_questions or cfg.n_docs
        excluded = cfg.excluded_docs()
        items, skipped, on_excluded = [], 0, 0
        for i in order:
            if len(items) >= limit:
                break
            qid = ids[i]
            gold_docs = sorted(d for d, grade in qrels[qid].items() if grade > 0)
            if excluded.intersection(gold_docs):
                on_excluded += 1
                continue
            gold = [pid for d in gold_docs for pid in doc_passages(self.store, d)]
            if qid not in queries or not gold or len(gold) > cfg.total // 2:
                skipped += 1
                continue
            items.append(
                {
                    "query_id": qid,
                    "question": queries[qid],
                    "gold_docs": gold_docs,
                    "gold_passage_ids": gold,
                }
            )
        counts = {
            "queries": len(ids),
            "selected": len(items),
            "skipped": skipped,
            "on_excluded_docs": on_excluded,
        }
        return {"source": f"beir:{folder}:{cfg.qrels_split}", "counts": counts, "items": items}

    # -- steps 2-3 -------------------------------------------------------------------------
    def questions(
        self, selection: dict[str, Any], out: Path, llm: LLM | None, workers: Any = None
    ) -> list[dict]:
        """The accepted questions (steps 2-3), made here or by ``workers``
        (:class:`sciera.datasets.ssli.sharded.ShardedSteps`)."""
        cfg = self.config
        if selection["source"].startswith("beir:"):
            return [
                {
                    "qid": f"query/{it['query_id']}",
                    "question": it["question"],
                    "answer": "",
                    "gold_passage_ids": it["gold_passage_ids"],
                    "provenance": {
                        "source": selection["source"],
                        "query_id": it["query_id"],
                        "source_doc": it["gold_docs"],
                        "mode": cfg.mode,
                        "model": "none",
                        "prompts": {},
                        "seed": cfg.seed,
                        "timings": {},
                    },
                }
                for it in selection["items"]
            ]
        if llm is None:
            raise ScieraError("generating questions needs an LLM")
        if workers is not None:
            return workers.questions(self, selection["items"], QALogs(out), llm)
        return self._generate(selection["items"], out, llm)

    def _generate(self, items: list[dict], out: Path, llm: LLM) -> list[dict]:
        logs = QALogs(out)
        for n, it in enumerate(items):
            self.progress("questions", n, len(items))
            if self.enough(items[:n], logs):
                break
            missing = logs.missing(it, self.config.qa_mode)
            for name, rec in self.passage_records(llm, logs.with_notes(it), missing):
                logs.append(name, rec)
        self.progress("questions", len(items), len(items))
        return self.assemble(items, logs, llm, report=True)

    def passage_records(
        self, llm: LLM, item: dict[str, Any], missing: tuple[str, ...]
    ) -> list[tuple[str, dict[str, Any]]]:
        """One passage's missing log lines (``extract``: its notes; ``qa``: its screened
        pairs), in that order. Pairs are screened against each other, not against other
        passages' questions (:meth:`assemble` drops those duplicates in item order), so a
        passage's lines do not depend on which passages ran before it, here or on another
        worker (:mod:`sciera.datasets.ssli.sharded`)."""
        from sciera.llm.accounting import stage

        cfg = self.config
        pid = item["passage_id"]
        passage = self.store.get_passages([pid])[0]
        out: list[tuple[str, dict[str, Any]]] = []
        notes_rec = item.get("_notes")
        if "extract" in missing:
            t0 = time.perf_counter()
            with stage("ssli.extract"):
                res = extract_notes(llm, passage)
            notes_rec = {
                "passage_id": pid,
                "error": res.error,
                "notes": None if res.notes is None else asdict(res.notes),
                "seconds": round(time.perf_counter() - t0, 3),
            }
            out.append(("extract", notes_rec))
        if "qa" not in missing:
            return out
        notes = None
        if cfg.qa_mode == "ours":
            if notes_rec is None or notes_rec["notes"] is None:
                return out
            notes = StructuredNotes(**notes_rec["notes"])
        t0 = time.perf_counter()
        seen: set[str] = set()
        with stage("ssli.qa"):
            res = generate_pairs(llm, passage, notes, mode=cfg.qa_mode)
        accepted, rejected = self.screen(res.pairs, passage.contents, seen)
        repaired: list[dict] = []
        if cfg.repair_questions:
            with stage("ssli.qa_repair"):
                fixed_pairs, rejected, repaired = self._repair(llm, passage, rejected, seen)
            accepted = [*accepted, *fixed_pairs]
        fixed = {r["question"]: r["from"] for r in repaired if r["accepted"]}
        rec = {
            "passage_id": pid,
            "error": res.error,
            "generated": len(res.pairs),
            "accepted": [
                {"question": p.question, "answer": p.answer, "kind": p.kind}
                | ({"repaired_from": fixed[p.question]} if p.question in fixed else {})
                for p in accepted
            ],
            "repaired": repaired,
            "rejected": [
                {
                    "question": p.question,
                    "answer": p.answer,
                    "kind": p.kind,
                    "reason": r.reason,
                    "detail": r.detail,
                }
                for p, r in rejected
            ],
            "seconds": round(time.perf_counter() - t0, 3),
        }
        out.append(("qa", rec))
        return out

    def assemble(
        self, items: list[dict], logs: QALogs, llm: LLM, *, report: bool = False
    ) -> list[dict]:
        """The questions of ``items``' logged pairs in item order, up to ``max_questions``:
        a pair failing today's rules, or repeating an earlier item's question, is left out
        (with ``report``: logged and listed in :attr:`dropped`)."""
        cfg = self.config
        names = ([EXTRACT_PROMPT] if cfg.qa_mode == "ours" else []) + [QA_PROMPTS[cfg.qa_mode]]
        names += [REPAIR_PROMPT] if cfg.repair_questions else []
        base_prov = {
            "mode": cfg.mode,
            "model": llm.model_id,
            "prompts": prompt_versions(names),
            "seed": cfg.seed,
        }
        tally = _Tally(logs)
        if report:
            self.dropped, self.duplicates = tally.dropped, tally.duplicates
        questions: list[dict] = []
        limit = cfg.max_questions
        for it in items:
            if limit is not None and len(questions) >= limit:
                break
            for q in self._item_questions(it, tally, report):
                questions.append({**q, "provenance": {**base_prov, **q["provenance"]}})
                if limit is not None and len(questions) >= limit:
                    break  # the item's later pairs are not screened, as before
        return questions

    def enough(self, items: list[dict], logs: QALogs) -> bool:
        """Whether ``items`` already give ``max_questions`` questions. Counted as
        :meth:`assemble` would, but incrementally: called with a growing prefix of the same
        items (whose logs are complete), each item is screened once, not once per call."""
        limit = self.config.max_questions
        if limit is None:
            return False
        tally = self._tally
        if tally is None or tally.logs is not logs or len(items) < tally.items:
            tally = self._tally = _Tally(logs)
        for it in items[tally.items :]:
            tally.count += sum(1 for _ in self._item_questions(it, tally, report=False))
        tally.items = len(items)
        return tally.count >= limit

    def _item_questions(self, it: dict, tally: _Tally, report: bool) -> Iterator[dict]:
        """One item's logged pairs that pass today's rules and repeat no question ``tally``
        has seen, as question records (provenance without the build-wide fields)."""
        pid = it["passage_id"]
        rec = tally.logs.qa.get(pid)
        if rec is None:
            return
        passage = self.store.get_passages([pid])[0]
        extract_s = tally.logs.extract.get(pid, {}).get("seconds", 0.0)
        for i, pair in enumerate(rec["accepted"], start=1):
            qid = question_id(pid, i)
            failed = self._fails_current_rules(pair, passage)
            if failed is None and question_key(pair["question"]) in tally.seen:
                tally.duplicates.append(qid)  # an earlier passage's question: left out
                continue
            if failed is not None:
                if report:
                    logger.warning("%s: left out (%s: %s)", qid, failed.reason, failed.detail)
                tally.dropped.append({"qid": qid, "reason": failed.reason})
                continue
            tally.seen.add(question_key(pair["question"]))
            yield {
                "qid": qid,
                "question": pair["question"],
                "answer": pair["answer"],
                "gold_passage_ids": [pid],
                "provenance": {
                    "source_doc": it["doc_id"],
                    "source_passage": pid,
                    "cluster": it["cluster"],
                    "question_type": pair["kind"],
                    "timings": {"extract_s": extract_s, "qa_s": rec["seconds"]},
                },
            }

    def _fails_current_rules(self, pair: dict[str, Any], passage: Passage) -> Rejection | None:
        """The rule a checkpointed pair fails today (duplicates aside: they were screened
        in order when the pair was accepted), so a resumed build applies new rules."""
        qa = QAPair(pair["question"], pair["answer"], pair.get("kind", ""))
        _, bad = self.screen([qa], passage.contents, set())
        return bad[0][1] if bad else None

    def _repair(
        self,
        llm: LLM,
        passage: Passage,
        rejected: list[tuple[QAPair, Rejection]],
        seen: set[str],
    ) -> tuple[list[QAPair], list[tuple[QAPair, Rejection]], list[dict]]:
        """Write self-referencing and underspecified questions again from their answers (one
        short call each) and screen the rewrites like any pair (``seen`` gains the accepted
        ones).

        Returns (rewrites that pass every rule, pairs that stay rejected, one log record
        per attempt)."""
        topic = passage.title or " ".join(passage.text.split()[:25])
        fixed: list[QAPair] = []
        still: list[tuple[QAPair, Rejection]] = []
        log: list[dict] = []
        for pair, why in rejected:
            if why.reason not in REPAIRABLE:
                still.append((pair, why))
                continue
            new = repair_question(llm, pair, topic)
            ok: list[QAPair] = []
            reason = "not a single question"
            if new is not None:
                ok, bad = self.screen([new], passage.contents, seen)
                reason = bad[0][1].reason if bad else ""
            log.append(
                {
                    "from": pair.question,
                    "question": new.question if new else "",
                    "accepted": bool(ok),
                    "reason": reason,
                }
            )
            if ok:
                fixed.extend(ok)
            else:
                still.append((pair, why))
        return fixed, still, log
