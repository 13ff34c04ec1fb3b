"""PubMed-like synthetic passages for the capacity benchmark: real abstract sentences
resampled into BEIR-style documents, deterministically for a seed.

    python benchmarks/perf/synthetic_corpus.py --documents 100000 --seed 0 --out WORK/src

writes ``WORK/src/corpus.jsonl`` and, beside it, ``synthetic.json`` (what was written and
the seconds it took; ``capacity.py`` runs this for each corpus size).

Sources: the SciFact abstracts and the PubMedQA contexts under ``../shared/data`` (the
NFCorpus dev docs are left out: they are lowercased with stopwords removed, no sentences).
A document is a title (one random sentence cut to at most 15 words) and a body of ``k``
random sentences, ``k`` resampled from the real abstracts' sentence counts, cut so the
body stays within ``max_words`` (sciera's passage size), so a document is one passage.
Documents are drawn in fixed blocks from one seeded generator: the first ``n`` documents
are the same whatever the total, so a small corpus is a prefix of a larger one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from common import DATA, write_json

MAX_WORDS = 250  # sciera's default passage size (corpus.max_words)
TITLE_WORDS = 15
BLOCK = 4096
# SciFact glues many sentences together ("disabilities.A line", "OS.On", "endoderm.FGF"):
# put the space back before the splitter sees them
_GLUED = re.compile(r"(?<=[A-Za-z0-9)\]%])([.!?])(?=[A-Z][a-z]|[A-Z]{2})")


@dataclass(frozen=True)
class SentencePool:
    """Every sentence of the real abstracts, with word counts, and each abstract's
    number of sentences and words (the distributions the generator resamples)."""

    sentences: list[str]
    sentence_words: np.ndarray
    abstract_sentences: np.ndarray
    abstract_words: np.ndarray


def real_abstracts(data: Path = DATA) -> Iterator[str]:
    """SciFact abstract texts, then PubMedQA abstracts (their contexts joined)."""
    with open(data / "scifact" / "corpus.jsonl", encoding="utf-8") as lines:
        for line in lines:
            text = json.loads(line)["text"]
            if text.strip():
                yield text
    pubmedqa = json.loads((data / "pubmedqa" / "pqal_dev.json").read_text(encoding="utf-8"))
    for item in pubmedqa.values():
        yield " ".join(item["CONTEXTS"])


def sentence_pool(
    abstracts: Iterable[str], split: Callable[[str], list[str]] | None = None
) -> SentencePool:
    """Split each abstract into sentences (sciera's splitter unless ``split`` is given)."""
    if split is None:
        from sciera.corpus import split_sentences as split
    sentences: list[str] = []
    counts: list[int] = []
    words: list[int] = []
    for text in abstracts:
        parts = [s for s in split(_GLUED.sub(r"\1 ", text)) if s.split()]
        if parts:
            sentences.extend(parts)
            counts.append(len(parts))
            words.append(len(text.split()))
    if not sentences:
        raise ValueError("no sentences in the given abstracts")
    return SentencePool(
        sentences,
        np.array([len(s.split()) for s in sentences], dtype=np.int64),
        np.array(counts, dtype=np.int64),
        np.array(words, dtype=np.int64),
    )


def _body(pool: SentencePool, picks: np.ndarray, max_words: int) -> tuple[str, int, bool]:
    """The longest prefix of the picked sentences within ``max_words`` (at least one
    sentence); returns the text, its words and whether sentences were dropped."""
    cumulative = np.cumsum(pool.sentence_words[picks])
    keep = max(1, int(np.searchsorted(cumulative, max_words, side="right")))
    text = " ".join(pool.sentences[i] for i in picks[:keep])
    return text, int(cumulative[keep - 1]), keep < len(picks)


def generate(
    pool: SentencePool, n: int, seed: int, max_words: int = MAX_WORDS
) -> Iterator[tuple[dict[str, str], int, bool]]:
    """``n`` documents ``{"_id", "title", "text"}`` with the body's words and whether it
    was cut; streamed, and the first documents do not depend on ``n``."""
    rng = np.random.default_rng(seed)
    n_sentences = len(pool.sentences)
    made = 0
    while made < n:
        lengths = pool.abstract_sentences[rng.integers(0, len(pool.abstract_sentences), BLOCK)]
        titles = rng.integers(0, n_sentences, BLOCK)
        picks = rng.integers(0, n_sentences, int(lengths.sum()))
        ends = np.cumsum(lengths)
        for j in range(min(BLOCK, n - made)):
            text, words, cut = _body(pool, picks[ends[j] - lengths[j] : ends[j]], max_words)
            title = " ".join(pool.sentences[titles[j]].split()[:TITLE_WORDS])
            yield {"_id": f"syn{made:09d}", "title": title, "text": text}, words, cut
            made += 1


def write_corpus(
    pool: SentencePool, n: int, seed: int, path: Path, max_words: int = MAX_WORDS
) -> dict[str, Any]:
    """Write ``n`` documents to ``path`` (BEIR ``corpus.jsonl``, atomically) and return
    what was written: counts and mean words, beside the real abstracts' means."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    words = title_words = cut = 0
    with open(tmp, "w", encoding="utf-8") as out:
        for doc, body_words, was_cut in generate(pool, n, seed, max_words):
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
            words += body_words
            title_words += len(doc["title"].split())
            cut += was_cut
    os.replace(tmp, path)
    return {
        "documents": n,
        "seed": seed,
        "max_words": max_words,
        "words_per_passage_mean": round(words / n, 1),
        "title_words_mean": round(title_words / n, 1),
        "cut_to_max_words_fraction": round(cut / n, 4),
        "real_abstract_words_mean": round(float(pool.abstract_words.mean()), 1),
        "real_abstract_sentences_mean": round(float(pool.abstract_sentences.mean()), 2),
        "pool_sentences": len(pool.sentences),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--documents", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="the folder to write")
    parser.add_argument("--max-words", type=int, default=MAX_WORDS)
    args = parser.parse_args()
    pool = sentence_pool(real_abstracts())
    start = time.perf_counter()
    stats = write_corpus(pool, args.documents, args.seed, args.out / "corpus.jsonl", args.max_words)
    stats["generate_seconds"] = round(time.perf_counter() - start, 2)
    write_json(args.out / "synthetic.json", stats)


if __name__ == "__main__":
    main()
