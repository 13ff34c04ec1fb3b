"""Claim negation: one rule-based edit that flips what a claim asserts. Two uses: training
data (``sciera train verifier --claim-negations``: a (claim, rationale) pair labelled SUPPORT
gives a CONTRADICT pair and the reverse; SciFact's own CONTRADICT claims were written the same
way, by negating a claim), and a second question to the LLM verdict
(:class:`sciera.verify.llm_verdict.NegatedLLMVerdict`: the 1.5B leans to "support", and its
answer to the negated claim tells contradiction apart where its answer to the claim does not).

One edit per claim, the first rule that applies:

1. an explicit negation is removed (``is not`` -> ``is``, ``cannot`` -> ``can``, ``has
   no effect`` -> ``has effect``);
2. a directional word is swapped for its opposite (``increases`` -> ``decreases``,
   ``higher`` -> ``lower``, ``promotes`` -> ``inhibits``, ...);
3. ``not`` is inserted after the first auxiliary (``is associated`` -> ``is not
   associated``), else before the first of some common verbs (``causes`` -> ``does not
   cause``, ``produce`` -> ``do not produce``).

A claim no rule fits returns ``None`` (no guess). Adjectives that name a condition rather
than a direction (``high-fat``, ``HIV-positive``) are left alone: swapping them changes
what the claim is about, not whether the evidence supports it.
"""

from __future__ import annotations

import re

_AUX = r"is|are|was|were|can|could|may|might|will|would|should|must|does|do|did|has|have|had"
_NEGATED = re.compile(rf"\b({_AUX}) not\b", re.IGNORECASE)
_CANNOT = re.compile(r"\bcannot\b", re.IGNORECASE)
_NOT = re.compile(r"\b(not|no) ", re.IGNORECASE)
_INSERT = re.compile(r"\b(is|are|was|were|can|could|may|might|will|would|should)\b(?! not\b)")

# swapped both ways; inflected forms listed (no stemmer)
_PAIRS = [
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increasing", "decreasing"),
    ("higher", "lower"),
    ("upregulates", "downregulates"),
    ("upregulated", "downregulated"),
    ("up-regulates", "down-regulates"),
    ("up-regulated", "down-regulated"),
    ("promotes", "inhibits"),
    ("promoted", "inhibited"),
    ("promote", "inhibit"),
    ("enhances", "impairs"),
    ("enhanced", "impaired"),
    ("enhance", "impair"),
    ("improves", "worsens"),
    ("improved", "worsened"),
    ("improve", "worsen"),
    ("stimulates", "suppresses"),
    ("stimulate", "suppress"),
    ("accelerates", "slows"),
    ("positively", "negatively"),
    ("better", "worse"),
    ("faster", "slower"),
    ("longer", "shorter"),
    ("beneficial", "harmful"),
    ("activates", "represses"),
    ("activate", "repress"),
    ("gain", "loss"),
]
DIRECTION_PAIRS: tuple[tuple[str, str], ...] = tuple(_PAIRS)
"""The directional words the rules swap, as (up, down) pairs."""
_ONE_WAY = {  # key -> value as listed (the reverse of "reduces" is "increases" above)
    "reduces": "increases",
    "reduced": "increased",
    "reduce": "increase",
    "reducing": "increasing",
    "lowers": "raises",
    "raises": "lowers",
    "elevated": "reduced",
    "greater": "lower",
    "prevents": "causes",
    "protects": "harms",
    "effective": "ineffective",
    "ineffective": "effective",
    "more": "less",
    "less": "more",
}
# third-person verbs -> their base form, for "does not <base>"; a base form (plural
# subject) gets "do not" and must not follow an article (``the cause of``)
_VERBS = {
    v + "s": v
    for v in (
        "cause",
        "affect",
        "bind",
        "contribute",
        "control",
        "correlate",
        "depend",
        "drive",
        "enable",
        "encourage",
        "exhibit",
        "facilitate",
        "induce",
        "influence",
        "interact",
        "lead",
        "mediate",
        "modulate",
        "occur",
        "play",
        "predict",
        "produce",
        "regulate",
        "require",
        "result",
        "show",
        "target",
        "trigger",
    )
} | {"has": "have"}
_BASES = set(_VERBS.values())
_VERB = re.compile(
    r"(?<![\w-])(" + "|".join(sorted({*_VERBS, *_BASES}, key=len, reverse=True)) + r")(?![\w-])"
)
_ARTICLE = re.compile(r"\b(a|an|the|of|to)\s+$", re.IGNORECASE)
_OPPOSITE = {**{a: b for a, b in _PAIRS}, **{b: a for a, b in _PAIRS}, **_ONE_WAY}
_WORD = re.compile(
    r"(?<![\w-])("
    + "|".join(sorted(map(re.escape, _OPPOSITE), key=len, reverse=True))
    + r")(?![\w-])",
    re.IGNORECASE,
)


def _cased(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


def negate_claim(claim: str) -> str | None:
    """The claim with what it asserts flipped, or ``None`` when no rule applies."""
    text = claim.strip()
    if not text:
        return None
    m = _NEGATED.search(text)
    if m:
        return text[: m.start()] + m.group(1) + text[m.end() :]
    m = _CANNOT.search(text)
    if m:
        return text[: m.start()] + _cased("can", m.group(0)) + text[m.end() :]
    m = _NOT.search(text)
    if m and m.start() > 0:
        return text[: m.start()] + text[m.end() :]
    m = _WORD.search(text)
    if m and not (m.group(1).lower() in ("more", "less") and text[m.end() :].startswith(" than")):
        word = m.group(1)
        return text[: m.start()] + _cased(_OPPOSITE[word.lower()], word) + text[m.end() :]
    m = _INSERT.search(text)
    if m:
        return text[: m.end()] + " not" + text[m.end() :]
    for m in _VERB.finditer(text):
        if m.start() == 0 or _ARTICLE.search(text[: m.start()]):
            continue
        verb = m.group(1)
        aux = "does not " + _VERBS[verb] if verb in _VERBS else "do not " + verb
        return text[: m.start()] + aux + text[m.end() :]
    return None
