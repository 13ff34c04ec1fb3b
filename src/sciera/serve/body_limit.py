"""A cap on request bodies: the largest valid request is a few KB (a 2000-character query),
so anything over ``max_bytes`` is refused with 413 while it is read, declared or chunked,
instead of being held in memory before validation."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 64 * 1024


class BodyLimitMiddleware:
    """Count the body bytes an app reads; past ``max_bytes`` reading raises HTTP 413."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:  # FastAPI passes an HTTPException from here on
                    raise HTTPException(413, f"the request body is over {self.max_bytes} bytes")
            return message

        await self.app(scope, limited, send)
