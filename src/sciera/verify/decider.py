"""A yes/no question decided from all its evidence at once: the question decider.

The verifier decides a claim abstract by abstract, then aggregates (:mod:`.aggregate`). For
a yes/no question with short, direct evidence (BioASQ's snippets) that loses to the LLM
reading all the evidence together; over whole abstracts (PubMedQA) the per-abstract verdict
is the better reader. The decider reads both, by a logistic regression per label
(:class:`~sciera.verify.calibration.LogisticCombiner`) over its inputs
(:data:`DECIDER_INPUTS`, the ones its training chose):

- ``verdict``: the label probabilities of the *decisive* abstract of the per-abstract
  verification (the read abstract leaning furthest to SUPPORT or CONTRADICT; uniform when
  none was read);
- ``direct``: the LLM's probabilities over yes / no / maybe, asked the question once over
  the rationale sentences of every abstract the verifier read, each in its own
  ``<evidence>`` block, in ranking order (one ``choice_logprobs`` call; never free text).

It reads only abstracts the relevance gate let through (``read``): *whether* an abstract
bears on the question is the gate's, as for a claim. When the verifier read none (every
abstract below the gate), the question stays as the verifier left it (NOT ENOUGH INFO) and
the decider asks nothing.

Its decision becomes the question's overall verdict (SUPPORT = yes, CONTRADICT = no, NOT
ENOUGH INFO = maybe), so the answer, the page and the API cannot disagree; the abstracts on
the decided side are the ones the answer rests on. A claim is never passed to it. It is
fitted by the verifier recipe's ``decider`` stage on training questions only (BioASQ 7B and
8B with their snippets, PubMedQA's training questions) and saved in the verifier's folder
(:data:`DECIDER_FILE`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciera.types import (
    CONTRADICT,
    NOT_ENOUGH_INFO,
    SUPPORT,
    VERDICT_LABELS,
    AbstractVerdict,
    Verification,
)
from sciera.verify.base import UNIFORM, Probs

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.llm.prompting import PromptTemplate
    from sciera.verify.calibration import LogisticCombiner

DECIDER_FILE = "sciera-decider-question.json"
"""Where a verifier folder keeps its question decider."""
DECIDER_INPUTS = ("verdict", "direct")
"""What a decider may read, by name (its ``inputs``, in its order)."""
WORDS = ("yes", "no", "maybe")
_S, _C = VERDICT_LABELS.index(SUPPORT), VERDICT_LABELS.index(CONTRADICT)


@lru_cache(maxsize=1)
def _prompt() -> PromptTemplate:
    from sciera.llm.prompting import PromptTemplate

    return PromptTemplate.from_file(Path(__file__).parent / "prompts" / "decide_question.yaml")


def decisive(v: Verification) -> Probs:
    """The probabilities of the read abstract leaning furthest to either side (uniform
    when the verifier read none)."""
    read = [a for a in v.verdicts if a.read]
    if not read:
        return UNIFORM
    best = max(read, key=lambda a: max(a.probs[_S], a.probs[_C]))
    return (float(best.probs[0]), float(best.probs[1]), float(best.probs[2]))


def evidence_blocks(verdicts: Sequence[AbstractVerdict]) -> str:
    """Each abstract's rationale sentences (in abstract order) with its title, one
    ``<evidence>`` block each, numbered in ranking order; abstracts without sentences are
    left out."""
    from sciera.llm.prompting import delimit

    blocks = []
    for a in verdicts:
        if not a.rationales:
            continue
        body = " ".join(r.text.strip() for r in sorted(a.rationales, key=lambda r: r.index))
        attrs = {"id": str(len(blocks) + 1), **({"title": a.title.strip()} if a.title else {})}
        blocks.append(delimit(body, "evidence", **attrs))
    return "\n\n".join(blocks)


def direct_probs(llm: LLM, question: str, v: Verification) -> Probs:
    """The LLM's yes / no / maybe over the evidence of every read abstract at once, as
    SUPPORT / CONTRADICT / NOT ENOUGH INFO (uniform when there is no sentence to read: no
    call)."""
    evidence = evidence_blocks([a for a in v.verdicts if a.read])
    if not evidence:
        return UNIFORM
    messages = _prompt().render(claim=question, evidence=evidence)
    probs = llm.choice_logprobs(messages, WORDS).probs
    p = np.array([probs.get(w, 0.0) for w in WORDS], dtype=float)
    p = p / p.sum() if p.sum() > 0 else np.full(3, 1 / 3)
    return (float(p[0]), float(p[1]), float(p[2]))


def prompt_version() -> str:
    return _prompt().version


class QuestionDecider:
    """The overall verdict of a yes/no question from its per-abstract verification and the
    LLM's reading of all its evidence, joined by a fitted combiner."""

    def __init__(self, combiner: LogisticCombiner, llm: LLM) -> None:
        unknown = [name for name in combiner.inputs if name not in DECIDER_INPUTS]
        if unknown:
            raise ValueError(
                f"the question decider reads {', '.join(unknown)}, which this version of "
                f"sciera does not know (it knows {', '.join(DECIDER_INPUTS)})"
            )
        self.combiner, self.llm = combiner, llm

    @classmethod
    def load(cls, folder: Path, llm: LLM) -> QuestionDecider | None:
        """The decider saved in a verifier's ``folder``, or ``None`` when it has none."""
        from sciera.verify import calibration

        path = Path(folder) / DECIDER_FILE
        return cls(calibration.load(path), llm) if path.is_file() else None

    def inputs(self, question: str, v: Verification) -> dict[str, Probs]:
        """The probabilities the combiner reads (the LLM is asked only when it reads it)."""
        out: dict[str, Probs] = {}
        for name in self.combiner.inputs:
            out[name] = decisive(v) if name == "verdict" else direct_probs(self.llm, question, v)
        return out

    def decide(self, question: str, v: Verification) -> tuple[Verification, dict[str, Any]]:
        """(the verification with the decider's label and confidence, the trace: what it
        read and what it gave); ``v`` itself when the verifier read no abstract."""
        if not any(a.read for a in v.verdicts):
            return v, {"skipped": "no abstract passed the relevance gate", "aggregated": v.label}
        read = self.inputs(question, v)
        p = self.combiner(*[np.array([read[n]]) for n in self.combiner.inputs])[0]
        label = VERDICT_LABELS[int(np.argmax(p))]
        side = [a for a in v.verdicts if a.label == label and label != NOT_ENOUGH_INFO]
        decided = replace(
            v,
            label=label,
            confidence=float(np.max(p)),
            conflicting=False,
            supporting=tuple(a.doc_id for a in side) if label == SUPPORT else (),
            contradicting=tuple(a.doc_id for a in side) if label == CONTRADICT else (),
        )
        trace = {
            "inputs": {k: [round(x, 4) for x in val] for k, val in read.items()},
            "probs": dict(zip(VERDICT_LABELS, (round(float(x), 4) for x in p), strict=True)),
            "aggregated": v.label,
        }
        return decided, trace
