"""Sentence splitting: blingfire's model plus a repair pass for scientific abbreviations.

Sentences are returned as character spans into the original text, so callers
can cut passages that are exact substrings of the document. Blank lines are
hard paragraph boundaries. blingfire sometimes ends a sentence after an
abbreviation ("Prof." | "Jones did not."); :func:`merge_abbreviations` joins a
fragment with the next one when the fragment ends with

* a token that is never sentence-final in scientific prose: titles (Dr., Prof.),
  reference words (Fig., Eq., Ref., Vol., pp.), Latin short forms (e.g., i.e.,
  cf., vs., viz., approx., ca.) and journal-name words (J. Biol. Chem., Proc.
  Natl. Acad. Sci.);
* "et al.", "etc.", "no.", "sp." and similar, when the next fragment starts like
  a continuation (lowercase letter, digit, bracket or punctuation), so "by Smith
  et al. (2019) found" is one sentence but "by Smith et al. The next" is two;
* a single capital initial ("J.", "A."), unless the next fragment starts with a
  common sentence opener ("The", "We", "In" ...), which keeps "vitamin D. The
  results" as two sentences and "J. Smith" as one.

blingfire does not end a sentence glued to the next without a space ("disease.Recent", as
BEIR's SciFact text joins an abstract's sentences); :func:`unglue` cuts such spans apart
for the sentences the store keeps (passages are cut on the splitter's spans alone).

:data:`RULES_VERSION` names these rules; ingest records it with every file it reads, so a
file read under older rules is read again by the next ``sciera ingest`` of it, which rewrites
its documents' sentences in place (passages, and so embeddings and indexes, stay).
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Sequence

import blingfire

RULES_VERSION = 2
"""The version of the rules that cut text into the sentences the store keeps: 1 before
:func:`unglue` cut glued sentences apart (2026-12-01), 2 since. Raise it with every change
that moves a stored sentence boundary. Version 2 moved none of the spans passages are cut
on, so re-ingesting keeps every passage (the warning of
:mod:`sciera.pipeline.build` says so); a change that moves them must say otherwise."""


def _words(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split())


_ALWAYS = _words(
    "dr. mr. mrs. ms. prof. fig. figs. eq. eqs. ref. refs. vol. vols. pp. cf. vs. "
    "e.g. i.e. viz. approx. ca. st. tab. suppl. sect. dept. univ."
)
_JOURNAL = _words(
    "J. Biol. Chem. Med. Sci. Natl. Acad. Proc. Res. Rev. Lett. Phys. Clin. Exp. Mol. "
    "Biochem. Biophys. Immunol. Pharmacol. Neurosci. Genet. Physiol. Microbiol. Oncol. "
    "Epidemiol. Nucl. Soc. Am. Engl. Int. Eur. Assoc. Pathol. Endocrinol. Metab. "
    "Invest. Psychol. Cardiol. Surg."
)
_CONTINUATION = _words("al. etc. no. nos. resp. sp. spp. subsp. var. jr. sr. inc. ltd. co. corp.")
_OPENERS = _words(
    "The This These That Those We Our In It Its A An Here However Thus Therefore "
    "Moreover Furthermore Finally Results Conclusions Conclusion Methods Background "
    "Objective Objectives Although As After For Of To When While Using Both All There "
    "They Such Patients Data"
)
_INITIAL = re.compile(r"[A-Z]\.")
_PARAGRAPH = re.compile(r"\n[^\S\n]*\n\s*")
_OPENING_PUNCT = "([{\"'"


def _joins(previous: str, following: str) -> bool:
    """Whether the fragment ``previous`` does not end a sentence before ``following``."""
    last = previous.split()[-1].lstrip(_OPENING_PUNCT)
    if last.lower() in _ALWAYS or last in _JOURNAL:
        return True
    first_char = following[0]
    if last.lower() in _CONTINUATION:
        return first_char.islower() or first_char.isdigit() or first_char in "([{,;:)]}"
    if _INITIAL.fullmatch(last):
        return following.split()[0].rstrip(",;:") not in _OPENERS
    return False


def merge_abbreviations(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join adjacent sentence spans that were split after an abbreviation."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and _joins(text[merged[-1][0] : merged[-1][1]], text[start:end]):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _strip(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _paragraphs(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _PARAGRAPH.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _utf8_to_char(data: bytes, byte_spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Turn byte spans (ascending, on character boundaries) into character spans."""
    cuts = sorted({b for span in byte_spans for b in span})
    at: dict[int, int] = {}
    previous = chars = 0
    for cut in cuts:
        chars += len(data[previous:cut].decode("utf-8", "ignore"))
        at[cut], previous = chars, cut
    return [(at[a], at[b]) for a, b in byte_spans]


