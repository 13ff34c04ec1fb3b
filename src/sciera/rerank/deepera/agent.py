"""DeepEra, the deep evidence reranking agent (paper Algorithm 1).

    intent  = recognize_intent(question)             # 1 JSON call (skipped: use_intent=False)
    for p in candidates: grade(p) = E[LLM grade | question, intent, p] / 10
    score(p) = calibrator(grade, first-stage features)       # raw grade without a calibrator
    kept     = [p : score >= tau] sorted by score, at most top_k   (use_filter=False: top_k only)
    summary(p) for p in kept                                 # skipped: use_summary=False

With ``scorer=`` a trained cross-encoder (``rerank.scorer = "cross_encoder"``) replaces the
LLM's grades: score(p) = the cross-encoder's P(relevant), calibrated on its own dev split
(alone or fused with the first-stage features, as its card chose), one batched forward
pass for all candidates; the LLM still reads the intent and writes the summaries.

``rerank`` returns only the kept passages (a documented subset of the input; possibly
empty when nothing passes tau); the full trace, with every candidate's score and why it
was filtered, comes from :meth:`DeepEraReranker.rerank_with_trace`, ``last_trace``, or
``provenance["deepera"]`` on each returned item.
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.llm.base import model_identity
from sciera.rerank.base import first_stage_key
from sciera.rerank.calibrate import Calibrator, find_calibrator, first_stage_features
from sciera.rerank.deepera import assess as assess_mod
from sciera.rerank.deepera.assess import Assessment, assess_passage
from sciera.rerank.deepera.filter import filter_evidence
from sciera.rerank.deepera.guard import injection_signals
from sciera.rerank.deepera.intent import PROMPT as INTENT_PROMPT
from sciera.rerank.deepera.intent import recognize_intent
from sciera.rerank.deepera.summarize import PROMPT as SUMMARY_PROMPT
from sciera.rerank.deepera.summarize import summarize_passage
from sciera.rerank.deepera.trace import DeepEraTrace, PassageTrace
from sciera.types import Passage, Ranking, ScoredPassage

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings

logger = logging.getLogger(__name__)
STAGE = "deepera"
LLM_FEATURES = ("grade", "p_yes")  # calibrator features that come from the LLM


def _stage(name: str) -> AbstractContextManager[Any]:
    from sciera.llm.accounting import stage

    return stage(name)


def _prompt_version(name: str) -> str:
    from sciera.llm.prompting import load_prompt

    return f"{name}@{load_prompt(name).version}"


def calibration_key(use_intent: bool = True) -> str:
    """What a calibrator is tied to besides the model: the grading prompt's version, and
    whether grades were conditioned on the structured intent (ablation v1 grades differ)."""
    version = _prompt_version(assess_mod.PROMPT)
    return version if use_intent else f"{version}+no_intent"


class DeepEraReranker:
    name = "deepera"

    def __init__(
        self,
        llm: LLM,
        *,
        tau: float = 0.8,
        top_k: int | None = 5,
        use_intent: bool = True,
        use_filter: bool = True,
        use_summary: bool = True,
        with_reason: bool = False,
        max_words: int = 200,
        scoring: str = "logprobs",
        calibrator: Calibrator | None = None,
        guard: bool = True,
        prune: bool = True,
        scorer: Any = None,
    ) -> None:
        if not 0.0 <= tau <= 1.0:
            raise ValueError(f"tau must be in [0, 1], got {tau}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1 (or None for no limit), got {top_k}")
        self.llm = llm
        self.tau, self.top_k = tau, top_k
        self.use_intent, self.use_filter, self.use_summary = use_intent, use_filter, use_summary
        self.with_reason, self.max_words, self.scoring = with_reason, max_words, scoring
        if scorer is not None and getattr(scorer, "calibrator", None) is None:
            raise ValueError(
                "a DeepEra scorer must give calibrated probabilities (tau is a probability): "
                "use a cross-encoder trained by `sciera train cross-encoder`"
            )
        self.scorer = scorer
        self.calibrator = None if scorer is not None else calibrator
        self.guard, self.prune = guard, prune
        self.calibrator_source = ""
        if self.calibrator is not None:
            calibrator.check_key(model_identity(llm.model_id), calibration_key(use_intent))
        self.last_trace: DeepEraTrace | None = None

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> DeepEraReranker:
        """``calibrator``: a Calibrator, a path to its JSON, ``"auto"`` (default: the artifact
        for this model and prompt under SCIERA_HOME/calibrators, else the one shipped in
        ``sciera/rerank/calibrators``, if either exists) or None."""
        llm = kwargs.pop("llm", None)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        kwargs.setdefault("tau", settings.rerank.tau)
        kwargs.setdefault("top_k", settings.rerank.top_k)
        scorer = kwargs.pop("scorer", settings.rerank.scorer)
        if scorer == "llm":
            scorer = None
        elif isinstance(scorer, str):
            from sciera.rerank.registry import make_reranker

            scorer = make_reranker(scorer, settings, model=settings.rerank.scorer_model)
        cal = kwargs.pop("calibrator", "auto")
        source = ""
        if scorer is not None:
            cal = None  # the scorer brings its own calibration
        elif cal == "auto":
            key = calibration_key(kwargs.get("use_intent", True))
            path = find_calibrator(settings.home, model_identity(llm.model_id), key)
            cal, source = (Calibrator.load(path), str(path)) if path else (None, "")
        elif isinstance(cal, str | Path):
            cal, source = Calibrator.load(cal), str(cal)
        agent = cls(llm, calibrator=cal, scorer=scorer, **kwargs)
        agent.calibrator_source = source
        return agent

    @classmethod
    def identity(cls, settings: Settings, **params: Any) -> str:
        """A trained scorer's identity (the LLM's own id is recorded apart); "" for none."""
        from sciera.rerank.registry import reranker_identity

        scorer = params.get("scorer", settings.rerank.scorer)
        if not isinstance(scorer, str) or scorer == "llm":
            return ""
        return reranker_identity(scorer, settings, {"model": settings.rerank.scorer_model})

    # -- protocol -------------------------------------------------------------------
    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        return self.rerank_with_trace(query, ranking)[0]

    def score(self, query: str, passage: Passage) -> float:
        """The agent's score for one passage on its own (first-stage rank 1)."""
        one = Ranking(query, (ScoredPassage(passage, 1.0, 1),), "")
        saved = (self.use_filter, self.use_summary, self.top_k, self.last_trace)
        self.use_filter, self.use_summary, self.top_k = False, False, None
        try:
            _, trace = self.rerank_with_trace(query, one)
        finally:
            self.use_filter, self.use_summary, self.top_k, self.last_trace = saved
        return trace.passages[0].score

    # -- the agent --------------------------------------------------------------------
    def _settings(self) -> dict[str, Any]:
        return {
            "use_intent": self.use_intent,
            "use_filter": self.use_filter,
            "use_summary": self.use_summary,
            "tau": self.tau,
            "top_k": self.top_k,
            "with_reason": self.with_reason,
            "max_words": self.max_words,
            "scoring": self.scoring,
            "guard": self.guard,
            "prune": self.prune,
            "scorer": self._scorer_name(),
        }

    def _scorer_name(self) -> str:
        if self.scorer is None:
            return "llm"
        return f"{self.scorer.name}:{getattr(self.scorer, 'model_name', '?')}"

    def _blocked(self, passage: Passage) -> str:
        if not self.guard:
            return ""
        signals = injection_signals(passage.contents)
        return f"instructions aimed at the grader ({', '.join(signals)})" if signals else ""

    def _score(self, a: Assessment, fs: dict[str, float]) -> tuple[float | None, float]:
        """(calibrated P(relevant) or None without a calibrator, the score filtering uses);
        an unparseable judgment scores 0."""
        if self.calibrator is None:
            return None, 0.0 if a.parse_failed else a.grade_expectation
        if a.parse_failed:
            return 0.0, 0.0
        p = self.calibrator.predict({"grade": a.grade_expectation, "p_yes": a.p_yes, **fs})
        return p, p

    def _bound(self, fs: dict[str, float]) -> float:
        """The highest score a passage with these first-stage features can get, whatever
        the LLM says (1.0 when that cannot be known: no calibrator, or pruning off)."""
        if not self.prune or self.calibrator is None:
            return 1.0
        return self.calibrator.upper_bound(fs, LLM_FEATURES)

    def _unreachable(self, bound: float, keepable: list[float]) -> str:
        """Why a passage cannot be kept whatever its grade ("" if it can): its bound is
        below tau, or below the top_k passages already graded. Candidates are graded in
        order of bound, so this skips LLM calls without changing what is kept."""
        if self.use_filter and bound < self.tau:
            return f"not graded: at most {bound:.3f} < tau {self.tau:.2f} at any grade"
        if self.top_k is not None and len(keepable) >= self.top_k:
            kth = sorted(keepable, reverse=True)[self.top_k - 1]
            if kth > bound:
                return (
                    f"not graded: at most {bound:.3f} at any grade, below the "
                    f"{self.top_k} passages already kept"
                )
        return ""

    def rerank_with_trace(self, query: str, ranking: Ranking) -> tuple[Ranking, DeepEraTrace]:
        t_start = time.perf_counter()
        stage_seconds: dict[str, float] = {}
        ptok = ctok = 0
        items = list(ranking.items)
        intent = None
        fallback, intent_error = False, ""
        prompts = {"assess": _prompt_version(assess_mod.PROMPT)}

        def recognize() -> None:
            nonlocal intent, fallback, intent_error, ptok, ctok
            with _stage("deepera.intent"):
                res = recognize_intent(self.llm, query)
            intent, fallback, intent_error = res.intent, res.fallback, res.error
            ptok, ctok = ptok + res.prompt_tokens, ctok + res.completion_tokens
            stage_seconds["intent"] = res.seconds
            prompts["intent"] = _prompt_version(INTENT_PROMPT)
            if fallback:
                logger.warning("deepera: intent failed (%s); neutral intent", intent_error)

        # the LLM's grades read the intent; a trained scorer does not, so with one the
        # intent is recognised only when a kept passage is summarised
        if self.use_intent and self.scorer is None:
            recognize()

        need_yes = self.calibrator is not None and "p_yes" in self.calibrator.features
        t0 = time.perf_counter()
        fs = first_stage_features([it.score for it in items], [it.rank for it in items])
        dropped = [self._blocked(it.passage) for it in items]  # guard, then pruning
        bounds = [self._bound(f) for f in fs]
        assessments: list[Assessment | None] = [None] * len(items)
        calibrated: list[float | None] = [None] * len(items)
        scores = [0.0] * len(items)
        keepable: list[float] = []  # scores of graded passages the filter would keep
        if self.scorer is not None:
            with _stage("deepera.assess"):
                probs, _ = self.scorer.assess(query, ranking)
            for i, p in enumerate(probs):
                if not dropped[i]:
                    calibrated[i] = scores[i] = p
        with _stage("deepera.assess"):
            for i in (
                []
                if self.scorer is not None
                else sorted(range(len(items)), key=lambda i: (-bounds[i], i))
            ):
                if dropped[i]:
                    continue
                dropped[i] = self._unreachable(bounds[i], keepable)
                if dropped[i]:
                    scores[i] = bounds[i]
                    continue
                a = assess_passage(
                    self.llm,
                    query,
                    intent,
                    items[i].passage,
                    max_words=self.max_words,
                    with_reason=self.with_reason,
                    with_yes=need_yes,
                    scoring=self.scoring,
                )
                assessments[i] = a
                ptok, ctok = ptok + a.prompt_tokens, ctok + a.completion_tokens
                calibrated[i], scores[i] = self._score(a, fs[i])
                if not a.parse_failed and (not self.use_filter or scores[i] >= self.tau):
                    keepable.append(scores[i])
        stage_seconds["assess"] = time.perf_counter() - t0
        decisions = filter_evidence(
            scores,
            tau=self.tau,
            top_k=self.top_k,
            use_filter=self.use_filter,
            failed=[a is not None and a.parse_failed for a in assessments],
            blocked=dropped,
        )

        summaries: dict[int, tuple[str, int, int]] = {}
        if (
            self.use_intent
            and intent is None
            and self.use_summary
            and any(d.kept for d in decisions)
        ):
            recognize()
        if self.use_summary:
            t0 = time.perf_counter()
            prompts["summarize"] = _prompt_version(SUMMARY_PROMPT)
            with _stage("deepera.summarize"):
                for d in decisions:
                    if d.kept:
                        passage = items[d.index].passage
                        text, c = summarize_passage(
                            self.llm, query, intent, passage, max_words=self.max_words
                        )
                        summaries[d.index] = (text, c.prompt_tokens, c.completion_tokens)
                        ptok, ctok = ptok + c.prompt_tokens, ctok + c.completion_tokens
            stage_seconds["summarize"] = time.perf_counter() - t0

        traces: list[PassageTrace] = []
        kept_items: list[ScoredPassage] = []
        prev = first_stage_key(ranking)
        for d in decisions:
            it, a = items[d.index], assessments[d.index]
            summary, sp, sc = summaries.get(d.index, ("", 0, 0))
            pt = PassageTrace(
                passage_id=it.passage_id,
                first_stage_rank=it.rank,
                first_stage_score=it.score,
                grade_expectation=None if a is None else a.grade_expectation,
                grade_mass=0.0 if a is None else a.grade_mass,
                calibrated=calibrated[d.index],
                score=d.score,
                kept=d.kept,
                filter_reason=d.reason,
                reason="" if a is None else a.reason,
                summary=summary,
                parse_failed=a is not None and a.parse_failed,
                prompt_tokens=(0 if a is None else a.prompt_tokens) + sp,
                completion_tokens=(0 if a is None else a.completion_tokens) + sc,
                seconds=0.0 if a is None else a.seconds,
            )
            traces.append(pt)
            if d.kept and (a is not None or self.scorer is not None):
                prov = dict(it.provenance)
                prov.setdefault(prev, {"score": it.score, "rank": it.rank})
                prov[STAGE] = {
                    "score": d.score,
                    "grade_expectation": None if a is None else a.grade_expectation,
                    "calibrated": calibrated[d.index],
                    "scorer": self._scorer_name(),
                    "reason": "" if a is None else a.reason,
                    "summary": summary,
                    "intent": None if intent is None else intent.intent,
                }
                kept_items.append(ScoredPassage(it.passage, d.score, len(kept_items) + 1, prov))

        if self.scorer is not None:
            mode = getattr(self.scorer, "score_mode", "calibrated")
            source = f"{self._scorer_name()} P(relevant), {mode}, calibrated on its dev split"
        elif self.calibrator is not None:
            source = f"calibrated: {self.calibrator_source or 'in-memory calibrator'}"
        else:
            source = "raw grade expectation (no calibrator)"
        trace = DeepEraTrace(
            query=query,
            intent=intent,
            intent_fallback=fallback,
            intent_error=intent_error,
            settings=self._settings(),
            model_id=self.llm.model_id,
            prompt_versions=prompts,
            score_source=source,
            passages=tuple(traces),
            kept_ids=tuple(it.passage_id for it in kept_items),
            prompt_tokens=ptok,
            completion_tokens=ctok,
            seconds=time.perf_counter() - t_start,
            stage_seconds=stage_seconds,
        )
        self.last_trace = trace
        return Ranking(query, tuple(kept_items), STAGE), trace
