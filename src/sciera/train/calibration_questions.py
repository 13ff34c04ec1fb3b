"""Calibration questions: LLM-written questions on held-out abstracts that join the
calibration rows of a cross-encoder, never its training.

The dev split holds claims (SciFact's queries are claims), but users ask questions
(``sciera ask``, PubMedQA). A calibrator fitted on claims alone maps a question's logits
into P(relevant) for claims, and out of that domain it is under-confident: at τ 0.8 the
shipped model kept nothing for 22% of answerable PubMedQA questions while the passages it
did keep were 99.7% gold. Calibration questions put question-style queries into the rows
the calibrators are fitted on.

Sources are held-out abstracts: never a training query's gold (so the model never saw them
as a positive), allowed by the guard, judged by no evaluation. The gold abstracts of dev
queries come first, then other held-out abstracts of the corpus (seeded). The local
LLM writes one question per abstract and style (the synthetic-query prompt; styles
``question`` by default, ``yesno`` for questions answered yes or no, as PubMedQA's are),
kept only if the first stage returns that abstract in its top ``keep_top`` (the same
consistency filter as synthetic training queries). Each kept question is a dev record
whose one positive is its source abstract; other abstracts that also answer it count as
negatives, which errs towards a lower P, never a higher one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.artifacts.files import CALIBRATION_QUESTIONS_FILE

if TYPE_CHECKING:
    from sciera.settings import Settings
    from sciera.train.splits import SplitGuard

Progress = Callable[[str, int, int], None]
PREFIX = "cal-"
CACHE = "calibration_questions.jsonl"
SOURCE = (
    "held-out abstracts (dev queries' gold first, then others; none a training query's gold "
    "or judged by an evaluation)"
)


def pick_sources(
    dev_gold: Iterable[str],
    train_gold: Iterable[str],
    allowed: Callable[[Iterable[str]], list[str]],
    judged: set[str],
    n: int,
    seed: int,
    corpus_docs: Iterable[str],
) -> list[str]:
    """First passages (``DOC#0``) of at most ``n`` held-out abstracts of ``corpus_docs``:
    the dev gold ones first, then the others, each group sampled with ``seed`` from its
    sorted ids; never a training gold, a forbidden or an evaluation-judged abstract."""
    banned = set(train_gold) | judged
    corpus = set(corpus_docs)
    rng = random.Random(seed)
    picked: list[str] = []
    for group in (corpus & set(dev_gold), corpus - set(dev_gold)):
        docs = sorted(set(allowed(sorted(group))) - banned)
        rng.shuffle(docs)
        picked += docs[: n - len(picked)]
    return [f"{d}#0" for d in picked]


def write(
    spec: Any,
    settings: Settings,
    guard: SplitGuard,
    dev_gold: set[str],
    train_gold: set[str],
    work: Path,
    progress: Progress | None = None,
) -> tuple[dict[str, str], dict[str, dict[str, int]], dict[str, Any]]:
    """(queries, qrels, card section) of ``spec.calibration_questions`` kept questions;
    resumable per abstract (``work/calibration_questions.jsonl``)."""
    from sciera.corpus import PassageStore
    from sciera.llm.registry import make_llm
    from sciera.train import synthetic

    keep_top = spec.synthetic_keep_top
    llm = make_llm(settings)
    with PassageStore.open(spec.corpus) as store:
        sources = pick_sources(
            dev_gold,
            train_gold,
            guard.allowed_docs,
            guard.judged_docs,
            spec.calibration_questions,
            spec.seed,
            store.doc_ids(),
        )
        by_style = {
            style: synthetic.generate_here(
                llm,
                store,
                sources,
                settings,
                corpus=spec.corpus,
                retriever=spec.retriever,
                cache=work / CACHE,
                style=style,
                keep_top=keep_top,
                progress=styled(progress, style),
            )
            for style in spec.calibration_styles
        }
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for style, made in by_style.items():
        for s in made:
            if s.kept:
                queries[query_id(s.qid, style)] = s.text
                qrels[query_id(s.qid, style)] = {s.doc_id: 1}
    n_dev = len(set(dev_gold) & {p.split("#", 1)[0] for p in sources})
    styles = list(by_style)
    every = [s for made in by_style.values() for s in made]
    card = {  # "passages": abstracts asked; "queries" and "kept": over every style
        **synthetic.card_section(every, len(sources), llm, "+".join(styles), keep_top),
        "from_dev_gold": n_dev,
        "source": SOURCE,
    }
    if len(styles) > 1:
        card["by_style"] = {
            style: synthetic.summary(made, len(sources)) for style, made in by_style.items()
        }
    return queries, qrels, card


def styled(progress: Progress | None, style: str) -> Progress | None:
    """``progress`` with each style's questions as a step of their own
    (``calibration questions (yesno)``): a step that finished stays silent, so two styles
    under one name would show only the first."""
    if progress is None:
        return None
    step = f"calibration questions ({style})"
    return lambda _step, done, total: progress(step, done, total)


def query_id(synthetic_qid: str, style: str) -> str:
    """A calibration question's id: ``cal-syn-...`` for the ``question`` style (as before
    styles could be mixed), ``cal-<style>-syn-...`` for the others."""
    return PREFIX + ("" if style == "question" else f"{style}-") + synthetic_qid


def bundle(model_dir: Path, work: Path, card: Mapping[str, Any]) -> Path | None:
    """Copy the run's question log (``work/calibration_questions.jsonl``) into the model
    folder, gzipped (byte-stable: no name or time in the header), so a copy of the folder
    alone, on another machine, recalibrates without asking the LLM again
    (:func:`unbundle`). None when ``card`` records no calibration questions or the run
    logged none."""
    import gzip

    log = work / CACHE
    if not (card.get("data") or {}).get("calibration_questions") or not log.is_file():
        return None
    out = model_dir / CALIBRATION_QUESTIONS_FILE
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as gz:
        gz.write(log.read_bytes())
    tmp.replace(out)
    return out


def unbundle(model_dir: Path, work: Path) -> bool:
    """Start ``work``'s question log from the one the model folder carries (:func:`bundle`)
    when ``work`` has none; the log's records of another generation key (another LLM or
    prompt) are ignored when read, so the LLM then writes them anew. True if copied."""
    import gzip

    src, log = model_dir / CALIBRATION_QUESTIONS_FILE, work / CACHE
    if log.exists() or not src.is_file():
        return False
    tmp = log.with_name(log.name + ".tmp")
    tmp.write_bytes(gzip.decompress(src.read_bytes()))
    tmp.replace(log)
    return True
