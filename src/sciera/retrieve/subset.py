"""Retrieval restricted to a set of documents (an experiment's sub-corpus).

:class:`DocumentRetriever` wraps a first stage (BM25, dense or hybrid alike) and keeps
only passages of the given documents, widening the inner stage's depth as
:class:`~sciera.retrieve.sections.FilterRetriever` does, up to every passage of the
corpus, so ``k`` passages survive whenever the documents have them. Scores are the inner
stage's over the whole corpus (BM25's statistics and a hybrid's fused ranks are not
recomputed on the subset).
"""

from __future__ import annotations

from collections.abc import Iterable

from sciera.errors import ScieraError
from sciera.retrieve.base import Retriever
from sciera.retrieve.sections import FilterRetriever
from sciera.types import Passage


class DocumentRetriever(FilterRetriever):
    """Wraps a retriever to return only passages of ``doc_ids``."""

    def __init__(self, inner: Retriever, doc_ids: Iterable[str], max_depth: int) -> None:
        self.doc_ids = frozenset(doc_ids)
        if not self.doc_ids:
            raise ScieraError("subcorpus: no document to search")
        super().__init__(inner, "subcorpus", max(max_depth, 1))

    def keeps(self, passage: Passage) -> bool:
        return passage.doc_id in self.doc_ids


def keep_documents(
    retriever: Retriever, doc_ids: Iterable[str] | None, max_depth: int
) -> Retriever:
    """``retriever`` keeping only passages of ``doc_ids`` (searching at most ``max_depth``
    passages deep: the corpus's passage count makes it exact), or ``retriever`` itself
    when ``doc_ids`` is None."""
    if doc_ids is None:
        return retriever
    return DocumentRetriever(retriever, doc_ids, max_depth)
