"""Answer generation by question type, with citations and refusal.

- :mod:`.base`: the ``Generator`` protocol and :func:`exact_answer`.
- :mod:`.qtype`: question type detection (yesno, factoid, list, ideal).
- :mod:`.citations`: ``[n]`` markers -> passage ids; dangling markers removed and counted.
- :mod:`.refusal`: "the evidence is insufficient" instead of a guess.
- :mod:`.llm`: the LLM generator; :mod:`.registry`: ``make_generator``.
"""

from sciera.generate.base import Generator, exact_answer
from sciera.generate.qtype import QUESTION_TYPES, detect_question_type, resolve_question_type
from sciera.generate.registry import make_generator

__all__ = [
    "QUESTION_TYPES",
    "Generator",
    "detect_question_type",
    "exact_answer",
    "make_generator",
    "resolve_question_type",
]
