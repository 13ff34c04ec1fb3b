"""The pipeline's verify stage: the top-ranked abstracts of a claim (or yes/no question),
their rationale sentences and verdicts, and the overall verdict.

It reads the reranked order *before* the filter's tau (tau decides which passages are
shown as kept evidence, not whether the claim can be decided): the first ``abstracts``
distinct documents, leaving out passages the reranker excluded (an injection attempt,
an unparseable grade). Each document's sentences come from the corpus store, where
ingestion kept them (``sentences=``, a :class:`SentenceSource`), so a rationale is a
(document, sentence index) pair into the abstract; without a store (candidate pools such
as PubMedQA contexts or BioASQ snippets) the document's passages in the ranking are split
into sentences with the corpus splitter. A store ingested before sentences were kept
raises its one-line "re-ingest" error when ``strict``, else the passages are split and the
trace says so. When the ranking's scores are calibrated P(relevant) (a cross-encoder's), each
abstract carries its best passage's score as its relevance, for the policy's gate
(:class:`~sciera.verify.verifier.VerifyPolicy` ``min_relevance``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from sciera.errors import ScieraError
from sciera.filter.threshold import EXCLUDE
from sciera.types import Ranking, Verification, to_plain
from sciera.verify.base import AbstractText, RationaleSelector, VerdictModel, kind_of
from sciera.verify.verifier import VerifyPolicy, verify_abstracts

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings
    from sciera.verify.decider import QuestionDecider


class SentenceSource(Protocol):
    """Where a document's sentences come from: ``{doc_id: (title, [sentence, ...])}``."""

    def sentences(self, doc_ids: Sequence[str]) -> Mapping[str, tuple[str, Sequence[str]]]: ...


class VerifyStage:
    """Verify a claim against the top ``abstracts`` documents of a ranking."""

    name = "verify"

    def __init__(
        self,
        selector: RationaleSelector,
        verdict: VerdictModel,
        policy: VerifyPolicy | None = None,
        *,
        abstracts: int = 5,
        sentences: SentenceSource | None = None,
        strict: bool = False,
        decider: QuestionDecider | None = None,
    ) -> None:
        """``decider``: decides a yes/no question's overall verdict from its abstracts'
        verdicts and the LLM's reading of all of them (:mod:`sciera.verify.decider`)."""
        if abstracts < 1:
            raise ValueError(f"abstracts must be at least 1, got {abstracts}")
        self.selector, self.verdict = selector, verdict
        self.policy = policy or VerifyPolicy()
        self.abstracts, self.source, self.strict = abstracts, sentences, strict
        self.decider = decider

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        sentences: SentenceSource | None = None,
        llm: LLM | None = None,
        **kwargs: Any,
    ) -> VerifyStage:
        """The selector and verdict model ``settings.verify`` names (the trained ones share
        one loaded encoder; an LLM verdict model gets ``llm``), with the decision policy the
        verdict model's card states."""
        from sciera.verify.registry import LLM_VERDICTS, make_selector, make_verdict

        v = settings.verify
        selector = kwargs.pop("selector", None) or make_selector(
            v.selector, settings, model=v.model
        )
        with_llm = {"llm": llm} if v.verdict in LLM_VERDICTS and llm is not None else {}
        verdict = kwargs.pop("verdict", None) or make_verdict(
            v.verdict, settings, model=v.model, **with_llm
        )
        card = getattr(verdict, "card", None) or {}
        policy = kwargs.pop("policy", None) or VerifyPolicy.from_card(card)
        kwargs.setdefault("abstracts", v.abstracts)
        kwargs.setdefault("strict", v.require_sentences)
        if v.decider and "decider" not in kwargs and hasattr(verdict, "question_decider"):
            kwargs["decider"] = verdict.question_decider()
        return cls(selector, verdict, policy, sentences=sentences, **kwargs)

    def documents(self, ranking: Ranking) -> list[str]:
        """The first ``abstracts`` distinct documents, excluded passages left out."""
        docs: list[str] = []
        for it in ranking:
            own = it.provenance.get(ranking.stage)
            if isinstance(own, Mapping) and own.get(EXCLUDE):
                continue
            if it.passage.doc_id not in docs:
                docs.append(it.passage.doc_id)
            if len(docs) >= self.abstracts:
                break
        return docs

    def _texts(
        self,
        ranking: Ranking,
        docs: list[str],
        trace: dict[str, Any],
        source: SentenceSource | None,
    ) -> list[AbstractText]:
        stored: Mapping[str, tuple[str, Sequence[str]]] = {}
        if source is not None:
            try:
                stored = source.sentences(docs)
                trace["sentences"] = "store"
            except ScieraError as exc:
                if self.strict:
                    raise
                trace["sentences"] = f"split from the passages ({exc})"
        else:
            trace["sentences"] = "split from the passages"
        out = []
        for doc in docs:
            if doc in stored:
                title, sents = stored[doc]
                out.append(AbstractText(doc, title, tuple(sents)))
            else:
                out.append(_split(ranking, doc))
        return out

    def verify(
        self, claim: str, ranking: Ranking, *, sentences: SentenceSource | None = None
    ) -> tuple[Verification, dict[str, Any]]:
        """(the verification, its JSON-ready trace: the documents read, where their
        sentences came from, seconds). ``sentences`` replaces the stage's source (a
        candidate pool's own abstracts)."""
        t0 = time.perf_counter()
        trace: dict[str, Any] = {
            "selector": self.selector.name,
            "verdict_model": self.verdict.name,
            "policy": to_plain(self.policy),
        }
        docs = self.documents(ranking)
        source = sentences if sentences is not None else self.source
        texts = self._texts(ranking, docs, trace, source) if docs else []
        if ranking.calibrated:  # the reranker's P(relevant): the policy's relevance gate
            best: dict[str, float] = {}
            for it in ranking:
                best[it.passage.doc_id] = max(best.get(it.passage.doc_id, 0.0), it.score)
            texts = [replace(t, relevance=best.get(t.doc_id)) for t in texts]
            trace["relevance"] = {t.doc_id: t.relevance for t in texts}
        result = verify_abstracts(claim, texts, self.selector, self.verdict, self.policy)
        if self.decider is not None and kind_of(claim) == "question":
            result, trace["decider"] = self.decider.decide(claim, result)
        trace["documents"] = docs
        trace["seconds"] = time.perf_counter() - t0
        return result, trace


