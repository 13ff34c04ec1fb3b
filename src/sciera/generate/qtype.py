"""Question type from the question's wording (BioASQ types), overridable by the caller.

Rules, first match wins:
1. starts with an auxiliary verb ("Is", "Does", "Can" ...)             -> yesno
2. starts with an explicit summary request ("Describe", "Explain" ...) -> ideal
3. asks for items ("List", "Name", "Which/What <...> are/were")         -> list
4. "How many/much", "Who", "When", "Where", "Which", "What is/was the"  -> factoid,
   except "What is the role/mechanism/function/effect ..." and "How/Why" -> ideal
5. a statement without "?" (a claim to verify, as in SciFact)           -> yesno
6. a question whose clause after ":", ";", "--", "," or ". " starts with an
   auxiliary verb ("Pertrochanteric fractures: is there an advantage?") -> yesno
7. anything else                                                        -> ideal
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QUESTION_TYPES: tuple[str, ...] = ("yesno", "factoid", "list", "ideal")
CHECKABLE_KINDS: frozenset[str] = frozenset({"factoid", "list"})
"""Types whose answers are short strings a passage can be checked to state verbatim."""
ALIASES = {"summary": "ideal", "yes/no": "yesno", "yes_no": "yesno", "yes-no": "yesno"}

_AUX_WORDS = (
    "is are was were do does did can could should shall has have had will would may might must"
)
_AUX = frozenset(_AUX_WORDS.split())
_SUMMARY_START = re.compile(
    r"^(describe|explain|summari[sz]e|discuss|give an overview|what is known|"
    r"what do we know|overview)\b"
)
_LIST_START = re.compile(r"^(list|name|enumerate|give (me )?(the|all|some))\b")
_PLURAL_ASK = re.compile(r"^(which|what)\b(\s+\S+){0,4}?\s+(are|were)\b")
_SUMMARY_WH = re.compile(
    r"^what (is|are|was|were) the (role|roles|mechanism|mechanisms|function|functions|"
    r"effect|effects|impact|significance|relationship|relation|association|difference|"
    r"differences|importance|purpose)\b"
)
_FACTOID_START = re.compile(r"^(how (many|much|long|old)|who|whom|when|where|which|what)\b")
_OPEN_WH = re.compile(r"^(how|why)\b")
_WH = re.compile(r"^(who|whom|whose|what|when|where|which|why|how)\b")
_CLAUSE = re.compile(r"(?::|;|--|\u2014|\u2013|\s-\s|,|\.\s)\s*[\"'(]?([a-z]+)\b")


@dataclass(frozen=True, slots=True)
class QuestionType:
    kind: str  # one of QUESTION_TYPES
    rule: str  # why (or "given")


def normalize_type(kind: str) -> str:
    """A canonical type name; raises ValueError for an unknown one."""
    key = kind.strip().casefold()
    key = ALIASES.get(key, key)
    if key not in QUESTION_TYPES:
        raise ValueError(f"unknown question type {kind!r}; choose one of {QUESTION_TYPES}")
    return key


def detect_question_type(question: str) -> QuestionType:
    q = " ".join(question.strip().casefold().split())
    first = q.split(" ", 1)[0].strip("\"'(") if q else ""
    if first in _AUX:
        return QuestionType("yesno", f"starts with the auxiliary {first!r}")
    if _SUMMARY_START.match(q):
        return QuestionType("ideal", "asks for a description or summary")
    if _LIST_START.match(q) or (_PLURAL_ASK.match(q) and not _SUMMARY_WH.match(q)):
        return QuestionType("list", "asks for several items")
    if _SUMMARY_WH.match(q) or (_OPEN_WH.match(q) and not _FACTOID_START.match(q)):
        return QuestionType("ideal", "asks for a mechanism, role or explanation")
    if _FACTOID_START.match(q):
        return QuestionType("factoid", "asks for one entity, number or name")
    if not q.endswith("?") and not _WH.match(q):
        return QuestionType("yesno", "a statement to verify (claim)")
    if q.endswith("?"):
        for m in _CLAUSE.finditer(q):
            if m.group(1) in _AUX:
                return QuestionType("yesno", f"a clause starts with the auxiliary {m.group(1)!r}")
    return QuestionType("ideal", "open question")


def resolve_question_type(question: str, given: str | None = None) -> QuestionType:
    """``given`` (a type name, "auto" or None) wins over detection."""
    if given is None or given == "auto":
        return detect_question_type(question)
    return QuestionType(normalize_type(given), "given")
