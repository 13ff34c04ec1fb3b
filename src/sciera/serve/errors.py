"""Every error the API returns is JSON ``{"error": "one line"}``; never a traceback.

- a request that fails validation: 422 naming the field (``query: must not be empty``);
- an HTTP error (unknown route, wrong method, missing API key): its status and reason;
- :class:`NotFound` (unknown corpus, experiment or plot): 404;
- :class:`~sciera.errors.ScieraError` (bad input the library caught): 400 with its message;
- :class:`~sciera.serve.queue.QueueFull`: 503 with ``Retry-After``;
- anything else: 500 "internal error", the traceback only in the server log.

No message names a server path: a served corpus's folder becomes ``<corpus NAME>`` and any
other absolute path its last part (:func:`public`), so a library message such as "no dense
index for /srv/corpora/scifact; run sciera index --corpus /srv/corpora/scifact" tells the
client what is wrong without the server's file layout.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from sciera.errors import ScieraError
from sciera.serve.queue import QueueFull

log = logging.getLogger("sciera.serve")

MAX_CHARS = 300
_LOCATIONS = ("body", "query", "path", "header", "cookie")


class NotFound(LookupError):
    """A named thing the server does not have (corpus, experiment, plot): HTTP 404."""


def one_line(text: object, limit: int = MAX_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# an absolute path of two or more folders (not an API route): /srv/corpora/scifact/store.sqlite
_ABSOLUTE = re.compile(r"(?<![\w:/.~-])/(?!v1/)(?:[^\s/'\"`()<>]+/){2,}([^\s/'\"`()<>]*)")


def public(text: object, corpora: Mapping[str, Path] | None = None) -> str:
    """``text`` on one line without server paths: a corpus folder named ``<corpus NAME>``,
    any other absolute path ``…/last-part``."""
    message = str(text)
    for name, folder in (corpora or {}).items():
        for form in sorted({str(folder), str(Path(folder).resolve())}, key=len, reverse=True):
            message = message.replace(form, f"<corpus {name}>")
    return one_line(_ABSOLUTE.sub(lambda m: f"…/{m.group(1)}", message))


def error_response(
    status: int,
    message: object,
    headers: Mapping[str, str] | None = None,
    request: Request | None = None,
) -> JSONResponse:
    resources = getattr(request.app.state, "resources", None) if request is not None else None
    text = public(message, resources.corpora if resources is not None else None)
    return JSONResponse({"error": text}, status_code=status, headers=headers)


def validation_message(errors: Sequence[Mapping[str, Any]]) -> str:
    """The first validation error as ``field: problem`` (+ how many more there are)."""
    if not errors:
        return "invalid request"
    first = errors[0]
    loc = [str(part) for part in first.get("loc", ())]
    field = ".".join(loc[1:] if len(loc) > 1 and loc[0] in _LOCATIONS else loc) or "request"
    if first.get("type") == "json_invalid":
        problem = f"invalid JSON ({first.get('ctx', {}).get('error', 'cannot parse')})"
        field = "body"
    elif first.get("type") == "missing" and loc == ["body"]:
        problem = "a JSON object is required"
    else:
        problem = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{field}: {problem}{more}"


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, validation_message(exc.errors()), request=request)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, exc.detail, exc.headers, request)


async def _not_found(request: Request, exc: Exception) -> JSONResponse:
    return error_response(404, exc.args[0] if exc.args else "not found", request=request)


async def _sciera(request: Request, exc: Exception) -> JSONResponse:
    return error_response(400, exc, request=request)


async def _queue_full(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, QueueFull)
    return error_response(503, exc, {"Retry-After": str(exc.retry_after)}, request)


async def _internal(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal error; the server log has the details")


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers above on ``app``."""
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(ScieraError, _sciera)
    app.add_exception_handler(QueueFull, _queue_full)
    app.add_exception_handler(Exception, _internal)
