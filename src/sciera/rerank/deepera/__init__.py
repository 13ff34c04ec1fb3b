"""DeepEra, the deep evidence reranking agent (paper Algorithm 1): intention recognition ->
relevance assessment (steps 1-2; filtering is the filter stage, summaries the deepera
evidence extractor)."""

from sciera.rerank.deepera.agent import DeepEraReranker
from sciera.rerank.deepera.trace import DeepEraTrace, PassageTrace

__all__ = ["DeepEraReranker", "DeepEraTrace", "PassageTrace"]
