"""ResearchQA's direct (pairwise) judge: two answers to one question, judged in both orders.

Each order is one forward pass reading the judge's probability of "A", "B" and "C" (tie)
(``LLM.choice_logprobs``); its verdict is the most probable letter. The two orders are
then combined: the same answer preferred in both is a win; a disagreement between the
orders, or a tie in either, is a tie. So a judge that always prefers the first answer
produces ties, not wins, and its bias shows in :func:`position_bias`.

Answers are cut to ``max_words`` words before judging (ResearchQA's 250), so verbosity
cannot buy a preference; each answer sits in a delimited block it cannot escape. A call
that fails, or gives no probability to any letter, makes the battle failed (counted, never
a win or a tie).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.llm.base import LLM, Message

logger = logging.getLogger(__name__)
PROMPT = "judge_pairwise"
LETTERS: tuple[str, ...] = ("A", "B", "C")
MAX_WORDS = 250


def cut_words(text: str, max_words: int | None) -> str:
    """The first ``max_words`` words of ``text`` (all of it when None)."""
    words = text.split()
    if max_words is None or len(words) <= max_words:
        return " ".join(words)
    return " ".join(words[:max_words])


@dataclass(frozen=True, slots=True)
class OrderVerdict:
    """One order's judgment: which position won ("A", "B" or "C" for a tie)."""

    letter: str
    probs: Mapping[str, float]
    prompt_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Battle:
    """``x`` against ``y`` on one question: ``outcome`` is "x", "y", "tie" or "failed"."""

    outcome: str
    x_first: OrderVerdict | None = None  # x shown as A
    y_first: OrderVerdict | None = None  # y shown as A
    model_id: str = ""
    prompt_version: str = ""
    error: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of both orders."""
        return sum(v.prompt_tokens for v in (self.x_first, self.y_first) if v is not None)

    @property
    def score_x(self) -> float | None:
        """1 for a win of x, 0.5 for a tie, 0 for a loss; None when failed."""
        return {"x": 1.0, "tie": 0.5, "y": 0.0}.get(self.outcome)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Battle:
        d = dict(data)
        for key in ("x_first", "y_first"):
            if d.get(key) is not None:
                d[key] = OrderVerdict(**d[key])
        return cls(**d)


def combine(x_first: OrderVerdict, y_first: OrderVerdict) -> str:
    """The battle's outcome from its two orders (x is A in the first, B in the second)."""
    x_wins = x_first.letter == "A" and y_first.letter == "B"
    y_wins = x_first.letter == "B" and y_first.letter == "A"
    return "x" if x_wins else "y" if y_wins else "tie"


class PairwiseJudge:
    name = "pairwise"

    def __init__(self, llm: LLM, *, max_words: int | None = MAX_WORDS) -> None:
        self.llm, self.max_words = llm, max_words

    @property
    def prompt_version(self) -> str:
        from sciera.llm.prompting import load_prompt

        return f"{PROMPT}@{load_prompt(PROMPT).version}"

    def messages(self, question: str, answer_a: str, answer_b: str) -> list[Message]:
        from sciera.llm.prompting import delimit, load_prompt

        return load_prompt(PROMPT).render(
            question=" ".join(question.split()),
            answer_a=delimit(cut_words(answer_a, self.max_words), "answer_a"),
            answer_b=delimit(cut_words(answer_b, self.max_words), "answer_b"),
        )

    def _order(self, question: str, a: str, b: str) -> OrderVerdict:
        probs = self.llm.choice_logprobs(self.messages(question, a, b), LETTERS)
        dist = {k: float(probs.probs.get(k, 0.0)) for k in LETTERS}
        if sum(dist.values()) <= 0:
            raise ValueError("no probability on A, B or C")
        letter = max(LETTERS, key=lambda k: dist[k])
        return OrderVerdict(letter, dist, probs.prompt_tokens)

    def battle(self, question: str, x: str, y: str) -> Battle:
        """Judge ``x`` against ``y`` in both orders."""
        from sciera.llm.accounting import stage

        meta = {"model_id": self.llm.model_id, "prompt_version": self.prompt_version}
        try:
            with stage("judge.pairwise"):
                x_first = self._order(question, x, y)
                y_first = self._order(question, y, x)
        except Exception as exc:  # a judge failure is data, not a crash
            logger.warning("pairwise judge failed: %s", exc)
            return Battle("failed", error=str(exc), **meta)
        return Battle(combine(x_first, y_first), x_first, y_first, **meta)


def position_bias(battles: Iterable[Battle]) -> dict[str, float]:
    """How the judge treats position, over the single-order verdicts of judged battles:
    ``first_wins`` (share of decisive verdicts that chose the answer shown first; 0.5 is
    unbiased), ``order_agreement`` (share of battles whose two orders agree), ``ties``
    (share of battles that ended tied) and the counts behind them."""
    first = decisive = agree = judged = ties = 0
    for b in battles:
        if b.x_first is None or b.y_first is None:
            continue
        judged += 1
        ties += b.outcome == "tie"
        agree += b.outcome != "tie" or (b.x_first.letter == b.y_first.letter == "C")
        for v in (b.x_first, b.y_first):
            if v.letter != "C":
                decisive += 1
                first += v.letter == "A"
    return {
        "battles": float(judged),
        "decisive_verdicts": float(decisive),
        "first_wins": first / decisive if decisive else 0.0,
        "order_agreement": agree / judged if judged else 0.0,
        "ties": ties / judged if judged else 0.0,
    }
