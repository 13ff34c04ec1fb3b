"""``rational``: EviOmni rational evidence extraction (paper Table 14).

One call reasons (``<reason>``), judges whether the passages suffice (``<sufficient>``)
and writes the evidence (``<extract>``); generation stops at ``</extract>``.
"""

from __future__ import annotations

from sciera.evidence.tagged import TaggedExtractor


class RationalExtractor(TaggedExtractor):
    name = "rational"
    prompt = "evidence_rational"
    judge_sufficiency = True
    default_max_tokens = 512
