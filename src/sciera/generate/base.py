"""The Generator protocol: a question and its evidence in, a typed, cited Answer out.

``Answer.text`` is the readable answer with ``[n]`` markers (n = 1-based index into
``Answer.evidence``); ``Answer.citations`` maps each marker used to its passage id. The
machine-readable exact answer (``"yes"``; ranked entities) is ``trace["exact"]``, read
with :func:`exact_answer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from sciera.types import Answer, Evidence, Verification


@runtime_checkable
class Generator(Protocol):
    name: str

    def answer(
        self,
        question: str,
        evidence: Sequence[Evidence],
        question_type: str | None = None,
        *,
        sufficient: bool | None = None,
        verification: Verification | None = None,
    ) -> Answer:
        """``sufficient`` is the evidence extractor's verdict (None: not judged);
        ``verification`` the verify stage's (None: not verified), which decides yes/no
        questions and claims when given."""
        ...


def exact_answer(answer: Answer) -> tuple[str, ...]:
    """The exact answer: ``("yes",)`` / ``("no",)`` / ``("maybe",)``, ranked entities, or ()
    for ideal answers, refusals and degraded answers."""
    return tuple(str(x) for x in answer.trace.get("exact", ()))
