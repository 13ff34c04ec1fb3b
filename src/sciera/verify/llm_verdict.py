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
from sciera.verify.base import UNIFORM, Probs, VerdictInput, VerdictModel, kind_of

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


class NegatedLLMVerdict:
    """The LLM asked the claim negated (:func:`sciera.verify.negation.negate_claim`), its
    support and contradict probabilities swapped so that each label keeps its meaning for
    the claim itself. The 1.5B answers "support" to almost any on-topic evidence; asked
    both ways, a contradiction shows as support of the negation. Uniform (no information)
    for a claim no rule negates and for a question; the LLM is not called then."""

    name = "llm_negated"

    def __init__(self, llm: VerdictModel) -> None:
        self.llm = llm

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]) -> list[Probs]:
        from sciera.verify.negation import negate_claim

        negated = negate_claim(claim) if kind_of(claim) == "claim" else None
        if negated is None:
            return [UNIFORM] * len(inputs)
        return [(c, s, n) for s, c, n in self.llm.predict_many(negated, inputs)]


COMBINER_FILES = {kind: f"sciera-combiner-{kind}.json" for kind in CHOICES}
"""Where a verifier folder keeps its LLM combiners, one per kind of input."""
COMBINER_INPUTS = ("trained", "llm", "llm_negated")
"""The inputs a combiner may read, by name (its ``inputs``, in its order): the trained
verdict, the LLM on the claim, the LLM on the negated claim."""


class CombinedVerdict:
    """A trained verdict model and the LLM's label probabilities, combined by a logistic
    regression per kind of input (claim, question) fitted on training claims and questions
    (:class:`~sciera.verify.calibration.LogisticCombiner`; ``sciera train verifier
    --combine-llm``). Each combiner names what it reads (:data:`COMBINER_INPUTS`): the
    trained verdict and the LLM, and for claims possibly the LLM on the negated claim
    (:class:`NegatedLLMVerdict`), whichever the training chose. The decision is the
    combiner's, read from probabilities: never from the LLM's free text."""

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
        self.inputs: dict[str, VerdictModel] = dict(
            zip(COMBINER_INPUTS, (model, llm, NegatedLLMVerdict(llm)), strict=True)
        )
        for kind, combiner in self.combiners.items():
            unknown = [name for name in combiner.inputs if name not in self.inputs]
            if unknown:
                raise ValueError(
                    f"the {kind} combiner reads {', '.join(unknown)}, which this version of "
                    f"sciera does not know (it knows {', '.join(COMBINER_INPUTS)})"
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
        try:
            return cls(trained, LLMVerdict.from_settings(settings, llm=llm), combiners, fitted)
        except ValueError as e:
            raise ScieraError(f"{folder}: {e}") from None

    def question_decider(self) -> Any:
        """The :class:`~sciera.verify.decider.QuestionDecider` saved beside this verdict's
        combiners (fitted on its probabilities and this LLM's), or ``None``."""
        from sciera.verify.decider import QuestionDecider

        folder = getattr(getattr(self.model, "network", None), "path", None)
        llm = getattr(self.llm, "llm", None)
        if folder is None or llm is None:
            return None
        return QuestionDecider.load(Path(folder), llm)

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
        combiner = self.combiners[kind_of(claim)]
        read = self._read(claim, inputs, combiner.inputs)
        p = combiner(*(np.array(read[name]) for name in combiner.inputs))
        return [(float(x), float(y), float(z)) for x, y, z in p]

    def _read(
        self, claim: str, inputs: Sequence[VerdictInput], names: Sequence[str]
    ) -> dict[str, list[Probs]]:
        """Each input's probabilities for every abstract: the trained model in one batch, the
        LLM's readings abstract by abstract, the claim and then its negation over the same
        evidence, so the second call reuses the first's KV cache for the evidence (the
        prompt puts the evidence before the claim); the same calls as reading all abstracts
        input by input, in an order that evaluates each evidence block once."""
        read: dict[str, list[Probs]] = {
            name: list(self.inputs[name].predict_many(claim, inputs))
            for name in names
            if self.inputs[name] is self.model
        }
        asked = [name for name in names if name not in read]
        for name in asked:
            read[name] = []
        for item in inputs:
            for name in asked:
                read[name].extend(self.inputs[name].predict_many(claim, [item]))
        return read
