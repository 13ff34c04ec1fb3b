"""The answering pipeline: retrieve -> rerank -> evidence -> generate, built from Settings.

Data contract between stages:

- retrieve: question -> ``Ranking`` of ``settings.rerank.depth`` candidates (stage = the
  first-stage name);
- rerank: -> ``Ranking`` of the passages kept for generation (DeepEra: those with score
  >= tau, at most top_k; other rerankers: the top_k);
- evidence: -> ``EvidenceResult`` (evidence per passage, sufficiency verdict, CR);
- generate: -> ``Answer`` whose ``[n]`` markers index ``Answer.evidence``.

``Answer.trace["pipeline"]`` records every stage: timings, the candidate table (score,
kept or filtered and why), the full DeepEra trace, CR and LLM usage per stage.

``Pipeline.run(..., on_event=callback)`` also reports each stage as it ends (how the HTTP
server streams progress): ``callback(name, payload)`` with JSON-ready payloads, in order

- ``retrieved``: ``first_stage``, ``depth``, ``seconds``, ``candidates`` (rank, score,
  passage_id, doc_id, title, text);
- ``reranked``: ``reranker``, ``seconds``, ``candidates`` (the candidate table above),
  ``deepera`` (its trace: intent, every passage's score and fate) or None;
- ``evidence``: ``extractor``, ``seconds``, ``sufficient``, ``compression_ratio``,
  ``evidence`` (n, passage_id, title, score, summary);
- ``answer``: :func:`answer_dict` of the returned answer.

An exception raised by the callback stops the run (a server cancels abandoned work so).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.errors import require_query
from sciera.evidence.base import evidence_text
from sciera.settings import Settings, load_settings
from sciera.text import compression_ratio
from sciera.types import Answer, Evidence, Ranking, to_plain

if TYPE_CHECKING:
    from sciera.evidence.base import EvidenceExtractor
    from sciera.generate.base import Generator
    from sciera.llm.base import LLM
    from sciera.rerank.base import Reranker
    from sciera.retrieve.base import Retriever


@dataclass
class Pipeline:
    retriever: Retriever
    reranker: Reranker
    extractor: EvidenceExtractor
    generator: Generator
    settings: Settings
    llm: LLM | None = None

    @classmethod
    def from_settings(
        cls, corpus: str | Path, settings: Settings | None = None, *, llm: LLM | None = None
    ) -> Pipeline:
        """Open the corpus indexes and build every stage; one LLM is shared by all."""
        from sciera.evidence.registry import make_extractor
        from sciera.generate.registry import make_generator
        from sciera.rerank.registry import make_reranker, uses_llm
        from sciera.retrieve.open import open_retriever

        settings = settings or load_settings()
        retriever = open_retriever(corpus, settings.retrieve.retriever, settings)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        name, evidence = settings.rerank.reranker, settings.answer.evidence
        kwargs: dict[str, Any] = {"llm": llm} if uses_llm(name) else {}
        if name == "deepera":  # summaries are DeepEra's evidence; skip them otherwise
            kwargs["use_summary"] = evidence == "deepera"
        reranker = make_reranker(name, settings, **kwargs)
        ext_kwargs: dict[str, Any] = {"llm": llm}
        if evidence == "deepera":
            ext_kwargs = {"reranker": reranker if name == "deepera" else None}
            if name != "deepera":
                ext_kwargs["reranker"] = make_reranker("deepera", settings, llm=llm)
        extractor = make_extractor(evidence, settings, **ext_kwargs)
        generator = make_generator("llm", settings, llm=llm)
        return cls(retriever, reranker, extractor, generator, settings, llm)

    def run(
        self,
        question: str,
        question_type: str | None = None,
        *,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> Answer:
        """Answer ``question``; ``on_event`` hears each stage end (see the module docstring)."""
        question = require_query(question, "question")

        def emit(name: str, payload: Callable[[], dict[str, Any]]) -> None:
            if on_event is not None:  # payloads are built only for a listener
                on_event(name, payload())

        s = self.settings
        reranker_name = getattr(self.reranker, "name", type(self.reranker).__name__)
        seconds: dict[str, float] = {}
        t = time.perf_counter()
        candidates = self.retriever.search(question, s.rerank.depth)
        seconds["retrieve"] = time.perf_counter() - t
        emit(
            "retrieved",
            lambda: {
                "first_stage": s.retrieve.retriever,
                "depth": s.rerank.depth,
                "seconds": seconds["retrieve"],
                "candidates": ranking_rows(candidates),
            },
        )

        t = time.perf_counter()
        deepera: dict[str, Any] | None = None
        if hasattr(self.reranker, "rerank_with_trace"):
            kept, trace = self.reranker.rerank_with_trace(question, candidates)
            deepera = trace.to_dict()
            table = _deepera_table(candidates, deepera)
        else:
            kept = self.reranker.rerank(question, candidates).top(s.rerank.top_k)
            table = _topk_table(candidates, kept)
        seconds["rerank"] = time.perf_counter() - t
        emit(
            "reranked",
            lambda: {
                "reranker": reranker_name,
                "seconds": seconds["rerank"],
                "candidates": table,
                "deepera": to_plain(deepera),
            },
        )

        t = time.perf_counter()
        ev = self.extractor.extract(question, kept)
        seconds["evidence"] = time.perf_counter() - t
        emit(
            "evidence",
            lambda: {
                "extractor": self.extractor.name,
                "seconds": seconds["evidence"],
                "sufficient": ev.sufficient,
                "compression_ratio": ev.compression_ratio,
                "evidence": _evidence_rows(ev.evidence),
            },
        )

        t = time.perf_counter()
        qtype = question_type or (
            None if s.answer.question_type == "auto" else s.answer.question_type
        )
        answer = self.generator.answer(question, ev.evidence, qtype, sufficient=ev.sufficient)
        seconds["generate"] = time.perf_counter() - t

        info: dict[str, Any] = {
            "first_stage": s.retrieve.retriever,
            "depth": s.rerank.depth,
            "reranker": reranker_name,
            "evidence_extractor": self.extractor.name,
            "candidates": table,
            "sufficient": ev.sufficient,
            "compression_ratio": ev.compression_ratio,
            "compression_ratio_candidates": compression_ratio(
                [it.passage.contents for it in candidates], evidence_text(ev.evidence)
            ),
            "evidence_trace": dict(ev.trace),
            "seconds": seconds,
        }
        if deepera is not None:
            info["deepera"] = deepera
        usage = getattr(self.llm, "usage", None)
        if callable(usage):
            info["llm_usage"] = usage().by_stage
        answer = replace(answer, trace={**answer.trace, "pipeline": info})
        emit("answer", lambda: answer_dict(answer))
        return answer


def ranking_rows(ranking: Ranking, *, provenance: bool = False) -> list[dict[str, Any]]:
    """A ranking as JSON-ready rows (passage text as stored: data, never markup); with
    ``provenance``, what each stage recorded about the passage."""
    return [
        {
            "rank": it.rank,
            "score": it.score,
            "passage_id": it.passage_id,
            "doc_id": it.passage.doc_id,
            "title": it.passage.title,
            "text": it.passage.text,
            **({"provenance": to_plain(it.provenance)} if provenance else {}),
        }
        for it in ranking
    ]


def _deepera_table(candidates: Ranking, trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    titles = {it.passage_id: it.passage.title for it in candidates}
    return [
        {
            "passage_id": p["passage_id"],
            "title": titles.get(p["passage_id"], ""),
            "first_stage_rank": p["first_stage_rank"],
            "score": p["score"],
            "graded": p["grade_expectation"] is not None,  # else score is only a bound
            "kept": p["kept"],
            "why": p["filter_reason"],
        }
        for p in trace["passages"]
    ]


def _topk_table(candidates: Ranking, kept: Ranking) -> list[dict[str, Any]]:
    scores = {it.passage_id: it.score for it in kept}
    return [
        {
            "passage_id": it.passage_id,
            "title": it.passage.title,
            "first_stage_rank": it.rank,
            "score": scores.get(it.passage_id, it.score),
            "kept": it.passage_id in scores,
            "why": "" if it.passage_id in scores else "below the top_k",
        }
        for it in candidates
    ]


def ask(
    question: str,
    corpus: str | Path,
    preset: str | None = None,
    *,
    question_type: str | None = None,
    llm: LLM | None = None,
    **overrides: Any,
) -> Answer:
    """Answer ``question`` over the ingested, indexed ``corpus`` directory.

    ``overrides`` are settings sections, e.g. ``answer={"evidence": "rational"}`` or
    ``retrieve={"retriever": "bm25"}``; ``llm`` reuses an already built LLM.
    """
    settings = load_settings(preset, **overrides)
    return Pipeline.from_settings(corpus, settings, llm=llm).run(question, question_type)


def answer_dict(answer: Answer) -> dict[str, Any]:
    """The answer as plain JSON-ready data (mappings and tuples converted)."""
    return {
        "question": answer.question,
        "question_type": answer.question_type,
        "text": answer.text,
        "exact": list(answer.trace.get("exact", ())),
        "insufficient": answer.insufficient,
        "citations": [
            {"marker": c.marker, "passage_id": c.passage_id, "title": c.title}
            for c in answer.citations
        ],
        "evidence": _evidence_rows(answer.evidence),
        "trace": to_plain(answer.trace),
    }


def _evidence_rows(evidence: Sequence[Evidence]) -> list[dict[str, Any]]:
    """The ``evidence`` rows of :func:`answer_dict` and of the ``evidence`` event."""
    return [
        {
            "n": i + 1,
            "passage_id": e.passage.passage_id,
            "title": e.passage.title,
            "score": e.score,
            "summary": e.summary,
        }
        for i, e in enumerate(evidence)
    ]
