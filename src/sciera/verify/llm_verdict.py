"""The LLM as a verdict model: its probabilities over three answer words, read in one
forward pass (:meth:`sciera.llm.base.LLM.choice_logprobs`), never from free text.

A claim is asked as support / contradict / neither, a question (text ending in ``?``) as
yes / no / maybe; the words map to SUPPORT / CONTRADICT / NOT ENOUGH INFO. The evidence (rationale
sentences and title) goes into an ``<evidence>`` block it cannot escape. Zero-shot, the
probabilities are the model's own (uncalibrated); :class:`CombinedVerdict` fits them with
the trained head's on dev.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciera.llm.base import LLM, model_identity
from sciera.verify.base import Probs, VerdictInput, VerdictModel, kind_of

if TYPE_CHECKING:
    from sciera.llm.prompting import PromptTemplate
    from sciera.settings import Settings
    from sciera.verify.calibration import LogisticCombiner

logger = logging.getLogger(__name__)
PROMPTS = Path(__file__).parent / "prompts"
CHOICES = {"claim": ("support", "contradict", "neither"), "question": ("yes", "no", "maybe")}


@lru_cache(maxsize=2)
def _prompt(kind: str) -> PromptTemplate:
    from sciera.llm.prompting import PromptTemplate

    return PromptTemplate.from_file(PROMPTS / f"verdict_{kind}.yaml")


def evidence_block(item: VerdictInput) -> str:
    from sciera.llm.prompting import delimit

    body = " ".join(s.strip() for s in item.sentences)
    if item.title.strip():
        return delimit(body, "evidence", title=item.title.strip())
    return delimit(body, "evidence")


class LLMVerdict:
    """Zero-shot label probabilities from an LLM (one ``choice_logprobs`` call per abstract,
    cached by the LLM layer)."""

    name = "llm"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    @classmethod
    def from_settings(cls, settings: Settings, llm: LLM | None = None, **_: Any) -> LLMVerdict:
        if llm is None:  # loaded at the first call: a claim no abstract passes asks nothing
            from sciera.llm.metered import LazyLLM
            from sciera.llm.registry import make_llm

            llm = LazyLLM(lambda: make_llm(settings))
        return cls(llm)

    @staticmethod
    def version() -> str:
        return "+".join(_prompt(k).version for k in sorted(CHOICES))

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]) -> list[Probs]:
        kind = kind_of(claim)
        words = CHOICES[kind]
        out: list[Probs] = []
        for item in inputs:
            messages = _prompt(kind).render(claim=claim, evidence=evidence_block(item))
            probs = self.llm.choice_logprobs(messages, words).probs
            p = np.array([probs.get(w, 0.0) for w in words], dtype=float)
            p = p / p.sum() if p.sum() > 0 else np.full(3, 1 / 3)
            out.append((float(p[0]), float(p[1]), float(p[2])))
        return out


COMBINER_FILES = {kind: f"sciera-combiner-{kind}.json" for kind in CHOICES}
"""Where a verifier folder keeps its LLM combiners, one per kind of input."""


class CombinedVerdict:
    """A trained verdict model and the LLM's label probabilities, combined by a logistic
    regression per kind of input (claim, question) fitted on training claims and questions
    (:class:`~sciera.verify.calibration.LogisticCombiner`; ``sciera train verifier
    --combine-llm``). The decision is the combiner's, read from probabilities: never from
    the LLM's free text."""

    name = "combined"

    def __init__(
        self,
        model: VerdictModel,
        llm: VerdictModel,
        combiners: LogisticCombiner | Mapping[str, LogisticCombiner],
        fitted_on: str | None = None,
    ) -> None:
        """``combiners``: one per kind (``claim``, ``question``), or one for both;
        ``fitted_on``: the model id of the LLM they were fitted on (checked at first use)."""
        self.model, self.llm, self.fitted_on = model, llm, fitted_on
        self.combiners = (
            dict(combiners) if isinstance(combiners, Mapping) else dict.fromkeys(CHOICES, combiners)
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        llm: LLM | None = None,
        model: str | None = None,
        **_: Any,
    ) -> CombinedVerdict:
        """The trained verdict of ``model`` (the settings' verifier by default), the LLM
        (``llm`` or the settings' one) and the combiners saved in the model's folder."""
        from sciera.errors import ScieraError
        from sciera.verify import calibration
        from sciera.verify.trained import TrainedVerdict

        trained = TrainedVerdict(model or settings.verify.model, home=settings.home)
        folder = Path(trained.network.path)
        combiners = {}
        for kind, file in COMBINER_FILES.items():
            if not (folder / file).is_file():
                raise ScieraError(
                    f"{folder / file}: this verifier has no LLM combiner; fit one with "
                    "`sciera train verifier ... --combine-llm`, or use verify.verdict = trained"
                )
            combiners[kind] = calibration.load(folder / file)
        fitted = (trained.card.get("combiner") or {}).get("llm")
        return cls(trained, LLMVerdict.from_settings(settings, llm=llm), combiners, fitted)

    def _check_llm(self) -> None:
        """Warn once when the LLM is not the one the combiners were fitted on (read at the
        first call, so building the verdict model does not load the LLM)."""
        fitted, self.fitted_on = self.fitted_on, None
        llm = getattr(self.llm, "llm", None)
        if fitted is None or llm is None:
            return
        used = model_identity(llm.model_id)
        if model_identity(fitted) != used:
            logger.warning(
                "the LLM combiners were fitted on %s's probabilities; %s's are combined as "
                "if they were its (refit with `sciera train verifier ... --recalibrate "
                "--combine-llm`, or use verify.verdict = trained)",
                fitted,
                used,
            )

    @property
    def card(self) -> dict[str, Any]:
        """The trained model's card, its policy overridden by the one chosen for the
        combined verdict (``combiner.policy``, when the card has one)."""
        card = getattr(self.model, "card", {}) or {}
        mine = (card.get("combiner") or {}).get("policy")
        if not mine:
            return card
        return {**card, "policy": {**(card.get("policy") or {}), **mine}}

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]) -> list[Probs]:
        if not inputs:
            return []
        if self.fitted_on is not None:
            self._check_llm()
        a = np.array(self.model.predict_many(claim, inputs))
        b = np.array(self.llm.predict_many(claim, inputs))
        p = self.combiners[kind_of(claim)](a, b)
        return [(float(x), float(y), float(z)) for x, y, z in p]
