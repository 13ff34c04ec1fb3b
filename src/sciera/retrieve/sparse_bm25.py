"""BM25 as sparse vectors, for engines that score sparse dot products (Qdrant).

Lucene's BM25 (bm25s' ``lucene`` method) splits into a document side and a query side:

    score(q, d) = sum over query tokens t of idf(t) * tf(t, d) / (tf(t, d) + norm(d))
    norm(d)     = k1 * (1 - b + b * |d| / avgdl)
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

A document's vector holds the tf part per token (``k1``, ``b`` and ``avgdl`` fixed at
index time); a query's holds each token's count (a repeated token counts again, as in
bm25s); Qdrant's ``IDF`` modifier supplies idf(t) from the collection's own document
frequencies, with this very formula. Tokens are :class:`~sciera.retrieve.tokenize.BM25Tokenizer`'s,
so the sparse path sees the tokens the embedded bm25s path sees, and token ids come from a
vocabulary built over the corpus (a query token outside it matches nothing, as in bm25s).

Only the ``lucene`` method splits this way (the others' idf or length terms do not), so
other methods are refused.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from sciera.errors import ScieraError
from sciera.retrieve.tokenize import BM25Tokenizer
from sciera.settings import BM25Settings

VOCAB_FILE = "sparse_bm25.json"


class SparseBM25:
    def __init__(self, settings: BM25Settings, vocab: dict[str, int], avgdl: float, n: int) -> None:
        if settings.method != "lucene":
            raise ScieraError(
                f"BM25 as sparse vectors supports the lucene method only, not {settings.method!r}"
            )
        self.settings, self.vocab, self.avgdl, self.n = settings, vocab, float(avgdl), int(n)
        self._tokenizer = BM25Tokenizer(settings)

    @classmethod
    def fit(cls, texts: Iterable[str], settings: BM25Settings) -> SparseBM25:
        """The vocabulary and mean length of ``texts`` (one pass; tokens are not kept)."""
        tokenizer = BM25Tokenizer(settings)
        vocab: dict[str, int] = {}
        total = n = 0
        for text in texts:
            tokens = tokenizer.tokens(text)
            for t in tokens:
                vocab.setdefault(t, len(vocab))
            total += len(tokens)
            n += 1
        if not vocab:
            raise ScieraError("nothing to index: the passages contain no indexable tokens")
        return cls(settings, vocab, total / n, n)

    def document(self, text: str) -> tuple[list[int], list[float]]:
        """(token ids, tf weights) of one passage, ids ascending."""
        tokens = self._tokenizer.tokens(text)
        k1, b = self.settings.k1, self.settings.b
        norm = k1 * (1 - b + b * len(tokens) / self.avgdl)
        counts = Counter(self.vocab[t] for t in tokens if t in self.vocab)
        ids = sorted(counts)
        return ids, [counts[i] / (counts[i] + norm) for i in ids]

    def query(self, text: str) -> tuple[list[int], list[float]]:
        """(token ids, counts) of a query, ids ascending; unknown tokens dropped."""
        counts = Counter(self.vocab[t] for t in self._tokenizer.tokens(text) if t in self.vocab)
        ids = sorted(counts)
        return ids, [float(counts[i]) for i in ids]

    def save(self, directory: str | Path) -> None:
        data = {
            "settings": self.settings.model_dump(),
            "avgdl": self.avgdl,
            "n": self.n,
            "vocab": self.vocab,
        }
        Path(directory, VOCAB_FILE).write_text(json.dumps(data), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path) -> SparseBM25:
        data = json.loads(Path(directory, VOCAB_FILE).read_text(encoding="utf-8"))
        settings = BM25Settings.model_validate(data["settings"])
        return cls(settings, data["vocab"], data["avgdl"], data["n"])
