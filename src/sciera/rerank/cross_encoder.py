"""Cross-encoder reranker: a sentence-transformers ``CrossEncoder`` by model name or local path.

No cross-encoder weights ship with sciera or on PyPI. With internet access, pass a hub
name (``cross-encoder/ms-marco-MiniLM-L6-v2``, ``BAAI/bge-reranker-base`` ...); offline,
pass a local directory saved with ``save_pretrained``. The test suite builds a tiny
randomly initialised BERT classifier directory to exercise the loading and scoring path
(its scores are meaningless; it checks plumbing, not quality).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sciera.errors import require
from sciera.rerank.base import rescored
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.settings import Settings


class CrossEncoderReranker:
    """Scores (query, passage.contents) pairs jointly; higher = more relevant.

    Scores are the model's outputs (sentence-transformers applies a sigmoid to
    single-label models by default), so they are comparable within one model only.
    """

    name = "cross_encoder"

    def __init__(
        self, model: str, *, max_length: int = 512, batch_size: int = 16, device: str = "cpu"
    ) -> None:
        st = require("sentence_transformers", "dense")
        self.model_name = model
        self.batch_size = batch_size
        self._model = st.CrossEncoder(model, max_length=max_length, device=device)

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> CrossEncoderReranker:
        model = kwargs.pop("model", None)
        if not model:
            raise ValueError(
                "cross_encoder needs a model name or local path (model=...), e.g. "
                "'cross-encoder/ms-marco-MiniLM-L6-v2' or a directory saved with save_pretrained"
            )
        return cls(model, **kwargs)

    def _scores(self, query: str, passages: Sequence[Passage]) -> list[float]:
        if not passages:
            return []
        pairs = [(query, p.contents) for p in passages]
        out = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return [float(v) for v in out]

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        scores = self._scores(query, [it.passage for it in ranking.items])
        return rescored(ranking, scores, self.name, query=query)

    def score(self, query: str, passage: Passage) -> float:
        return self._scores(query, [passage])[0]
