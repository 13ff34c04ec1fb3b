"""Synthetic training queries (InPars, Bonifacio et al. 2022; Promptagator, Dai et al.
2022): the local LLM writes a query that a passage answers, and the query is kept only if
the first stage brings that passage's document back in its top ``keep_top`` (consistency
filtering). The kept (query, document) pairs join the training judgments; they never enter
the dev split.

Sources are documents the :class:`~sciera.train.splits.SplitGuard` allows, minus the gold
documents of every dev query and of every excluded (evaluation) query set, so no synthetic
query is written from an abstract an evaluation judges. Generation is resumable: one JSONL
line per passage, keyed by the LLM, the prompt version and the style, so a rerun asks the
LLM only for what is missing (the LLM response cache also holds the replies).
:func:`generate_sharded` writes the same records on an executor's workers
(``--synthetic N --ray ADDRESS``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.errors import ScieraError
from sciera.executor import Executor, shards_of

if TYPE_CHECKING:
    from sciera.corpus.store import PassageStore
    from sciera.llm.base import LLM
    from sciera.retrieve.base import Retriever
    from sciera.settings import Settings
    from sciera.types import Passage

PROMPT = "train_synthetic_query"
STYLES = ("claim", "question", "yesno")
# a style with a prompt of its own (the others fill ${style} of PROMPT)
_STYLE_PROMPTS = {"yesno": "train_synthetic_yesno"}
# how a yes/no question starts
_AUXILIARIES = frozenset(
    [
        "does",
        "do",
        "did",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "has",
        "have",
        "had",
        "will",
        "would",
        "should",
        "may",
    ]
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "minLength": 8, "maxLength": 300}},
    "required": ["query"],
}
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class SyntheticQuery:
    qid: str
    text: str
    doc_id: str
    passage_id: str
    rank: int | None  # the source document's first-stage rank (None: not in the top)
    kept: bool


def prompt_name(style: str) -> str:
    return _STYLE_PROMPTS.get(style, PROMPT)


def generation_key(llm: LLM, style: str) -> str:
    from sciera.llm.prompting import load_prompt

    name = prompt_name(style)
    version = load_prompt(name).version
    return hashlib.sha256(f"{llm.model_id}|{name}@{version}|{style}".encode()).hexdigest()[:16]


def pick_sources(
    store: PassageStore,
    allowed: Callable[[Iterable[str]], list[str]],
    forbidden: set[str],
    n: int,
    seed: int,
) -> list[str]:
    """``n`` first passages (``DOC#0``) of documents the guard allows and ``forbidden``
    does not hold, sampled with ``seed`` (sorted first, so the sample does not depend on
    the store's order)."""
    docs = sorted(set(allowed(store.doc_ids())) - forbidden)
    random.Random(seed).shuffle(docs)
    return [f"{d}#0" for d in docs[:n]]


def read_done(path: Path, key: str) -> dict[str, dict[str, Any]]:
    """The logged records of generation ``key``, by passage id."""
    done: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash: generated again
            if rec.get("key") == key:
                done[rec["passage_id"]] = rec
    return done


def clean_query(text: str, style: str = "claim") -> str | None:
    """The query as one line, or None when it is unusable (empty, a meta reference, or for
    ``yesno`` not a yes/no question)."""
    text = " ".join(str(text).split()).strip().strip('"')
    lowered = text.lower()
    if len(text.split()) < 4 or any(
        p in lowered for p in ("this passage", "the passage", "this study", "the authors")
    ):
        return None
    if style == "yesno" and (not text.endswith("?") or lowered.split()[0] not in _AUXILIARIES):
        return None
    return text


class QueryWriter:
    """Writes one passage's synthetic query and checks it against the first stage: the
    record :func:`generate` logs (each worker of :func:`generate_sharded` holds one too)."""

    def __init__(self, llm: LLM, retriever: Retriever, style: str, keep_top: int) -> None:
        from sciera.llm.prompting import load_prompt

        if style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)}, got {style!r}")
        self.llm, self.retriever, self.style, self.keep_top = llm, retriever, style, keep_top
        self.key = generation_key(llm, style)
        self.prompt = load_prompt(prompt_name(style))

    def record(self, passage: Passage) -> dict[str, Any]:
        from sciera.llm.prompting import delimit

        values = {"passage": delimit(passage.contents)}
        if "style" in self.prompt.variables:
            values["style"] = self.style
        reply = self.llm.complete_json(self.prompt.render(**values), SCHEMA, max_tokens=80)
        text = (
            clean_query(reply.value.get("query", ""), self.style)
            if reply.ok and reply.value
            else None
        )
        rank = None
        if text is not None:
            ranking = self.retriever.search(text, self.keep_top)
            docs = [it.passage.doc_id for it in ranking.items]
            rank = docs.index(passage.doc_id) + 1 if passage.doc_id in docs else None
        return {
            "key": self.key,
            "passage_id": passage.passage_id,
            "doc_id": passage.doc_id,
            "query": text,
            "rank": rank,
            "error": None if reply.ok else (reply.failure.error if reply.failure else "?"),
        }


