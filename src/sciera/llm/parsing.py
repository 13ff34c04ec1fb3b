"""Robust reading of free-text LLM replies.

Every reader here returns either the value or a typed :class:`ParseFailure`
(logged as a warning); none raises on bad text and none falls back to a
positive value. Replies are cleaned first: ``<think>...</think>`` reasoning
(also an unterminated ``<think>`` or a lone ``</think>``) is dropped and code
fences are unwrapped.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sciera.llm.base import Completion, JSONResult, ParseFailure
from sciera.llm.schema import validate

logger = logging.getLogger(__name__)

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.S | re.I)
_THINK_OPEN = re.compile(r"<think>", re.I)
_THINK_CLOSE = re.compile(r"</think>", re.I)
_FENCE = re.compile(r"```[\w+-]*[^\S\n]*\n?(.*?)(?:```|\Z)", re.S)
_NUM = r"(?<![\w.\-])[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_EXPR = re.compile(rf"({_NUM})(?:\s*(?:/|out\s+of)\s*({_NUM}))?(\s*%)?", re.I)
_LABELLED = re.compile(
    r"\b(?:relevance[ _]score|score|rating|relevance)\b\s*(?:\([^)]*\))?\s*(?:[:=]|is)?\s*"
    rf"(?={_NUM})",
    re.I,
)
_RANGE = re.compile(r"\(?\b\d+(?:\.\d+)?\s*(?:-|–|to)\s*\d+(?:\.\d+)?\b\)?")
_SCORE_KEYS = ("score", "relevance_score", "relevance", "rating")


def _fail(raw: str, error: str) -> ParseFailure:
    logger.warning("unparseable LLM reply (%s): %r", error, raw[:200])
    return ParseFailure(raw=raw, error=error)


def strip_reasoning(text: str) -> str:
    """Drop ``<think>`` blocks; an unterminated one drops the rest of the reply."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:  # reasoning whose opening tag was in the prompt
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text.strip()


def clean_reply(text: str) -> str:
    """Reasoning removed and code fences replaced by their contents."""
    return _FENCE.sub(lambda m: m.group(1).strip(), strip_reasoning(text)).strip()


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the object opened at ``text[start] == "{"``, or None."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _objects(text: str) -> Iterator[dict[str, Any]]:
    """JSON objects in ``text``, fenced blocks first, then the whole reply, in order.

    The inside of an object that parsed is not searched again, so a nested
    object is never mistaken for the reply.
    """
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for source in sources:
        i = source.find("{")
        while i != -1:
            end = _balanced_end(source, i)
            value = _load(source[i:end]) if end is not None else None
            if isinstance(value, dict):
                yield value
                i = source.find("{", end)
            else:
                i = source.find("{", i + 1)


def _repair(s: str) -> str:
    """Single-quoted strings -> JSON strings, drop trailing commas, Python literals."""
    out: list[str] = []
    i, n = 0, len(s)
    literals = {"True": "true", "False": "false", "None": "null"}
    while i < n:
        c = s[i]
        if c in "\"'":
            j, buf = i + 1, []
            while j < n and s[j] != c:
                if s[j] == "\\" and j + 1 < n:
                    buf.append(s[j : j + 2])
                    j += 2
                    continue
                buf.append(s[j])
                j += 1
            body = "".join(buf)
            if c == '"':
                out.append(f'"{body}"')
            else:
                out.append(json.dumps(body.replace("\\'", "'").replace('\\"', '"')))
            i = j + 1
        elif c == ",":
            k = i + 1
            while k < n and s[k].isspace():
                k += 1
            if k >= n or s[k] not in "}]":
                out.append(c)
            i += 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (s[j].isalnum() or s[j] == "_"):
                j += 1
            word = s[i:j]
            out.append(literals.get(word, word))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _load(candidate: str) -> Any:
    for attempt in (candidate, _repair(candidate)):
        try:
            return json.loads(attempt, strict=False)
        except ValueError:
            continue
    return None


