"""Generated HTTP requests (Schemathesis) and the checks every response must pass: shared by
the in-process API fuzzing (tests/unit/serve/test_api_fuzz.py) and the run against a real
`sciera serve` on loopback (tests/e2e/test_serve_schema.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

LEAKS = ("/site-packages/", "/tmp/", "/work/", "/home/", "/root/")


def no_leak_and_one_line_errors(ctx: Any, response: Any, case: Any) -> None:
    """No body holds a traceback; errors are exactly {"error": one line} naming no path.

    (Successful bodies may: the corpora listing's ``path`` and an experiment's manifest
    name folders by design.)"""
    text = response.content.decode("utf-8", "replace")  # a plot is PNG bytes
    assert "Traceback" not in text and 'File "' not in text, text[:300]
    if response.status_code >= 400:
        body = json.loads(text)
        assert isinstance(body, dict) and list(body) == ["error"], text[:300]
        message = body["error"]
        assert isinstance(message, str) and message and "\n" not in message, text[:300]
        assert len(message) <= 300, len(message)
        for leak in LEAKS:
            assert leak not in message, f"{leak!r} in {case.method} {case.path}: {message}"


def generated(
    op: Any,
    mode: GenerationMode,
    examples: int,
    *,
    derandomize: bool = True,
    on_response: Callable[[Any], None] | None = None,
    **call: Any,
) -> None:
    """``examples`` generated requests of ``mode`` to ``op``: each response has a status the
    schema documents, validates against it and passes :func:`no_leak_and_one_line_errors`
    (a request the schema allows may still be refused with a documented 400: a retriever
    whose index the corpus lacks, a blank query)."""

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=derandomize,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=op.as_strategy(generation_mode=mode))
    def one(case: Any) -> None:
        response = case.call_and_validate(
            additional_checks=[no_leak_and_one_line_errors],
            excluded_checks=[positive_data_acceptance],
            **call,
        )
        if on_response is not None:
            on_response(response)

    one()
