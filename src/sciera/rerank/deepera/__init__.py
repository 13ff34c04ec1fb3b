"""DeepEra, the deep evidence reranking agent (paper Algorithm 1): intention recognition ->
relevance assessment -> evidence filtering (score >= tau) -> evidence summarization."""

from sciera.rerank.deepera.agent import DeepEraReranker
from sciera.rerank.deepera.trace import DeepEraTrace, PassageTrace

__all__ = ["DeepEraReranker", "DeepEraTrace", "PassageTrace"]