def append_record(cache: Path, done: dict[str, dict[str, Any]], rec: dict[str, Any]) -> None:
    """Log ``rec`` (one line, appended) and note it in ``done``."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("a", encoding="utf-8") as out:
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    done[rec["passage_id"]] = rec


def generate(
    llm: LLM,
    store: PassageStore,
    passage_ids: list[str],
    retriever: Retriever,
    *,
    cache: Path,
    style: str = "claim",
    keep_top: int = 3,
    progress: Progress | None = None,
) -> list[SyntheticQuery]:
    """One query per passage, consistency-checked against ``retriever`` (a document-level
    first stage, e.g. Max-P hybrid), appended to ``cache`` as each passage is done."""
    writer = QueryWriter(llm, retriever, style, keep_top)
    done = read_done(cache, writer.key)
    found = store.find_passages(passage_ids)
    for i, pid in enumerate(passage_ids):
        if pid not in done and pid in found:
            append_record(cache, done, writer.record(found[pid]))
        if progress:
            progress("synthetic queries", i + 1, len(passage_ids))
    return assemble(done, passage_ids, keep_top)


def filter_depth(settings: Settings, keep_top: int) -> int:
    """Passages the consistency filter's first stage retrieves before Max-P to documents."""
    from sciera.retrieve.maxp import passage_depth

    return passage_depth(settings.retrieve.passage_depth, keep_top)


def generate_here(
    llm: LLM,
    store: PassageStore,
    passage_ids: list[str],
    settings: Settings,
    *,
    corpus: str | Path,
    retriever: str,
    cache: Path,
    style: str,
    keep_top: int,
    progress: Progress | None = None,
) -> list[SyntheticQuery]:
    """:func:`generate` with the first stage (``retriever`` over ``corpus``, Max-P to
    documents) opened in this process."""
    from sciera.retrieve import open_retriever
    from sciera.retrieve.maxp import MaxPRetriever

    inner = open_retriever(corpus, retriever, settings)
    first = MaxPRetriever(inner, depth=filter_depth(settings, keep_top))
    return generate(
        llm,
        store,
        passage_ids,
        first,
        cache=cache,
        style=style,
        keep_top=keep_top,
        progress=progress,
    )


@dataclass(frozen=True)
class SyntheticTask:
    """Synthetic queries as executor shards of passage ids: each worker holds the LLM (the
    embedded model with the worker's threads, or the settings' OpenAI-compatible server),
    the first stage (``retriever`` over ``corpus``, Max-P to documents at ``depth``) and the
    passage store, and returns the records :func:`generate` logs (the same
    :class:`QueryWriter`)."""

    settings: Settings
    corpus: str
    retriever: str
    depth: int
    style: str
    keep_top: int

    def setup(self, threads: int | None) -> Callable[[list[str]], list[dict[str, Any]]]:
        from sciera.corpus import PassageStore
        from sciera.llm.registry import make_llm
        from sciera.retrieve import open_retriever
        from sciera.retrieve.maxp import MaxPRetriever

        settings = self.settings
        if threads is not None:  # the worker's CPUs are its model threads
            llm = settings.llm.model_copy(update={"threads": threads})
            settings = settings.model_copy(update={"llm": llm})
        inner = open_retriever(self.corpus, self.retriever, settings)
        first = MaxPRetriever(inner, depth=self.depth)
        writer = QueryWriter(make_llm(settings), first, self.style, self.keep_top)
        store = PassageStore.open(self.corpus)

        def run(passage_ids: list[str]) -> list[dict[str, Any]]:
            found = store.find_passages(passage_ids)
            return [writer.record(found[pid]) for pid in passage_ids]

        return run


