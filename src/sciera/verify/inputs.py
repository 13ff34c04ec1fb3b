"""The text pairs a trained verifier reads, built the same way in training and inference.

A rationale-selector pair is (claim, the sentence, then its context after the tokenizer's
separator); a verdict pair is (claim, the rationale sentences joined in abstract order, then
the title). The sentence comes first so truncation cuts context, never the sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

CONTEXTS = ("none", "title", "neighbours")
"""What a selector pair adds after its sentence: nothing, the title, or the title and the
sentences before and after it."""


def sentence_pair(
    claim: str,
    sentences: Sequence[str],
    index: int,
    title: str = "",
    *,
    context: str = "title",
    sep: str = "[SEP]",
) -> tuple[str, str]:
    """(claim, sentence ``index`` with its ``context``)."""
    if context not in CONTEXTS:
        raise ValueError(f"context must be one of {', '.join(CONTEXTS)}, got {context!r}")
    text = sentences[index]
    if context == "none":
        return claim, text
    parts = [text, title.strip()] if title.strip() else [text]
    if context == "neighbours":
        around = [sentences[j] for j in (index - 1, index + 1) if 0 <= j < len(sentences)]
        if around:
            parts.append(" ".join(around))
    return claim, f" {sep} ".join(parts)


def verdict_pair(
    claim: str, rationales: Sequence[str], title: str = "", *, sep: str = "[SEP]"
) -> tuple[str, str]:
    """(claim, the rationale sentences joined, then the title)."""
    body = " ".join(s.strip() for s in rationales if s.strip())
    return claim, f"{body} {sep} {title.strip()}" if title.strip() else body
