"""``vanilla``: evidence extraction without reasoning (EviOmni's baseline); it does not
judge sufficiency (``sufficient`` is None)."""

from __future__ import annotations

from sciera.evidence.tagged import TaggedExtractor


class VanillaExtractor(TaggedExtractor):
    name = "vanilla"
    prompt = "evidence_vanilla"
    judge_sufficiency = False
    default_max_tokens = 256