def generate_sharded(
    executor: Executor,
    settings: Settings,
    corpus: str | Path,
    retriever: str,
    depth: int,
    passage_ids: list[str],
    *,
    key: str,
    cache: Path,
    style: str,
    keep_top: int,
    progress: Progress | None = None,
) -> dict[str, dict[str, Any]]:
    """Log a record for every passage of ``passage_ids`` missing from ``cache`` (under
    generation ``key``), made in shards on ``executor``'s workers; returns every logged
    record of ``key`` by passage id. The driver sends only the missing passages and appends
    each finished shard's records at once, so a killed worker or driver loses at most the
    shards in flight, and a rerun, sharded or not, asks only for what is missing. Every
    worker's LLM must be this machine's (its model id and prompt version make ``key``): a
    shard written under another key is refused before it is logged. The corpus directory
    and ``SCIERA_HOME`` must be at the same paths on every worker."""
    from sciera.corpus import PassageStore

    done = read_done(cache, key)
    with PassageStore.open(corpus) as store:
        found = store.find_passages(passage_ids)
    todo = [pid for pid in passage_ids if pid not in done and pid in found]
    if not todo:
        return done
    task = SyntheticTask(settings, str(corpus), retriever, depth, style, keep_top)
    written = 0
    for _, records in executor.map(task, shards_of(todo, executor.shard_size)):
        if any(rec["key"] != key for rec in records):
            raise ScieraError(
                "a worker's LLM differs from this machine's (another model or prompt "
                "version): install the same versions and models on every node"
            )
        for rec in records:
            append_record(cache, done, rec)
        written += len(records)
        if progress is not None:
            progress("synthetic queries", written, len(todo))
    return done


def assemble(
    done: Mapping[str, Mapping[str, Any]], passage_ids: list[str], keep_top: int
) -> list[SyntheticQuery]:
    """The logged queries of ``passage_ids`` in their order, each marked kept or not."""
    out: list[SyntheticQuery] = []
    for pid in passage_ids:
        rec = done.get(pid)
        if rec is None or rec["query"] is None:
            continue
        qid = "syn-" + hashlib.sha256(pid.encode()).hexdigest()[:12]
        kept = rec["rank"] is not None and rec["rank"] <= keep_top
        out.append(SyntheticQuery(qid, rec["query"], rec["doc_id"], pid, rec["rank"], kept))
    return out


def as_training(
    synthetic: Iterable[SyntheticQuery],
) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """(queries, qrels) of the kept synthetic queries, ready to join the real ones."""
    kept = [s for s in synthetic if s.kept]
    return {s.qid: s.text for s in kept}, {s.qid: {s.doc_id: 1} for s in kept}


def summary(synthetic: list[SyntheticQuery], asked: int) -> dict[str, Any]:
    """For the card: how many passages were asked, answered, and kept by the filter."""
    return {
        "passages": asked,
        "queries": len(synthetic),
        "kept": sum(s.kept for s in synthetic),
        "examples": [s.text for s in synthetic if s.kept][:5],
    }


def card_section(
    synthetic: list[SyntheticQuery], asked: int, llm: LLM, style: str, keep_top: int
) -> dict[str, Any]:
    """The card's record of a generation: :func:`summary`, the LLM, style and filter."""
    return {**summary(synthetic, asked), "llm": llm.model_id, "style": style, "keep_top": keep_top}


def rank_histogram(synthetic: list[SyntheticQuery]) -> Mapping[str, int]:
    hist: dict[str, int] = {}
    for s in synthetic:
        label = str(s.rank) if s.rank is not None else "missed"
        hist[label] = hist.get(label, 0) + 1
    return dict(sorted(hist.items()))