def parse_json(text: str, schema: Mapping[str, Any] | None = None) -> dict[str, Any] | ParseFailure:
    """The first JSON object in ``text`` that parses (and validates against ``schema``)."""
    try:
        cleaned = clean_reply(text)
        first_error = ""
        for value in _objects(strip_reasoning(text)):
            if schema is None:
                return value
            coerced, errors = validate(value, schema)
            if not errors:
                return coerced
            first_error = first_error or "; ".join(str(e) for e in errors)
        if first_error:
            return _fail(text, f"schema: {first_error}")
        return _fail(text, "no JSON object found" if "{" not in cleaned else "invalid JSON")
    except Exception as exc:  # a reader of untrusted text must never raise
        return _fail(text, f"parser error: {exc!r}")


def json_result(completion: Completion, schema: Mapping[str, Any]) -> JSONResult:
    """``complete_json``'s result for a reply: the validated object, or the failure."""
    parsed = parse_json(completion.text, schema)
    if isinstance(parsed, ParseFailure):
        return JSONResult(None, completion, parsed)
    return JSONResult(parsed, completion)


def cut_json_string(text: str, field: str) -> str | None:
    """The value of string ``field`` in a JSON reply cut off inside that string (a reply that
    hit the token limit), decoded up to the cut; None if the field never opened.

    ``{"answer": "Yes, drug X lowers it [1]. It also`` gives ``Yes, drug X lowers it [1].
    It also`` (escapes decoded; a half escape at the cut is dropped). A reply whose string
    did close is left to :func:`parse_json`.
    """
    cleaned = clean_reply(text)
    opened = re.search(rf'"{re.escape(field)}"\s*:\s*"', cleaned)
    if opened is None:
        return None
    body = cleaned[opened.end() :]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            return None  # the string closed: not a cut reply
        if ch == "\\":
            esc = body[i : i + 6] if body[i + 1 : i + 2] == "u" else body[i : i + 2]
            if len(esc) < 2 or (esc[1] == "u" and len(esc) < 6):
                break  # a half escape at the cut
            try:
                out.append(json.loads(f'"{esc}"'))
            except ValueError:
                out.append(esc[1:])
            i += len(esc)
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def salvage_cut_field(text: str, field: str, finish_reason: str) -> str | None:
    """The whole sentences of string ``field`` in a JSON reply that the token limit cut
    (``finish_reason == "length"``); None when the reply was not cut, the field never
    opened, or no sentence ended before the cut (the sentence the cut went through is
    dropped; a sentence repeated by a generation loop is kept once). The 1.5B runs past
    its limit on long fields, sometimes repeating itself.
    """
    if finish_reason != "length":
        return None
    from sciera.corpus.sentences import split_sentences

    partial = cut_json_string(text, field)
    sentences = split_sentences(" ".join((partial or "").split()))
    if sentences and not sentences[-1].rstrip().endswith((".", "!", "?", "]", ")")):
        sentences = sentences[:-1]
    return " ".join(dict.fromkeys(sentences)) or None  # a looping reply: each sentence once


def _on_scale(num: float, den: float | None, percent: bool, lo: float, hi: float) -> float | None:
    if den is not None:
        if den <= 0:
            return None
        value = num if den == hi else lo + num / den * (hi - lo)
    elif percent:
        value = lo + num / 100 * (hi - lo)
    elif num > hi and lo >= 0 and hi - lo <= 1:
        # "8" on a 0-1 scale: read as the common 10- or 100-point scale
        value = lo + num / 10 * (hi - lo) if num <= 10 else lo + num / 100 * (hi - lo)
    else:
        value = num
    return value if math.isfinite(value) else None


def _expr_value(m: re.Match[str], lo: float, hi: float) -> float | None:
    den = float(m.group(2)) if m.group(2) else None
    return _on_scale(float(m.group(1)), den, bool(m.group(3)), lo, hi)


