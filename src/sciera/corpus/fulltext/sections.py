"""Section kinds: what a heading ("Materials and Methods", "Results and discussion") is.

:func:`section_kinds` maps a top-level heading (and JATS ``sec-type`` when given) to the
kinds a ``--section`` filter names: abstract, introduction, methods, results, discussion,
conclusions, and a few back-matter kinds. A heading can be two kinds ("Results and
Discussion"). :func:`parse_section_filter` reads a ``--section methods,results`` list.
"""

from __future__ import annotations

import re

KINDS = (
    "abstract",
    "introduction",
    "methods",
    "results",
    "discussion",
    "conclusions",
    "acknowledgements",
    "references",
    "supplementary",
    "appendix",
    "declarations",
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("abstract", r"^(abstract|summary|author summary|eLife digest|synopsis)$"),
        ("introduction", r"^(introduction|background)\b"),
        (
            "methods",
            r"\b(methods?|materials|methodology|experimental procedures|study design|"
            r"patients|power calculations|protocols?)\b",
        ),
        ("results", r"\bresults?\b|\bfindings\b"),
        ("discussion", r"\bdiscussion\b"),
        ("conclusions", r"^(conclusions?|concluding remarks)\b"),
        ("acknowledgements", r"^acknowledge?ments?\b|^funding\b"),
        ("references", r"^(references|bibliography|literature cited)$"),
        ("supplementary", r"^(supplementary|supporting information|additional files?)\b"),
        ("appendix", r"^appendix\b"),
        (
            "declarations",
            r"^(competing interests|conflicts? of interest|author'?s'? contributions|"
            r"ethics|data availability|abbreviations)\b",
        ),
    )
)
_SEC_TYPES = {
    "intro": "introduction",
    "introduction": "introduction",
    "background": "introduction",
    "methods": "methods",
    "materials": "methods",
    "results": "results",
    "discussion": "discussion",
    "conclusions": "conclusions",
    "supplementary-material": "supplementary",
}


def section_kinds(title: str, sec_type: str = "") -> frozenset[str]:
    """The kinds of a top-level section (empty for a heading of no known kind)."""
    kinds = {_SEC_TYPES[t] for t in sec_type.lower().split("|") if t in _SEC_TYPES}
    heading = " ".join(title.split())
    kinds.update(kind for kind, pattern in _PATTERNS if pattern.search(heading))
    if kinds & {"abstract", "introduction"} and len(kinds) > 1 and not sec_type:
        kinds &= {"abstract", "introduction"}
    return frozenset(kinds)


def parse_section_filter(spec: str) -> frozenset[str]:
    """``"methods,results"`` as a set of kinds; raises ValueError naming an unknown one."""
    wanted = frozenset(part.strip().lower() for part in spec.split(",") if part.strip())
    unknown = sorted(wanted - set(KINDS))
    if unknown:
        raise ValueError(f"unknown section kind {unknown[0]!r}; choose from {', '.join(KINDS)}")
    return wanted
