"""``sciera eval rubrics build``: rubric items per question (ResearchQA, Section 3).

For each question of a dataset:

1. grounded items: the LLM reads the question's grounding text and writes up to
   ``per_source`` items the text supports. The grounding is what the dataset holds about
   the answer: PubMedQA's LONG_ANSWER and its abstract's passages, an SSLI question's answer
   and gold passage, a BEIR question's judged documents (from ``corpus``);
2. parametric items: the LLM writes up to ``per_source`` items from the question alone;
3. vacuous items are removed (fewer than :data:`MIN_WORDS` words, or about a generic
   quality such as clarity or length, :data:`VACUOUS`);
4. near-duplicates are removed: an item whose embedding has cosine similarity of at least
   ``dedupe`` with an item already kept (grounded items come first, so they win);
5. the first ``keep`` items are kept (ResearchQA keeps 8).

Each item is tagged with a type from :data:`TYPES` (the LLM's tag; an unknown tag becomes
"other") and its source (grounded or parametric). One JSON line per question is appended
and flushed as soon as it is built, so a stopped build resumes; the LLM's replies are
cached (the lines go through the runner's fsync'd :class:`~sciera.eval.resultlog.QueryLog`).
The line records the counts removed and the model and prompt versions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciera.errors import ScieraError
from sciera.eval.resultlog import QueryLog, read_log
from sciera.progress import Deadline

TYPES: tuple[str, ...] = (
    "finding",
    "mechanism",
    "method",
    "comparison",
    "limitation",
    "definition",
    "citation",
    "other",
)
MIN_WORDS = 4
VACUOUS = re.compile(
    r"\b(clear(ly)?|concise(ly)?|well[- ](written|organi[sz]ed|structured)|easy to (read|"
    r"understand)|comprehensive(ly)?|cites? (its )?sources|proper citations?|"
    r"accurate information|relevant information|answers the question|grammar)\b",
    re.IGNORECASE,
)
"""Generic qualities: an item that names one of these is about form, not content."""
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "type": {"type": "string"}},
                "required": ["text", "type"],
            },
        }
    },
    "required": ["items"],
}
GROUNDING_WORDS = 600  # the grounding text is cut to this many words
Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True, slots=True)
class RubricSpec:
    per_source: int = 6
    keep: int = 8
    dedupe: float = 0.85
    max_tokens: int = 512


def is_vacuous(text: str) -> bool:
    return len(text.split()) < MIN_WORDS or VACUOUS.search(text) is not None


def grounding(data: Any, qid: str, store: Any = None) -> str:
    """What the dataset holds about ``qid``'s answer (see the module docstring)."""
    parts = [a for a in data.answers.get(qid, ()) if len(a.split()) > 1]  # not yes/no
    gold = set(data.qrels.get(qid, {}))
    pool = data.candidates.get(qid, ())
    if pool:
        parts += [p.contents for p in pool if p.passage_id in gold]
    elif store is not None:
        for doc in sorted(gold):
            parts += [p.contents for p in store.document_passages(doc)]
    words = " ".join(parts).split()
    return " ".join(words[:GROUNDING_WORDS])


def ask_items(llm: Any, prompt: str, spec: RubricSpec, **values: str) -> tuple[list[dict], str]:
    """(items the LLM wrote, the parse error or "")."""
    from sciera.llm.prompting import load_prompt

    messages = load_prompt(prompt).render(n=str(spec.per_source), types=", ".join(TYPES), **values)
    res = llm.complete_json(messages, SCHEMA, max_tokens=spec.max_tokens)
    if not res.ok or res.value is None:
        return [], res.failure.error if res.failure else "no reply"
    out = []
    for item in res.value.get("items", [])[: spec.per_source]:
        text = " ".join(str(item.get("text", "")).split())
        kind = str(item.get("type", "other")).strip().lower()
        if text:
            out.append({"text": text, "type": kind if kind in TYPES else "other"})
    return out, ""