def _score_from_json(cleaned: str) -> Any:
    if "{" not in cleaned:
        return None
    for value in _objects(cleaned):
        for key in _SCORE_KEYS:
            if key in value:
                return value[key]
    return None


def parse_score(text: str, lo: float = 0.0, hi: float = 1.0) -> float | ParseFailure:
    """A score on [lo, hi] from replies like "8", "8/10", "0.8", "Score: 7.5 out of 10", "80%".

    A fraction whose denominator equals ``hi`` is taken as is, other fractions and
    percentages are mapped onto the scale; on a scale of width <= 1 a bare number
    above ``hi`` is read on a 10- (or 100-) point scale. The result is clamped to
    [lo, hi]. Several unlabelled numbers are ambiguous and give a ParseFailure.
    Raises ValueError only for bounds with ``lo >= hi`` (a caller bug).
    """
    if not lo < hi:
        raise ValueError(f"parse_score needs lo < hi, got [{lo}, {hi}]")
    try:
        value = _read_score(clean_reply(text).replace("*", ""), lo, hi)
    except Exception as exc:  # never raise on untrusted text
        return _fail(text, f"parser error: {exc!r}")
    if value is None:
        return _fail(text, f"no score on [{lo}, {hi}] found")
    return float(min(hi, max(lo, value)))


def _read_score(cleaned: str, lo: float, hi: float) -> float | None:
    field = _score_from_json(cleaned)
    if isinstance(field, int | float) and not isinstance(field, bool):
        return _on_scale(float(field), None, False, lo, hi)
    if isinstance(field, str):
        cleaned = field
    whole = _EXPR.fullmatch(cleaned.strip().rstrip("."))
    if whole:
        return _expr_value(whole, lo, hi)
    label = _LABELLED.search(cleaned)
    if label:
        m = _EXPR.match(cleaned, label.end())
        if m:
            return _expr_value(m, lo, hi)
    unranged = _RANGE.sub(" ", cleaned)
    exprs = list(_EXPR.finditer(unranged))
    for m in exprs:  # an explicit fraction or percentage anywhere
        if m.group(2) or m.group(3):
            return _expr_value(m, lo, hi)
    if len({m.group(1) for m in exprs}) == 1:
        return _expr_value(exprs[0], lo, hi)
    return None


def _norm_word(s: str) -> str:
    return s.strip().strip("\"'`.,:;!?()[]{}<>").casefold()


def parse_choice(text: str, choices: Sequence[str]) -> str | ParseFailure:
    """Which of ``choices`` the reply gives: whole reply, first word, or a unique mention."""
    try:
        cleaned = clean_reply(text)
        by_norm = {_norm_word(c): c for c in choices}
        whole = _norm_word(cleaned)
        if whole in by_norm:
            return by_norm[whole]
        words = cleaned.split()
        if words and _norm_word(words[0]) in by_norm:
            return by_norm[_norm_word(words[0])]
        found = {
            c
            for c in choices
            if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", cleaned, re.I) is not None
        }
        if len(found) == 1:
            return found.pop()
        problem = "several choices mentioned" if found else "no choice found"
        return _fail(text, f"{problem}; expected one of {list(choices)}")
    except Exception as exc:
        return _fail(text, f"parser error: {exc!r}")


def extract_tag(text: str, tag: str) -> str | ParseFailure:
    """Contents of the first ``<tag>...</tag>``; an unclosed tag runs to the end.

    A missing tag is returned as a :class:`ParseFailure` without a warning: whether it
    matters (a missing ``<extract>``) or not (an optional ``<reason>``) is the caller's
    call, and the caller logs it."""
    cleaned = strip_reasoning(text)
    m = re.search(rf"<{re.escape(tag)}>(.*?)(?:</{re.escape(tag)}>|\Z)", cleaned, re.S | re.I)
    if m is None:
        return ParseFailure(raw=text, error=f"no <{tag}> block")
    return m.group(1).strip()
