"""`tbsim.Server`: the installed binary's `tbsim serve` on a free loopback port."""

from __future__ import annotations

import subprocess
import tempfile
import threading
from pathlib import Path
from types import TracebackType

from ._binary import binary


class Server:
    """Starts `tbsim serve --bind 127.0.0.1:0` and waits until it listens.

    Use it as a context manager (or call `close()`): closing stops the server, which
    ends and writes every open session. Runs go to `out` (default: a temporary
    directory removed on close)."""

    def __init__(
        self,
        *,
        out: str | Path | None = None,
        token: str | None = None,
        max_sessions: int = 64,
        extra_args: list[str] | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        self._tmp = None if out is not None else tempfile.TemporaryDirectory(prefix="tbsim-")
        self.out = Path(out) if out is not None else Path(self._tmp.name if self._tmp else ".")
        self.token = token
        # `--name=value`: a value that starts with `-` (a random token does one
        # time in 64, a relative path may) would otherwise be read as a flag.
        args = [
            binary(),
            "serve",
            "--bind=127.0.0.1:0",
            f"--out={self.out}",
            f"--max-sessions={max_sessions}",
        ]
        if token is not None:
            args.append(f"--token={token}")
        args += extra_args or []
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        line = self._first_line(startup_timeout)
        if "listening on " not in line:
            self.close()
            raise RuntimeError(f"tbsim serve did not start: {line.strip()!r}")
        self.url = line.strip().split("listening on ", 1)[1]

    def _first_line(self, timeout: float) -> str:
        assert self._proc.stdout is not None
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self._proc.stdout.readline()))  # type: ignore[union-attr]
        reader.daemon = True
        reader.start()
        reader.join(timeout)
        return box[0] if box else ""

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def close(self) -> None:
        """Stops the server (open sessions are closed and written); idempotent."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
