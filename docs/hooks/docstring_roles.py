"""MkDocs hook: the package's docstrings cross-reference with Sphinx roles
(``:class:`Retriever```, ``:func:`~sciera.x.f```), which mkdocstrings renders literally;
keep the code and drop the role (and the ``~`` shortening mark)."""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const):(<code>)~?")


def on_page_content(html: str, **kwargs: Any) -> str:
    return ROLE.sub(r"\1", html)
