"""The API key: when the server has one, every ``/v1`` request must present it.

The key comes as ``Authorization: Bearer KEY`` or ``X-API-Key: KEY`` and is compared in
constant time (:func:`hmac.compare_digest`); a missing or wrong key gets 401 with a one-line
JSON reason before anything else runs (no validation details, no hint whether a route
exists). ``/healthz``, the web page and ``/docs`` stay open.
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from sciera.serve.errors import error_response

PROTECTED_PREFIX = "/v1"


def presented_key(headers: dict[str, str]) -> str | None:
    """The key a request carries (lower-case header names), or None."""
    auth = headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return headers.get("x-api-key") or None


def key_matches(presented: str | None, expected: str) -> bool:
    """Constant-time comparison of the header's bytes (decoded as Latin-1, as ASGI headers
    are here) with the key's UTF-8 bytes, so a non-ASCII key works too."""
    if presented is None:
        return False
    return hmac.compare_digest(presented.encode("latin-1"), expected.encode("utf-8"))


def route_path(scope: Scope) -> str:
    """The path the router matches: without the ``root_path`` a proxy mounts the app under."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class APIKeyMiddleware:
    """Refuse ``/v1`` requests without the right key (401); pass everything else on."""

    def __init__(self, app: ASGIApp, api_key: str) -> None:
        if not api_key:
            raise ValueError("an empty API key would let everyone in")
        self.app = app
        self.api_key = api_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = route_path(scope)
        protected = path == PROTECTED_PREFIX or path.startswith(PROTECTED_PREFIX + "/")
        if scope["type"] not in ("http", "websocket") or not protected:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        presented = presented_key(headers)
        if key_matches(presented, self.api_key):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # refused before the handshake (HTTP 403)
            await send({"type": "websocket.close", "code": 1008})
            return
        reason = "missing API key" if presented is None else "wrong API key"
        response = error_response(
            401,
            f"{reason}: send Authorization: Bearer KEY or X-API-Key: KEY",
            {"WWW-Authenticate": "Bearer"},
        )
        await response(scope, receive, send)
