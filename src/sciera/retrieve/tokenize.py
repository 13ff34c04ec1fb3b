"""The one BM25 tokenizer: lowercase, ``\\w\\w+`` tokens (scikit-learn / bm25s pattern),
a bm25s stopword list, then PyStemmer stems.

The index, the queries and the rank_bm25 peer in the benchmark all use it, so
every BM25 here sees identical tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sciera.errors import require
from sciera.settings import BM25Settings

TOKEN_PATTERN = r"(?u)\b\w\w+\b"


class BM25Tokenizer:
    """Text -> list of (stemmed) tokens, configured by :class:`BM25Settings`."""

    def __init__(self, settings: BM25Settings) -> None:
        bm25s = require("bm25s", "core")
        self._split = re.compile(TOKEN_PATTERN).findall
        stop = bm25s.tokenization.Tokenizer(stopwords=settings.stopwords).stopwords
        self._stopwords = frozenset(stop or ())
        self._stem = (
            require("Stemmer", "core").Stemmer(settings.stemmer).stemWord
            if settings.stemmer
            else None
        )
        self._cache: dict[str, str] = {}

    def tokens(self, text: str) -> list[str]:
        words = [w for w in self._split(text.lower()) if w not in self._stopwords]
        if self._stem is None:
            return words
        cache = self._cache
        out = []
        for word in words:
            stem = cache.get(word)
            if stem is None:
                stem = cache[word] = self._stem(word)
            out.append(stem)
        return out

    def tokenize(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokens(t) for t in texts]