def _blingfire_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans from blingfire's C entry point.

    ``blingfire.text_to_sentences_and_offsets`` maps byte offsets back to
    characters with a Python loop over every byte, which dominated ingest time;
    this calls the same C function and maps only the boundaries. It falls back to
    the public function if the C symbol is not there.
    """
    data = text.encode("utf-8")
    lib = getattr(blingfire, "blingfire", None)
    func = getattr(lib, "TextToSentencesWithOffsets", None)
    if func is None or not data:
        return list(blingfire.text_to_sentences_and_offsets(text)[1])
    size = len(data) * 2 + 16
    out = ctypes.create_string_buffer(size)
    starts, ends = (ctypes.c_int32 * size)(), (ctypes.c_int32 * size)()
    n_out = func(
        ctypes.c_char_p(data), ctypes.c_int(len(data)), ctypes.byref(out),
        ctypes.byref(starts), ctypes.byref(ends), ctypes.c_int(size),
    )  # fmt: skip
    if n_out < 0 or n_out > size:
        return [(0, len(text))]
    count = out.value.count(b"\n") + 1
    byte_spans = []
    for i in range(count):
        start, end = starts[i], ends[i] + 1  # blingfire's end offset is inclusive
        if 0 <= start < end <= len(data):
            byte_spans.append((start, end))
    if len(data) == len(text):  # ASCII: bytes are characters
        return byte_spans
    return _utf8_to_char(data, byte_spans)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the sentences of ``text``, in order."""
    out: list[tuple[int, int]] = []
    for p_start, p_end in _paragraphs(text):
        paragraph = text[p_start:p_end]
        if not paragraph.strip():
            continue
        spans = []
        for start, end in _blingfire_spans(paragraph):
            start, end = max(0, min(start, len(paragraph))), max(0, min(end, len(paragraph)))
            stripped = _strip(paragraph, start, end)
            if stripped is not None:
                spans.append((stripped[0] + p_start, stripped[1] + p_start))
        out.extend(merge_abbreviations(text, spans))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as substrings of it (surrounding spaces removed)."""
    return [text[start:end] for start, end in sentence_spans(text)]


_GLUED = re.compile(r"[.?!][\"\u201d\u2019']?(?=\S)")
_CLOSING = ".,;:)]}\"'\u201d\u2019"
_ABBREVIATION = re.compile(r"[^\W\d_]\.[^\W\d_]")  # "U.S", "e.g", "s.c", "www.lmmd"
_WEB = _words("com org net edu gov int info io uk de fr html htm php pdf")
_NEVER_FINAL = _ALWAYS | _CONTINUATION
_OPENING = _OPENING_PUNCT + "\u201c\u2018"


def _token_around(text: str, dot: int, cut: int, start: int, end: int) -> tuple[str, str]:
    """The text before ``dot`` back to the last space (opening brackets and quotes
    dropped) and from ``cut`` to the next space, both inside ``start:end``."""
    before = dot
    while before > start and not text[before - 1].isspace():
        before -= 1
    after = cut
    while after < end and not text[after].isspace():
        after += 1
    return text[before:dot].lstrip(_OPENING), text[cut:after]


def _next_word(text: str, at: int, end: int) -> str:
    """The first character of the word after the spaces at ``at`` (empty at ``end``)."""
    while at < end and text[at].isspace():
        at += 1
    return text[at : at + 1] if at < end else ""


def _glued(text: str, dot: int, cut: int, start: int, end: int) -> bool:
    """Whether the sentence mark at ``dot`` (with a closing quote, up to ``cut``) ends a
    sentence glued to the next one without a space ("disabilities.A line", "GTP.2,3-DPG
    activates", "precursors.p62 binds", "cancer.(Funded by", "summer.15 of the"): how BEIR's
    SciFact text joins an abstract's sentences. Not a boundary: abbreviations and initials
    ("U.S.", "e.g.", "E.coli", "Fig.2"), decimals and citation numbers ("0.5", "and.039,",
    "aging.1-3 The"), a lone capital ("H2A.Z variant"), gene notation ("IL28B.rs12979860"),
    web addresses ("ClinicalTrials.gov", "www.x.org/")."""
    prev, nxt = _token_around(text, dot, cut, start, end)
    if not prev or not nxt or _ABBREVIATION.search(prev):
        return False
    if len(prev) == 1 and prev.isalpha():  # an initial: "E.coli"
        return False
    if not prev.isupper() and (prev + ".").lower() in _NEVER_FINAL:
        return False  # "Fig.2", "et al.The"; an acronym is none of them ("of MS.It is")
    last, first, second = prev[-1], nxt[0], nxt[1:2]
    word = nxt.rstrip(_CLOSING)
    after_word = last.islower() or last in ")%"  # "methylation.", "(75%).", not "IL28B."
    if first in "([":  # "cancer.(Funded by", "function.(2) The"
        return second.isupper() or (after_word and second.isdigit())
    if first.isupper():  # a capital alone is no first word ("H2A.Z variant"), but "A" is
        return second.isalnum() or second == "-" or (first == "A" and len(nxt) == 1)
    if first.isdigit():  # "GTP.2,3-Diphosphoglycerate", "outcome.6MP dose", "study.31 were"
        if last.isdigit():
            return False
        counted = after_word and first != "0" and _next_word(text, cut + len(nxt), end).islower()
        return counted or any(c.isalpha() for c in word)
    if first.isalpha():  # "methylation.heso1-2", "(75%).beta-amyloid"
        web = "/" in nxt or "@" in nxt or "." in word or word.lower() in _WEB
        return after_word and not web and len(word) > 1
    return False


def unglue(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with each sentence cut again where two sentences are glued together
    without a space (:func:`_glued`); every piece stays inside its span (so inside its
    passage)."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        cut = start
        for m in _GLUED.finditer(text, start, end):
            if m.end() < end and _glued(text, m.start(), m.end(), start, end):
                out.append((cut, m.end()))
                cut = m.end()
        out.append((cut, end))
    return out