def select_items(
    items: Sequence[dict], embed: Embed, spec: RubricSpec
) -> tuple[list[dict], dict[str, int]]:
    """Vacuous and near-duplicate items removed, the first ``keep`` kept."""
    removed = {"vacuous": 0, "duplicate": 0, "beyond_keep": 0}
    content = []
    for item in items:
        if is_vacuous(item["text"]):
            removed["vacuous"] += 1
        else:
            content.append(item)
    kept: list[dict] = []
    if content:
        vectors = np.asarray(embed([i["text"] for i in content]), dtype=np.float64)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)
        chosen: list[int] = []
        for i, item in enumerate(content):
            if any(float(vectors[i] @ vectors[j]) >= spec.dedupe for j in chosen):
                removed["duplicate"] += 1
                continue
            chosen.append(i)
            kept.append(item)
    removed["beyond_keep"] = max(0, len(kept) - spec.keep)
    return kept[: spec.keep], removed


def build_rubric(
    llm: Any, question: str, source: str, embed: Embed, spec: RubricSpec
) -> dict[str, Any]:
    from sciera.llm.prompting import delimit

    items: list[dict] = []
    errors = []
    if source.strip():
        grounded, err = ask_items(
            llm, "rubric_grounded", spec, question=question, source=delimit(source, "source")
        )
        items += [{**i, "source": "grounded"} for i in grounded]
        errors += [f"grounded: {err}"] if err else []
    parametric, err = ask_items(llm, "rubric_parametric", spec, question=question)
    items += [{**i, "source": "parametric"} for i in parametric]
    errors += [f"parametric: {err}"] if err else []
    kept, removed = select_items(items, embed, spec)
    return {"items": kept, "written": len(items), "removed": removed, "errors": errors}


def build_rubrics(
    data: Any,
    llm: Any,
    embed: Embed,
    out: Path,
    spec: RubricSpec = RubricSpec(),
    *,
    store: Any = None,
    limit_minutes: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Append a rubric line for every question of ``data`` not yet in ``out``; returns
    counts over the whole file."""
    from sciera.llm.prompting import load_prompt

    versions = {p: load_prompt(p).version for p in ("rubric_grounded", "rubric_parametric")}
    qids = list(data.queries)
    deadline = Deadline(limit_minutes)
    with QueryLog.open(out) as log:
        for n, qid in enumerate(qids, start=1):
            if qid not in log:
                if deadline.passed():
                    break
                rubric = build_rubric(
                    llm, data.queries[qid], grounding(data, qid, store), embed, spec
                )
                row = {
                    "qid": qid,
                    "question": data.queries[qid],
                    **rubric,
                    "model_id": llm.model_id,
                    "prompt_versions": versions,
                }
                log.append(row)
            if progress is not None:
                progress(n, len(qids))
    return rubric_stats(out, len(qids))


def rubric_stats(path: Path, wanted: int) -> dict[str, Any]:
    rows = list(read_log(path).values())
    if not rows:
        raise ScieraError(f"{path}: no rubric was built")
    items = [i for r in rows for i in r["items"]]
    by: dict[str, dict[str, int]] = {"type": {}, "source": {}}
    for i in items:
        for key in by:
            by[key][i[key]] = by[key].get(i[key], 0) + 1
    removed: dict[str, int] = {}
    for r in rows:
        for k, v in r["removed"].items():
            removed[k] = removed.get(k, 0) + v
    return {
        "questions": len(rows),
        "wanted": wanted,
        "items": len(items),
        "items_per_question": len(items) / len(rows),
        "written": sum(r["written"] for r in rows),
        "removed": removed,
        "without_items": sum(1 for r in rows if not r["items"]),
        "errors": sum(len(r["errors"]) for r in rows),
        **{f"by_{k}": dict(sorted(v.items())) for k, v in by.items()},
    }


def embedder_embed(settings: Any) -> Embed:
    """The configured embedder's query embedding, as the dedupe's ``embed``."""
    from sciera.embed.registry import create_embedder

    embedder = create_embedder(settings.embed, settings.home)
    return embedder.embed_queries


def stats_line(stats: Mapping[str, Any]) -> str:
    return (
        f"{stats['questions']} of {stats['wanted']} questions, {stats['items']} items "
        f"({stats['items_per_question']:.1f} per question; written {stats['written']}, "
        f"removed {stats['removed']}); types {stats['by_type']}; sources {stats['by_source']}"
    )
