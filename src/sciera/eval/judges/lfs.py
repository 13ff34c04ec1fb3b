"""Logic Fidelity Score (DeepEra): an LLM grades a candidate answer 0-5 against the gold one.

Two ways to read the grade:

- ``samples=None`` (default): one forward pass, the judge's probability of each grade
  "0".."5" (``LLM.choice_logprobs``); LFS = the expected grade. A reply with no
  probability on any grade is a failure.
- ``samples=n``: n sampled replies (temperature ``temperature``), each parsed as a
  grade; LFS = their mean. Unparseable samples are counted; all-unparseable is a failure.

The question is plain text; the reference and candidate answers go in delimited
``<reference>`` / ``<candidate>`` blocks, so an answer cannot instruct the judge.
LLM errors (timeouts, HTTP errors) become failed scores, never exceptions or NaN.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sciera.eval.judges.base import JudgeScore

if TYPE_CHECKING:
    from sciera.llm.base import LLM, Message

logger = logging.getLogger(__name__)
PROMPT = "judge_lfs"
GRADES: tuple[str, ...] = ("0", "1", "2", "3", "4", "5")


class LFSJudge:
    name = "lfs"
    needs_reference = True

    def __init__(self, llm: LLM, *, samples: int | None = None, temperature: float = 0.7) -> None:
        if samples is not None and samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.llm, self.samples, self.temperature = llm, samples, temperature

    @property
    def prompt_version(self) -> str:
        from sciera.llm.prompting import load_prompt

        return f"{PROMPT}@{load_prompt(PROMPT).version}"

    def messages(self, question: str, reference: str, candidate: str) -> list[Message]:
        from sciera.llm.prompting import delimit, load_prompt

        return load_prompt(PROMPT).render(
            question=" ".join(question.split()),
            reference=delimit(reference, "reference"),
            candidate=delimit(candidate, "candidate"),
        )

    def judge(self, question: str, reference: str, candidate: str) -> JudgeScore:
        from sciera.llm.accounting import stage

        messages = self.messages(question, reference, candidate)
        with stage("judge.lfs"):
            if self.samples is None:
                return self._expected(messages)
            return self._sampled(messages, self.samples)

    def _score(self, method: str, **kw: object) -> JudgeScore:
        return JudgeScore(
            self.name,
            model_id=self.llm.model_id,
            prompt_version=self.prompt_version,
            method=method,
            **kw,  # type: ignore[arg-type]
        )

    def _expected(self, messages: list[Message]) -> JudgeScore:
        try:
            probs = self.llm.choice_logprobs(messages, GRADES)
        except Exception as exc:  # a judge failure is data, not a crash
            logger.warning("lfs judge call failed: %s", exc)
            return self._score("expected", score=None, failed=True, error=f"llm error: {exc}")
        dist = {g: float(probs.probs.get(g, 0.0)) for g in GRADES}
        if sum(dist.values()) <= 0:
            return self._score(
                "expected",
                score=None,
                failed=True,
                error="no probability on grades 0-5",
                prompt_tokens=probs.prompt_tokens,
            )
        total = sum(dist.values())
        dist = {g: p / total for g, p in dist.items()}
        expected = sum(int(g) * p for g, p in dist.items())
        return self._score(
            "expected", score=expected, distribution=dist, prompt_tokens=probs.prompt_tokens
        )

    def _sampled(self, messages: list[Message], n: int) -> JudgeScore:
        from sciera.llm.base import ParseFailure
        from sciera.llm.parsing import parse_choice

        grades: list[int] = []
        failures, ptok, ctok, errors = 0, 0, 0, []
        for _ in range(n):
            try:
                reply = self.llm.complete(messages, max_tokens=4, temperature=self.temperature)
            except Exception as exc:
                failures += 1
                errors.append(f"llm error: {exc}")
                continue
            ptok, ctok = ptok + reply.prompt_tokens, ctok + reply.completion_tokens
            grade = parse_choice(reply.text, GRADES)
            if isinstance(grade, ParseFailure):
                failures += 1
                errors.append(grade.error)
            else:
                grades.append(int(grade))
        method = f"sampled:{n}"
        usage = {"prompt_tokens": ptok, "completion_tokens": ctok, "sample_failures": failures}
        if not grades:
            return self._score(method, score=None, failed=True, error=errors[0], **usage)
        return self._score(method, score=sum(grades) / len(grades), samples=tuple(grades), **usage)
