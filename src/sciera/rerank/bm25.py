"""Lexical reranker: Okapi BM25 of the query against the passages of the ranking itself.

Self-contained (no corpus index): document frequencies, N and the average length come
from the passages being reranked, so a fixed candidate pool (an SSLI instance, a
PubMedQA context list) can be rescored by term statistics alone. Tokens (lowercase,
stopwords, stems), k1, b and the BM25 variant are those of the BM25 retriever
(:class:`~sciera.settings.BM25Settings`, :class:`~sciera.retrieve.tokenize.BM25Tokenizer`,
:func:`~sciera.retrieve.bm25.index_token_ids`). With the default ``lucene`` method:

    score(q, p) = Σ_{t in q} ln(1 + (N - df_t + 0.5) / (df_t + 0.5))
                  · tf_{t,p} / (tf_{t,p} + k1 · (1 - b + b · |p| / avg|p|))

A query with no term in the passages scores every passage 0 (ties keep the input order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sciera.rerank.base import RerankerBase, rescored
from sciera.retrieve.bm25 import index_token_ids
from sciera.retrieve.tokenize import BM25Tokenizer
from sciera.settings import BM25Settings
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.settings import Settings


class BM25Reranker(RerankerBase):
    """Scores each passage by BM25 with IDF over the ranking's own passages."""

    name = "bm25"

    def __init__(self, settings: BM25Settings | None = None) -> None:
        self.settings = settings or BM25Settings()
        self._tokenizer = BM25Tokenizer(self.settings)

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> BM25Reranker:
        """``k1``, ``b``, ``method``, ``stemmer``, ``stopwords`` override ``settings.bm25``."""
        unknown = sorted(set(kwargs) - set(BM25Settings.model_fields))
        if unknown:
            raise ValueError(f"bm25 reranker: unknown parameters {unknown}")
        bm25 = BM25Settings.model_validate({**settings.bm25.model_dump(), **kwargs})
        return cls(bm25)

    def _scores(self, query: str, passages: Sequence[Passage]) -> list[float]:
        vocab: dict[str, int] = {}
        corpus_ids = [
            [vocab.setdefault(t, len(vocab)) for t in self._tokenizer.tokens(p.contents)]
            for p in passages
        ]
        if not vocab:  # no passage (or none with an indexable token)
            return [0.0] * len(passages)
        # numpy: a pool of tens of passages is scored in well under a millisecond, while
        # numba would compile its kernels first in every process
        model = index_token_ids(corpus_ids, vocab, self.settings, backend="numpy")
        known = model.vocab_dict
        ids = [known[t] for t in self._tokenizer.tokens(query) if t in known]
        if not ids:
            return [0.0] * len(passages)
        return [float(s) for s in model.get_scores_from_ids(ids)]

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        scores = self._scores(query, [it.passage for it in ranking.items])
        return rescored(ranking, scores, self.name, query=query)

    def score(self, query: str, passage: Passage) -> float:
        """BM25 of one passage as its own collection (N = 1: IDF ln(1 + 0.5 / 1.5))."""
        return self._scores(query, [passage])[0]
