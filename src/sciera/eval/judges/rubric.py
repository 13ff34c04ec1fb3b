"""ResearchQA's rubric coverage judge: each rubric item of a question graded 0-4 for how
fully an answer covers it, normalized to [0, 1]; the answer's coverage is the mean.

Rubrics come from a JSONL file written by ``sciera eval rubrics build`` (one line per
question: ``qid``, ``question``, ``items`` with ``text`` and ``type``) and are matched to a
question by its text (whitespace and case ignored). Each item is one forward pass reading
the judge's probability of each grade (``LLM.choice_logprobs``); an item's coverage is
the expected grade / 4 and it counts as fully covered when 4 is the most probable grade.

Length control: the answer is cut to ``max_words`` words before judging (ResearchQA's
250), so verbosity cannot buy coverage, and its length before the cut is reported.

The score's ``details``: ``points`` (the sum of item coverages, the ensemble's coverage
points), ``items`` (judged items), ``full`` (share fully covered), ``words`` (answer
length), ``cut`` (1 when the answer was cut), ``failed_items``, and ``type:<type>`` (mean
coverage per item type). A question without a rubric, or whose every item failed, is a
failed judgment (counted, never a zero).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sciera.errors import ScieraError
from sciera.eval.judges.base import JudgeScore
from sciera.eval.judges.pairwise import MAX_WORDS, cut_words

if TYPE_CHECKING:
    from sciera.llm.base import LLM

logger = logging.getLogger(__name__)
PROMPT = "judge_rubric"
GRADES: tuple[str, ...] = ("0", "1", "2", "3", "4")


@dataclass(frozen=True, slots=True)
class RubricItem:
    text: str
    type: str = "other"
    source: str = ""  # grounded (from a text) or parametric (from the LLM alone)


def question_key(question: str) -> str:
    return " ".join(question.split()).casefold()


def load_rubrics(path: str | Path) -> dict[str, list[RubricItem]]:
    """Question key -> items, from a rubrics JSONL file or its packed ``.gz`` (errors name
    the line and field)."""
    from sciera.errors import InputError
    from sciera.eval.resultlog import is_stored, read_text

    path = Path(path)
    if not is_stored(path):
        raise ScieraError(
            f"{path}: no such rubrics file (write one with `sciera eval rubrics build`)"
        )
    out: dict[str, list[RubricItem]] = {}
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            items = [
                RubricItem(str(i["text"]), str(i.get("type", "other")), str(i.get("source", "")))
                for i in rec["items"]
            ]
            out[question_key(rec["question"])] = items
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(path, n, "items", f"not a rubric record ({exc})") from None
    return out


class RubricCoverageJudge:
    name = "rubric_coverage"
    needs_reference = False
    OPTIONS: tuple[str, ...] = ("rubrics", "max_words")
    REQUIRED: tuple[str, ...] = ("rubrics",)

    def __init__(
        self,
        llm: LLM,
        *,
        rubrics: str | Path | Mapping[str, Sequence[RubricItem]],
        max_words: int | None = MAX_WORDS,
        samples: int | None = None,
    ) -> None:
        if samples is not None:
            raise ScieraError("the rubric_coverage judge reads grade probabilities; drop samples")
        self.llm, self.max_words = llm, max_words
        self.rubrics = load_rubrics(rubrics) if isinstance(rubrics, str | Path) else dict(rubrics)

    @property
    def prompt_version(self) -> str:
        from sciera.llm.prompting import load_prompt

        return f"{PROMPT}@{load_prompt(PROMPT).version}"

    def item_messages(self, question: str, item: RubricItem, answer: str) -> list:
        from sciera.llm.prompting import delimit, load_prompt

        return load_prompt(PROMPT).render(
            question=" ".join(question.split()),
            item=delimit(item.text, "rubric_item"),
            answer=delimit(cut_words(answer, self.max_words), "answer"),
        )

    def _score(self, **kw: object) -> JudgeScore:
        return JudgeScore(
            self.name,
            model_id=self.llm.model_id,
            prompt_version=self.prompt_version,
            method="expected",
            **kw,  # type: ignore[arg-type]
        )

    def judge(self, question: str, reference: str, candidate: str) -> JudgeScore:
        """Coverage of ``candidate`` over the question's rubric (``reference`` is unused:
        the rubric carries what a good answer must say)."""
        from sciera.llm.accounting import stage

        items = self.rubrics.get(question_key(question))
        if not items:
            return self._score(score=None, failed=True, error="no rubric for this question")
        coverage: list[tuple[RubricItem, float, bool]] = []
        errors, tokens = [], 0
        with stage("judge.rubric"):
            for item in items:
                try:
                    probs = self.llm.choice_logprobs(
                        self.item_messages(question, item, candidate), GRADES
                    )
                except Exception as exc:  # a judge failure is data, not a crash
                    errors.append(f"llm error: {exc}")
                    continue
                tokens += probs.prompt_tokens
                dist = {g: float(probs.probs.get(g, 0.0)) for g in GRADES}
                total = sum(dist.values())
                if total <= 0:
                    errors.append("no probability on grades 0-4")
                    continue
                expected = sum(int(g) * p for g, p in dist.items()) / total
                full = max(GRADES, key=lambda g: dist[g]) == "4"
                coverage.append((item, expected / 4, full))
        if not coverage:
            logger.warning("rubric judge failed on every item: %s", errors[0])
            return self._score(score=None, failed=True, error=errors[0], prompt_tokens=tokens)
        return self._score(
            score=sum(c for _, c, _ in coverage) / len(coverage),
            prompt_tokens=tokens,
            error="; ".join(errors[:3]),
            details=coverage_details(coverage, candidate, self.max_words, len(errors)),
        )


def coverage_details(
    coverage: Sequence[tuple[RubricItem, float, bool]],
    answer: str,
    max_words: int | None,
    failed_items: int,
) -> dict[str, float]:
    words = len(answer.split())
    out = {
        "points": sum(c for _, c, _ in coverage),
        "items": float(len(coverage)),
        "full": sum(1.0 for *_, f in coverage if f) / len(coverage),
        "words": float(words),
        "cut": float(max_words is not None and words > max_words),
        "failed_items": float(failed_items),
    }
    by_type: dict[str, list[float]] = {}
    for item, c, _ in coverage:
        by_type.setdefault(item.type, []).append(c)
    out.update({f"type:{t}": sum(v) / len(v) for t, v in sorted(by_type.items())})
    return out
