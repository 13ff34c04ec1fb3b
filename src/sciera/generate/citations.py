"""Citation markers: ``[n]`` in an answer -> the passage id of evidence record n (1-based).

Accepted forms: ``[1]``, ``[1, 3]``, ``[1-3]``, ``[1][2]``, ``[Passage 2]``. Numbers that
point at no evidence record are removed from the text (the whole bracket when none is
left) and counted; kept groups are rewritten in the canonical ``[1, 3]`` form.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from sciera.corpus.sentences import split_sentences
from sciera.types import Citation, Evidence

_GROUP = re.compile(
    r"\s*\[\s*(?:passages?|p\.?)?\s*(\d+(?:\s*(?:[,;–-]|and)\s*(?:passages?\s*)?\d+)*)\s*\]",
    re.I,
)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


@dataclass(frozen=True, slots=True)
class CitedText:
    text: str
    citations: tuple[Citation, ...]  # in order of first use
    dangling: tuple[int, ...]  # markers removed because no evidence record has that number
    uncited_sentences: int


def _numbers(group: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*(?:,|;|and)\s*", re.sub(r"(?i)passages?", "", group).strip()):
        part = part.strip()
        if re.fullmatch(r"\d+\s*[–-]\s*\d+", part):
            lo, hi = (int(x) for x in re.split(r"\s*[–-]\s*", part))
            out.extend(range(lo, min(hi, lo + 50) + 1))
        elif part.isdigit():
            out.append(int(part))
    return list(dict.fromkeys(out))


def resolve_citations(text: str, evidence: Sequence[Evidence]) -> CitedText:
    """Map markers to passage ids; drop and count dangling ones."""
    used: list[int] = []
    dangling: list[int] = []

    def fix(m: re.Match[str]) -> str:
        nums = _numbers(m.group(1))
        good = [n for n in nums if 1 <= n <= len(evidence)]
        dangling.extend(n for n in nums if n not in good)
        used.extend(n for n in good if n not in used)
        return f" [{', '.join(str(n) for n in good)}]" if good else ""

    cleaned = _GROUP.sub(fix, text)
    cleaned = _SPACE_BEFORE_PUNCT.sub(r"\1", cleaned).strip()
    citations = tuple(_citation(n, evidence[n - 1]) for n in used)
    sentences = split_sentences(cleaned) if cleaned else []
    uncited = sum(1 for s in sentences if not re.search(r"\[\d", s))
    return CitedText(cleaned, citations, tuple(dangling), uncited)


def cite_all(evidence: Sequence[Evidence]) -> tuple[Citation, ...]:
    """Every evidence record as a citation (a decision read over all of them)."""
    return tuple(_citation(i + 1, e) for i, e in enumerate(evidence))


def _citation(marker: int, evidence: Evidence) -> Citation:
    """Citation ``marker`` of one evidence record (its passage, title and section)."""
    p = evidence.passage
    return Citation(marker, p.passage_id, p.title, section=p.section)


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def stating(answer: str, evidence: Sequence[Evidence]) -> tuple[int, ...]:
    """The markers (1-based) of the evidence records whose passage states ``answer``
    verbatim (Unicode-normalized, case and spacing aside, not inside a longer word)."""
    needle = _folded(answer).strip(" .;,")
    if not needle:
        return ()
    pattern = re.compile(r"(?<!\w)" + re.escape(needle) + r"(?!\w)")
    return tuple(n for n, e in enumerate(evidence, 1) if pattern.search(_folded(e.passage.text)))


def cite_stating(
    citations: Sequence[Citation], answers: Sequence[str], evidence: Sequence[Evidence]
) -> tuple[Citation, ...]:
    """``citations`` and, after them, the records that state one of ``answers`` verbatim."""
    used = [c.marker for c in citations]
    extra = [n for a in answers for n in stating(a, evidence) if n not in used]
    return (*citations, *(_citation(n, evidence[n - 1]) for n in dict.fromkeys(extra)))