def _split(ranking: Ranking, doc: str) -> AbstractText:
    """A document's sentences from its passages in the ranking (in passage order)."""
    from sciera.corpus.sentences import split_sentences

    passages = sorted(
        {it.passage.passage_id: it.passage for it in ranking if it.passage.doc_id == doc}.values(),
        key=lambda p: p.index,
    )
    title = passages[0].title if passages else ""
    sentences: list[str] = []
    for p in passages:
        sentences.extend(s for s in split_sentences(p.text) if s.strip())
    return AbstractText(doc, title, tuple(sentences))


def verification_json(v: Verification) -> dict[str, Any]:
    """A verification as JSON-ready data (one serializer for the CLI, the server and MCP)."""
    return {
        "claim": v.claim,
        "label": v.label,
        "confidence": v.confidence,
        "conflicting": v.conflicting,
        "supporting": list(v.supporting),
        "contradicting": list(v.contradicting),
        "abstracts": [
            {
                "doc_id": a.doc_id,
                "title": a.title,
                "label": a.label,
                "confidence": a.confidence,
                "relevance": a.relevance,
                "probs": a.probabilities,
                "read": a.read,
                "rationales": [
                    {"index": r.index, "text": r.text, "score": r.score} for r in a.rationales
                ],
            }
            for a in v.verdicts
        ],
    }


def scifact_prediction(claim_id: str, v: Verification) -> dict[str, Any]:
    """SciFact's prediction format for one claim: every abstract with its label and
    rationale indices, most probable first (the abstract-level rationalized score reads the
    first three); NOT ENOUGH INFO ones are kept (they count as no prediction)."""
    return {
        "id": int(claim_id) if claim_id.isdigit() else claim_id,
        "evidence": {
            a.doc_id: {
                "label": a.label,
                "sentences": [r.index for r in sorted(a.rationales, key=lambda r: -r.score)],
            }
            for a in v.verdicts
        },
    }
