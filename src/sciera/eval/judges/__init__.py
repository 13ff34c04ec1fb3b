"""LLM judges of generated answers: typed judgments from the LLM, plain arithmetic after.

``JUDGES`` maps a judge name to its class; every judge has
``judge(question, reference, candidate) -> JudgeScore`` and records the judge
model and prompt version with each score. A failed judgment is a ``JudgeScore``
with ``failed=True`` and ``score=None``: counted and reported, never dropped or NaN.
"""

from sciera.eval.judges.base import Judge, JudgeScore, summarize_scores
from sciera.eval.judges.lfs import LFSJudge
from sciera.eval.judges.rubric import RubricCoverageJudge

JUDGES: dict[str, type] = {"lfs": LFSJudge, "rubric_coverage": RubricCoverageJudge}
"""Name -> class. A class's ``OPTIONS`` names the experiment keys it takes beyond
``samples`` (``REQUIRED`` those it cannot do without); ``needs_reference = False`` means it
judges answers to questions without a reference answer too."""

__all__ = [
    "JUDGES",
    "Judge",
    "JudgeScore",
    "LFSJudge",
    "RubricCoverageJudge",
    "summarize_scores",
]
