"""Server-Sent Events on Starlette's ``StreamingResponse`` (no extra dependency).

    async def produce(emit):
        await emit("retrieved", {...})
        await emit("answer", {...})

    return EventStream(produce)

Each event is ``event: NAME`` and one ``data:`` line of JSON, then a blank line. The
producer runs while the response streams; when the client disconnects, Starlette cancels
it (and with it any work it awaits, see :mod:`sciera.serve.queue`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Send

Emit = Callable[[str, Any], Awaitable[None]]


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode_event(name: str, data: Any) -> bytes:
    """One SSE frame; the JSON is a single line (``json.dumps`` escapes newlines)."""
    if not name or any(c in name for c in "\r\n:"):
        raise ValueError(f"bad event name {name!r}")
    payload = json.dumps(data, ensure_ascii=False, default=_json_default)
    return f"event: {name}\ndata: {payload}\n\n".encode()


async def _no_body() -> AsyncIterator[bytes]:
    return
    yield  # an async generator that yields nothing: the producer writes the body


class EventStream(StreamingResponse):
    """A ``text/event-stream`` response whose events come from ``producer(emit)``."""

    def __init__(self, producer: Callable[[Emit], Awaitable[None]]) -> None:
        super().__init__(
            _no_body(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._producer = producer

    async def stream_response(self, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )

        async def emit(name: str, data: Any) -> None:
            body = encode_event(name, data)
            await send({"type": "http.response.body", "body": body, "more_body": True})

        await self._producer(emit)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
