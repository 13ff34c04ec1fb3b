"""``sciera research``: a multi-step research agent (deep-research paper, Sections 2 and
3.2.5) that searches, reads, searches again and answers like ``sciera ask``.

Modules: ``actions`` (the JSON action format), ``q2q`` (query-to-question rewriting),
``tools`` (search, get_document, how results enter the context), ``pool`` (the gathered
evidence), ``limits``, ``agent`` (the loop), ``trace`` (steps, JSONL, --explain), ``api``
(building from settings, :func:`research`).
"""

from sciera.research.api import ResearchOptions, research
from sciera.research.trace import Run, Step, write_trace

__all__ = ["ResearchOptions", "Run", "Step", "research", "write_trace"]
