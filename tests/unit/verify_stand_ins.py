"""Stand-in verification models for the unit tier (model-free, deterministic), registered
by name in the real registries by the unit conftest's ``registered`` fixture, as a backend
would be."""

from __future__ import annotations


class OverlapSelector:
    """P(rationale): 0.9 for a sentence sharing a content word with the claim, else 0.1."""

    name = "overlap"

    @classmethod
    def from_settings(cls, settings, **_):
        return cls()

    def score_many(self, claim, abstracts):
        words = {w.strip(".").lower() for w in claim.split() if len(w) > 4}
        return [
            [0.9 if words & {w.strip(".").lower() for w in s.split()} else 0.1 for s in a.sentences]
            for a in abstracts
        ]


class KeywordVerdict:
    """About the claim (a shared content word): SUPPORT when the rationale says "lowered",
    CONTRADICT for "not associated"; else NEI."""

    name = "keyword"

    @classmethod
    def from_settings(cls, settings, **_):
        return cls()

    def predict_many(self, claim, inputs):
        out = []
        words = {w.strip(".?").lower() for w in claim.split() if len(w) > 4}
        for item in inputs:
            text = " ".join(item.sentences)
            if not words & {w.strip(".").lower() for w in text.split()}:
                out.append((0.1, 0.1, 0.8))
            elif "lowered" in text:
                out.append((0.9, 0.05, 0.05))
            elif "not associated" in text:
                out.append((0.1, 0.8, 0.1))
            else:
                out.append((0.1, 0.1, 0.8))
        return out
