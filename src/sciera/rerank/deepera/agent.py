"""DeepEra, the deep evidence reranking agent (paper Algorithm 1, steps 1 and 2).

    intent  = recognize_intent(question)             # 1 JSON call (skipped: use_intent=False)
    for p in candidates: grade(p) = E[LLM grade | question, intent, p] / 10
    score(p) = calibrator(grade, first-stage features)       # raw grade without a calibrator

With ``scorer=`` a trained cross-encoder (:class:`~sciera.rerank.base.Scorer`;
``deepera.scorer = "cross_encoder"``, the default) replaces the LLM's grades: score(p) = the
cross-encoder's P(relevant), calibrated on its own dev split (alone or fused with the
first-stage features, as its card chose), one batched forward pass for all candidates.

The agent returns every candidate, best first, with ``Ranking.calibrated`` set (its scores
are thresholdable probabilities). Step 3 (keep score >= tau, at most top_k) is the
pipeline's filter stage (:mod:`sciera.filter`); step 4 (summaries of kept passages) is the
``deepera`` evidence extractor (:mod:`sciera.evidence.deepera`), which reads the intent
recognised here from each item's ``provenance["deepera"]["intent"]``.

A passage the agent judged unusable carries the reason under
``provenance["deepera"]["exclude"]``, which the filter never keeps: an unparseable grade,
instructions aimed at the grader (the injection guard), or, with the LLM scorer, a passage
not graded because no grade could make the filter keep it (``prune``: its bound under the
calibrator is below ``tau`` or below the ``top_k`` passages already graded; ``tau`` and
``top_k`` are the filter's, given so that pruning skips only LLM calls whose result the
filter would drop). The trace (:meth:`rerank_traced`) records every candidate's score and fate.
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.filter.threshold import EXCLUDE
from sciera.llm.base import model_identity
from sciera.rerank.base import RerankerBase, Scorer, first_stage_key
from sciera.rerank.calibrate import Calibrator, find_calibrator, first_stage_features
from sciera.rerank.deepera import assess as assess_mod
from sciera.rerank.deepera.assess import Assessment, assess_passage
from sciera.rerank.deepera.guard import injection_signals
from sciera.rerank.deepera.intent import PROMPT as INTENT_PROMPT
from sciera.rerank.deepera.intent import recognize_intent
from sciera.rerank.deepera.trace import DeepEraTrace, PassageTrace
from sciera.types import Intent, Passage, Ranking, ScoredPassage, to_plain

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings

logger = logging.getLogger(__name__)
STAGE = "deepera"
LLM_FEATURES = ("grade", "p_yes")  # calibrator features that come from the LLM
PARSE_FAILED = "unparseable LLM reply: not relevant"


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


@dataclass
class _Scored:
    """One question's scoring: per candidate (input order) its score, calibrated value,
    LLM assessment and why it is unusable ("" if usable)."""

    scores: list[float]
    calibrated: list[float | None]
    assessments: list[Assessment | None]
    excluded: list[str]
    intent: Intent | None
    intent_fallback: bool
    intent_error: str
    prompt_tokens: int
    completion_tokens: int
    stage_seconds: dict[str, float]
    prompts: dict[str, str]


class DeepEraReranker(RerankerBase):
    name = STAGE

    def __init__(
        self,
        llm: LLM,
        *,
        tau: float | None = 0.8,
        top_k: int | None = 5,
        use_intent: bool = True,
        with_reason: bool = False,
        max_words: int = 200,
        scoring: str = "logprobs",
        calibrator: Calibrator | None = None,
        guard: bool = True,
        prune: bool = True,
        scorer: Scorer | None = None,
    ) -> None:
        if tau is not None and not 0.0 <= tau <= 1.0:
            raise ValueError(f"tau must be in [0, 1], got {tau}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1 (or None for no limit), got {top_k}")
        if scorer is not None and scorer.calibrator is None:
            raise ValueError(
                "a DeepEra scorer must give calibrated probabilities (tau is a probability): "
                "use a cross-encoder trained by `sciera train cross-encoder`"
            )
        self.llm = llm
        self.tau, self.top_k = tau, top_k
        self.use_intent, self.with_reason = use_intent, with_reason
        self.max_words, self.scoring = max_words, scoring
        self.scorer = scorer
        self.calibrator = None if scorer is not None else calibrator
        self.guard, self.prune = guard, prune
        self.calibrator_source = ""
        if self.calibrator is not None:
            self.calibrator.check_key(model_identity(llm.model_id), calibration_key(use_intent))

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> DeepEraReranker:
        """Options from ``settings.deepera``; ``tau`` and ``top_k`` (what pruning may skip)
        from ``settings.filter``. ``calibrator``: a Calibrator, a path to its JSON,
        ``"auto"`` (default: the artifact for this model and prompt under
        SCIERA_HOME/calibrators, else the one shipped in ``sciera/rerank/calibrators``, if
        either exists) or None. ``scorer``: ``"llm"``, a registered reranker name that is a
        :class:`~sciera.rerank.base.Scorer` (``"cross_encoder"``) or a built Scorer."""
        llm = kwargs.pop("llm", None)
        if llm is None:  # built on first use: a trained scorer never calls it here
            from sciera.llm.metered import LazyLLM
            from sciera.llm.registry import make_llm

            llm = LazyLLM(lambda: make_llm(settings))
        d, f = settings.deepera, settings.filter
        kwargs.setdefault("tau", f.tau if f.use_tau else None)
        kwargs.setdefault("top_k", f.top_k)
        for key in ("use_intent", "with_reason", "max_words", "guard", "prune"):
            kwargs.setdefault(key, getattr(d, key))
        scorer = kwargs.pop("scorer", d.scorer)
        if scorer == "llm":
            scorer = None
        elif isinstance(scorer, str):
            scorer = _make_scorer(scorer, settings)
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

        scorer = params.get("scorer", settings.deepera.scorer)
        if not isinstance(scorer, str) or scorer == "llm":
            return ""
        return reranker_identity(scorer, settings, {"model": settings.deepera.scorer_model})

    # -- protocol -------------------------------------------------------------------
    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        return self.rerank_traced(query, ranking)[0]

    def rerank_traced(self, query: str, ranking: Ranking) -> tuple[Ranking, dict[str, Any]]:
        reranked, trace = self.rerank_with_trace(query, ranking)
        return reranked, to_plain(trace.to_dict())

    def score(self, query: str, passage: Passage) -> float:
        """The agent's score for one passage on its own (first-stage rank 1, nothing pruned)."""
        one = Ranking(query, (ScoredPassage(passage, 1.0, 1),), "")
        return self._score_all(query, one, tau=None, top_k=None).scores[0]

    # -- the agent --------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The options a run used (recorded in the trace)."""
        return {
            "use_intent": self.use_intent,
            "prune_tau": self.tau,
            "prune_top_k": self.top_k,
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
        return f"{self.scorer.name}:{self.scorer.model_name}"

    def _blocked(self, passage: Passage) -> str:
        if not self.guard:
            return ""
        signals = injection_signals(passage.contents)
        return f"instructions aimed at the grader ({', '.join(signals)})" if signals else ""

    def _score(self, a: Assessment, fs: dict[str, float]) -> tuple[float | None, float]:
        """(calibrated P(relevant) or None without a calibrator, the score the filter
        uses); an unparseable judgment scores 0."""
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

    @staticmethod
    def _unreachable(
        bound: float, keepable: list[float], tau: float | None, top_k: int | None
    ) -> str:
        """Why a passage cannot be kept whatever its grade ("" if it can): its bound is
        below tau, or below the top_k passages already graded. Candidates are graded in
        order of bound, so this skips LLM calls without changing what is kept."""
        if tau is not None and bound < tau:
            return f"not graded: at most {bound:.3f} < tau {tau:.2f} at any grade"
        if top_k is not None and len(keepable) >= top_k:
            kth = sorted(keepable, reverse=True)[top_k - 1]
            if kth > bound:
                return (
                    f"not graded: at most {bound:.3f} at any grade, below the "
                    f"{top_k} passages already kept"
                )
        return ""

    def _score_all(
        self, query: str, ranking: Ranking, *, tau: float | None, top_k: int | None
    ) -> _Scored:
        items = list(ranking.items)
        run = _Scored(
            scores=[0.0] * len(items),
            calibrated=[None] * len(items),
            assessments=[None] * len(items),
            excluded=[self._blocked(it.passage) for it in items],  # guard, then pruning
            intent=None,
            intent_fallback=False,
            intent_error="",
            prompt_tokens=0,
            completion_tokens=0,
            stage_seconds={},
            prompts={"assess": _prompt_version(assess_mod.PROMPT)},
        )
        # the LLM's grades read the intent; a trained scorer does not (the deepera evidence
        # extractor recognises it when a kept passage is summarised)
        if self.use_intent and self.scorer is None:
            with _stage("deepera.intent"):
                res = recognize_intent(self.llm, query)
            run.intent, run.intent_fallback, run.intent_error = res.intent, res.fallback, res.error
            run.prompt_tokens += res.prompt_tokens
            run.completion_tokens += res.completion_tokens
            run.stage_seconds["intent"] = res.seconds
            run.prompts["intent"] = _prompt_version(INTENT_PROMPT)
            if res.fallback:
                logger.warning("deepera: intent failed (%s); neutral intent", res.error)

        t0 = time.perf_counter()
        fs = first_stage_features([it.score for it in items], [it.rank for it in items])
        if self.scorer is not None:
            with _stage("deepera.assess"):
                probs, _ = self.scorer.assess(query, ranking)
            for i, p in enumerate(probs):
                if not run.excluded[i]:
                    run.calibrated[i] = run.scores[i] = p
        else:
            self._grade(query, items, fs, run, tau, top_k)
        run.stage_seconds["assess"] = time.perf_counter() - t0
        return run

    def _grade(
        self,
        query: str,
        items: list[ScoredPassage],
        fs: list[dict[str, float]],
        run: _Scored,
        tau: float | None,
        top_k: int | None,
    ) -> None:
        """The LLM's grades, best bound first, skipping what the filter could not keep."""
        need_yes = self.calibrator is not None and "p_yes" in self.calibrator.features
        bounds = [self._bound(f) for f in fs]
        keepable: list[float] = []  # scores of graded passages the filter would keep
        with _stage("deepera.assess"):
            for i in sorted(range(len(items)), key=lambda i: (-bounds[i], i)):
                if run.excluded[i]:
                    continue
                run.excluded[i] = self._unreachable(bounds[i], keepable, tau, top_k)
                if run.excluded[i]:
                    run.scores[i] = bounds[i]
                    continue
                a = assess_passage(
                    self.llm,
                    query,
                    run.intent,
                    items[i].passage,
                    max_words=self.max_words,
                    with_reason=self.with_reason,
                    with_yes=need_yes,
                    scoring=self.scoring,
                )
                run.assessments[i] = a
                run.prompt_tokens += a.prompt_tokens
                run.completion_tokens += a.completion_tokens
                run.calibrated[i], run.scores[i] = self._score(a, fs[i])
                if a.parse_failed:
                    run.excluded[i] = PARSE_FAILED
                elif tau is None or run.scores[i] >= tau:
                    keepable.append(run.scores[i])

    def rerank_with_trace(self, query: str, ranking: Ranking) -> tuple[Ranking, DeepEraTrace]:
        """Every candidate scored, best first (ties keep the input order), and the trace."""
        t_start = time.perf_counter()
        run = self._score_all(query, ranking, tau=self.tau, top_k=self.top_k)
        items = ranking.items
        order = sorted(range(len(items)), key=lambda i: (-run.scores[i], i))
        prev = first_stage_key(ranking)
        intent = None if run.intent is None else to_plain(run.intent)
        out: list[ScoredPassage] = []
        for n, i in enumerate(order):
            it, a = items[i], run.assessments[i]
            prov = dict(it.provenance)
            prov.setdefault(prev, {"score": it.score, "rank": it.rank})
            prov[STAGE] = {
                "score": run.scores[i],
                "grade_expectation": None if a is None else a.grade_expectation,
                "calibrated": run.calibrated[i],
                "graded": a is not None or (self.scorer is not None and not run.excluded[i]),
                "scorer": self._scorer_name(),
                "reason": "" if a is None else a.reason,
                "intent": intent,
                EXCLUDE: run.excluded[i],
            }
            out.append(ScoredPassage(it.passage, run.scores[i], n + 1, prov))

        if self.scorer is not None:
            source = (
                f"{self._scorer_name()} P(relevant), {self.scorer.score_mode}, "
                "calibrated on its dev split"
            )
        elif self.calibrator is not None:
            source = f"calibrated: {self.calibrator_source or 'in-memory calibrator'}"
        else:
            source = "raw grade expectation (no calibrator)"
        passages = []  # best first, as the ranking
        for i in order:
            it, a = items[i], run.assessments[i]
            passages.append(
                PassageTrace(
                    passage_id=it.passage_id,
                    first_stage_rank=it.rank,
                    first_stage_score=it.score,
                    grade_expectation=None if a is None else a.grade_expectation,
                    grade_mass=0.0 if a is None else a.grade_mass,
                    calibrated=run.calibrated[i],
                    score=run.scores[i],
                    excluded=run.excluded[i],
                    reason="" if a is None else a.reason,
                    parse_failed=a is not None and a.parse_failed,
                    prompt_tokens=0 if a is None else a.prompt_tokens,
                    completion_tokens=0 if a is None else a.completion_tokens,
                    seconds=0.0 if a is None else a.seconds,
                )
            )
        trace = DeepEraTrace(
            query=query,
            intent=run.intent,
            intent_fallback=run.intent_fallback,
            intent_error=run.intent_error,
            settings=self.describe(),
            model_id=self.llm.model_id if self.scorer is None else "",
            prompt_versions=run.prompts,
            score_source=source,
            passages=tuple(passages),
            prompt_tokens=run.prompt_tokens,
            completion_tokens=run.completion_tokens,
            seconds=time.perf_counter() - t_start,
            stage_seconds=run.stage_seconds,
        )
        return Ranking(query, tuple(out), STAGE, calibrated=True), trace


def _make_scorer(name: str, settings: Settings) -> Scorer:
    from sciera.rerank.registry import make_reranker

    scorer = make_reranker(name, settings, model=settings.deepera.scorer_model)
    if not isinstance(scorer, Scorer):
        raise ValueError(f"deepera.scorer {name!r} cannot score candidates in one pass")
    return scorer
