"""sciera: scientific question answering robust to semantically similar but logically
irrelevant evidence."""

import sciera.verify as _verify_stage  # noqa: F401  (the package first: `verify` is the function)
from sciera.pipeline import ask
from sciera.pipeline import verify as verify
from sciera.settings import Settings, load_settings
from sciera.types import (
    Answer,
    Candidate,
    Citation,
    Document,
    Evidence,
    Intent,
    Passage,
    QAInstance,
    Ranking,
    ScoredPassage,
)

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Candidate",
    "Citation",
    "Document",
    "Evidence",
    "Intent",
    "Passage",
    "QAInstance",
    "Ranking",
    "ScoredPassage",
    "Settings",
    "__version__",
    "ask",
    "load_settings",
    "verify",
]
