"""Rerankers: reorder first-stage candidates. See :mod:`sciera.rerank.base` for the protocol
and :mod:`sciera.rerank.registry` for the backends by name."""

from sciera.rerank.base import Reranker
from sciera.rerank.registry import RERANKERS, make_reranker

__all__ = ["RERANKERS", "Reranker", "make_reranker"]
