"""Bi-encoder reranker: cosine similarity of query and passage embeddings (a cheap baseline)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from sciera.rerank.base import RerankerBase, rescored
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.settings import Settings


class _Embedder(Protocol):
    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.atleast_2d(np.asarray(x, dtype=np.float32))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


class EmbeddingReranker(RerankerBase):
    """Scores each passage by cosine(query, passage.contents) with any ``sciera.embed`` embedder."""

    name = "embedding"

    def __init__(self, embedder: _Embedder) -> None:
        self.embedder = embedder

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> EmbeddingReranker:
        """``embedder=<object>``, or ``backend``/``model`` overriding ``settings.embed`` (e.g.
        ``{backend: e5}`` in an experiment's ``reranker_params`` to compare embedders).
        Passage vectors go through the persistent vector cache unless settings turn it off."""
        if "embedder" in kwargs:
            return cls(kwargs["embedder"])
        from sciera.embed.cache import with_cache
        from sciera.embed.registry import create_embedder
        from sciera.settings import EmbedSettings

        unknown = sorted(set(kwargs) - set(EmbedSettings.model_fields))
        if unknown:
            raise ValueError(f"embedding reranker: unknown parameters {unknown}")
        embed = EmbedSettings.model_validate({**settings.embed.model_dump(), **kwargs})
        return cls(
            with_cache(
                create_embedder(embed, settings.home), settings.model_copy(update={"embed": embed})
            )
        )

    def _scores(self, query: str, passages: Sequence[Passage]) -> list[float]:
        if not passages:
            return []
        q = _unit(self.embedder.embed_queries([query]))[0]
        p = _unit(self.embedder.embed_passages([x.contents for x in passages]))
        return [float(v) for v in p @ q]

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        scores = self._scores(query, [it.passage for it in ranking.items])
        return rescored(ranking, scores, self.name, query=query)

    def score(self, query: str, passage: Passage) -> float:
        return self._scores(query, [passage])[0]
