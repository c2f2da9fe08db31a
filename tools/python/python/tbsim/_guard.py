"""The line `tbsim serve` holds, for the Python servers (`python -m tbsim.openenv`):
an ASGI wrapper that keeps browsers' pages of other origins and strangers out of
every HTTP and WebSocket route.

* The `Host` must be one the server is reached under: `localhost`, a loopback
  address, the very address the client connected to (an address literal names no
  DNS record an attacker could rebind) or a name given with `allow_hosts`. A DNS
  rebinding page names its own host.
* A request carrying an `Origin` must come from the server's own origin (a page of
  another site or port carries its own; programs send none), and one whose
  `Sec-Fetch-Site` names another origin is refused.
* With a token, every request must carry `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def host_name(authority: str) -> str:
    """The name of a `Host` header's `name[:port]` (IPv6 literals in brackets)."""
    if authority.startswith("["):
        return authority[1:].split("]", 1)[0]
    return authority.rsplit(":", 1)[0] if ":" in authority else authority


def _is_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Guard:
    """Wraps `app` (see the module docs)."""

    def __init__(
        self, app: App, *, token: str | None = None, allow_hosts: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.token = token
        self.allow_hosts = {h.lower() for h in allow_hosts}

    def refusal(self, scope: Scope) -> tuple[str, str] | None:
        """Why the request is refused (code, message), or None."""
        headers: dict[bytes, bytes] = {}
        for k, v in scope.get("headers") or []:
            headers.setdefault(bytes(k).lower(), bytes(v))
        authority = headers.get(b"host", b"").decode("latin-1")
        name = host_name(authority).lower()
        local = (scope.get("server") or ("",))[0] or ""
        if not (
            name == "localhost"
            or name in self.allow_hosts
            or _is_loopback(name)
            or (name and name == str(local).lower())
        ):
            return (
                "bad_host",
                "this server answers only under localhost, a loopback address, the address "
                f"it was reached at, or a name given with --allow-host; not {name!r}",
            )
        origin = headers.get(b"origin")
        if origin is not None:
            o = origin.decode("latin-1")
            own = o.lower() in (f"http://{authority}".lower(), f"https://{authority}".lower())
            if not own:
                return (
                    "cross_origin",
                    "this server takes requests only from programs (which send no Origin) "
                    "or its own origin",
                )
        site = headers.get(b"sec-fetch-site")
        if site is not None and site not in (b"same-origin", b"none"):
            return ("cross_origin", "this request came from another site's page")
        if self.token is not None:
            given = headers.get(b"authorization", b"")
            want = b"Bearer " + self.token.encode()
            if not hmac.compare_digest(given, want):
                return ("unauthorized", "this server wants `Authorization: Bearer <token>`")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        why = self.refusal(scope)
        if why is None:
            await self.app(scope, receive, send)
            return
        code, message = why
        status = 401 if code == "unauthorized" else 403
        if kind == "websocket":
            # Closing before accepting answers the handshake with 403.
            await send({"type": "websocket.close", "code": 1008, "reason": code})
            return
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
