"""Text helpers every layer may use: SQuAD answer normalization, named tokenizers, and
the compression ratio of evidence to the passages it came from.

The answer metrics (:mod:`sciera.eval.metrics.generation`), the evidence extractors, the
pipeline and the SSLI validators all normalize and count tokens with these, so a string
means the same to each.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Sequence

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_WORD = re.compile(r"\w+")

Tokenizer = Callable[[str], Sequence[object]]

TOKENIZERS: dict[str, Tokenizer] = {
    "whitespace": str.split,
    "words": _WORD.findall,
}
"""Named tokenizers for :func:`compression_ratio`; any ``str -> sequence`` callable works too."""


def normalize_text(text: str) -> str:
    """SQuAD answer normalization (lowercase, drop ASCII punctuation, drop the articles
    a/an/the, collapse whitespace), shared by EM and the token metrics."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def get_tokenizer(name: str | Tokenizer) -> Tokenizer:
    """The tokenizer ``name`` names in :data:`TOKENIZERS`, or ``name`` itself if callable."""
    if callable(name):
        return name
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise ValueError(
            f"unknown tokenizer {name!r}; use one of {sorted(TOKENIZERS)} or a callable"
        ) from None


def compression_ratio(
    passages: Iterable[str], evidence: str, tokenizer: str | Tokenizer = "whitespace"
) -> float:
    """EviOmni CR: total tokens of the passages / tokens of the evidence (eq. 9).

    ``tokenizer`` is a name from :data:`TOKENIZERS` or a callable (e.g. an LLM
    tokenizer's ``encode``). Empty evidence counts as one token so the ratio stays
    finite: it then equals the passage token count.
    """
    tok = get_tokenizer(tokenizer)
    passage_tokens = sum(len(tok(p)) for p in passages)
    return passage_tokens / max(len(tok(evidence)), 1)
