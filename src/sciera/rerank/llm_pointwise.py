"""Pointwise LLM rerankers, one forward pass per passage, no sampling.

* ``llm_pointwise`` (monoT5-style): score = P("yes") for "Is this passage relevant to
  the question?", read from the next-token distribution restricted to yes/no.
* ``llm_graded``: score = E[grade] / 10 over the LLM's distribution on grades 0..10.

Prompts put the question first and the passage last (delimited, untrusted), so
consecutive passages of one question share the prompt prefix in the KV cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sciera.rerank.base import RerankerBase, rescored, truncate_words
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.llm.base import LLM, ChoiceProbs
    from sciera.settings import Settings

GRADES = tuple(str(i) for i in range(11))


class _PointwiseBase(RerankerBase):
    name = ""
    prompt = ""
    choices: tuple[str, ...] = ()

    def __init__(self, llm: LLM, *, max_words: int = 200) -> None:
        self.llm = llm
        self.max_words = max_words

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> Any:
        llm = kwargs.pop("llm", None)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        return cls(llm, **kwargs)

    def _value(self, probs: ChoiceProbs) -> float:
        raise NotImplementedError

    def _judge(self, query: str, passage: Passage) -> tuple[float, dict[str, Any]]:
        from sciera.llm.prompting import delimit, load_prompt

        text = delimit(truncate_words(passage.contents, self.max_words), "passage")
        messages = load_prompt(self.prompt).render(question=query, passage=text)
        probs = self.llm.choice_logprobs(messages, list(self.choices))
        value = self._value(probs)
        return value, {
            "score": value,
            "mass": probs.raw_mass,
            "prompt_tokens": probs.prompt_tokens,
            "seconds": probs.seconds,
        }

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        judged = [self._judge(query, it.passage) for it in ranking.items]
        return rescored(ranking, [s for s, _ in judged], self.name, [d for _, d in judged], query)

    def score(self, query: str, passage: Passage) -> float:
        return self._judge(query, passage)[0]


class LLMPointwiseReranker(_PointwiseBase):
    """Score = P("yes" | question, passage)."""

    name = "llm_pointwise"
    prompt = "llm_pointwise"
    choices = ("yes", "no")

    def _value(self, probs: ChoiceProbs) -> float:
        return float(probs.probs.get("yes", 0.0))


class LLMGradedReranker(_PointwiseBase):
    """Score = E[grade] / 10 with grades 0..10."""

    name = "llm_graded"
    prompt = "llm_pointwise_graded"
    choices = GRADES

    def _value(self, probs: ChoiceProbs) -> float:
        return probs.expected() / 10.0
