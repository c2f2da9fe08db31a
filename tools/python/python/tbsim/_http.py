"""A lean HTTP/1.1 keep-alive connection for the session API's loopback calls.

`Client` sends one request per step; httpx spends most of a step's time building
the request, cookies and headers. This writes each request (head and body) in
one `sendall` on a socket with Nagle off, and reads the answer with a buffered
reader: the head line by line, then `Content-Length` bytes (or chunks)."""

from __future__ import annotations

import socket
import time
from typing import BinaryIO, cast
from urllib.parse import urlsplit

_IDLE_REUSE = 5.0
"""Seconds a kept-alive connection is reused after its last answer: `tbsim serve`
closes idle ones after 10 s (`--header-timeout`), so older ones are replaced
before a request could meet a closing socket."""

_MAX_HEAD = 64 * 1024


class ServerGone(ConnectionError):
    """The server does not answer: it stopped or died (its log may say why)."""


class Connection:
    """One keep-alive connection to `base_url` (http only)."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http":
            raise ValueError(f"{base_url!r}: the lean client speaks plain http:// only")
        self.base_url = base_url
        self._addr = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._prefix = parts.path.rstrip("/")
        netloc = parts.netloc.rsplit("@", 1)[-1]
        fixed = {"Host": netloc, "Accept": "application/json", **headers}
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._timeout = timeout
        self._sock: socket.socket | None = None
        self._reader: BinaryIO | None = None
        self._last = 0.0

    def _connect(self) -> None:
        self.close()
        try:
            sock = socket.create_connection(self._addr, timeout=self._timeout)
        except OSError as e:
            raise ServerGone(f"cannot reach {self.base_url}: {e}") from e
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._reader = cast(BinaryIO, sock.makefile("rb", buffering=65536))

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        """Sends one request; returns the status and the body. A connection that
        the server closed between requests (nothing of the answer read) is
        replaced once."""
        head = f"{method} {self._prefix}{path} HTTP/1.1\r\n{self._fixed}"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        data = (head + "\r\n").encode() + (body or b"")
        fresh = self._sock is None or time.monotonic() - self._last > _IDLE_REUSE
        for attempt in (0, 1):
            if fresh or attempt:
                self._connect()
            try:
                assert self._sock is not None
                self._sock.sendall(data)
                answer = self._read()
            except _Closed as e:
                self.close()
                if attempt or fresh:
                    raise ServerGone(f"{self.base_url} closed the connection: {e}") from None
                continue
            except OSError as e:
                self.close()
                if attempt or fresh or not isinstance(e, (BrokenPipeError, ConnectionResetError)):
                    raise ServerGone(f"{self.base_url} stopped answering: {e}") from e
                continue
            self._last = time.monotonic()
            return answer
        raise AssertionError("unreachable")

    def _read(self) -> tuple[int, bytes]:
        r = self._reader
        assert r is not None
        line = r.readline(_MAX_HEAD)
        if not line:
            raise _Closed("no answer")
        try:
            status = int(line.split(b" ", 2)[1])
        except (IndexError, ValueError):
            raise ServerGone(f"{self.base_url} sent a malformed status line {line!r}") from None
        length: int | None = None
        chunked = close = False
        while True:
            h = r.readline(_MAX_HEAD)
            if h in (b"\r\n", b"\n"):
                break
            if not h:
                raise ServerGone(f"{self.base_url} closed the connection mid-answer")
            name, _, value = h.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                close = b"close" in value.lower()
        if chunked:
            parts = []
            while True:
                size = int(r.readline(_MAX_HEAD).split(b";", 1)[0], 16)
                if size == 0:
                    while r.readline(_MAX_HEAD) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(r.read(size))
                r.readline(_MAX_HEAD)
            body = b"".join(parts)
        elif length is not None:
            body = r.read(length)
            if len(body) != length:
                raise ServerGone(f"{self.base_url} closed the connection mid-answer")
        else:
            body = r.read()
            close = True
        if close:
            self.close()
        return status, body

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class _Closed(Exception):
    pass
