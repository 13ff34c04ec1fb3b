"""SciRAG-SSLI dataset builder (DeepEra paper, Algorithm 2, Figures 3, 8 and 10).

Turns an ingested corpus into a benchmark of questions with a gold answer, gold
passage id(s) and 30 candidate passages, in a Base setting (retrieved passages)
and an SSLI setting (semantically similar but logically irrelevant distractors
injected). Steps, each resumable from a JSONL checkpoint in the output folder:

1. :mod:`.select` -- embed documents, k-means, keep documents of well-populated clusters.
2. :mod:`.extract` -- structured notes (method, result, significance) per passage.
3. :mod:`.qa` -- 1-3 self-contained QA pairs per passage (Figure 10), or LMQG-style
   straight from the passage; filtered by :mod:`.validate`.
4. :mod:`.contexts` -- Base candidates (hybrid retrieval + gold), SSLI distractors
   (LLM guidance then generation, validated) or mined hard negatives (no LLM).

:mod:`.builder` runs them; :mod:`.io` writes/reads ``instances.jsonl``
(:func:`load_ssli`) and the stats report; :mod:`.inspect` prints one instance.
"""

from sciera.datasets.ssli.io import load_ssli, read_instances, write_instances

__all__ = ["load_ssli", "read_instances", "write_instances"]
