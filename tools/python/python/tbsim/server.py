"""`tbsim.Server`: the installed binary's `tbsim serve` on a free loopback port."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from types import TracebackType

from ._binary import binary

TOKEN_ENV = "TBSIM_SERVE_TOKEN"
"""How the token reaches `tbsim serve`: its environment, never its command line
(which every local user can read in /proc)."""


class Server:
    """Starts `tbsim serve --bind 127.0.0.1:0` and waits until it listens.

    Use it as a context manager (or call `close()`): closing stops the server, which
    ends and writes every open session. Runs go to `out` (default: `runs/` in a
    private temporary folder). The server's messages go to `log` (default:
    `serve.log` in that folder), not to this process's stderr.

    The server holds a pipe to this process and stops when it closes, so it never
    outlives its owner: not after `close()`, nor after a crash, `kill -9` or a
    multiprocessing worker's end. The temporary folder goes with it (the server
    removes it as it exits)."""

    def __init__(
        self,
        *,
        out: str | Path | None = None,
        token: str | None = None,
        max_sessions: int = 64,
        extra_args: list[str] | None = None,
        startup_timeout: float = 60.0,
        log: str | Path | None = None,
    ) -> None:
        self._owner = os.getpid()
        self._tmp: str | None = tempfile.mkdtemp(prefix="tbsim-")
        tmp = Path(self._tmp)
        self.out = Path(out) if out is not None else tmp / "runs"
        self.log = Path(log) if log is not None else tmp / "serve.log"
        self.token = token
        # `--name=value`: a value that starts with `-` (a relative path may) would
        # otherwise be read as a flag.
        args = [
            binary(),
            "serve",
            "--bind=127.0.0.1:0",
            f"--out={self.out}",
            f"--max-sessions={max_sessions}",
            "--exit-with-parent",
            f"--remove-on-exit={tmp}",
            # The console's cache of end worlds is for people's servers; it would
            # land in the caller's ./runs.
            "--no-view-cache",
        ]
        args += extra_args or []
        env = dict(os.environ)
        env.pop(TOKEN_ENV, None)
        env.pop("TBSIM_SERVE_CONSOLE_TOKEN", None)
        if token is not None:
            env[TOKEN_ENV] = token
        self._logfile = open(self.log, "ab")
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._logfile,
            env=env,
            text=True,
        )
        line = self._first_line(startup_timeout)
        if "listening on " not in line:
            self.close()
            raise RuntimeError(
                f"tbsim serve did not start: {line.strip()!r}; its log: {self._log_tail()}"
            )
        self.url = line.strip().split("listening on ", 1)[1]

    def _first_line(self, timeout: float) -> str:
        assert self._proc.stdout is not None
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(self._proc.stdout.readline()))  # type: ignore[union-attr]
        reader.daemon = True
        reader.start()
        reader.join(timeout)
        return box[0] if box else ""

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:].strip() or "(empty)"
        except OSError:
            return "(unreadable)"

    @property
    def running(self) -> bool:
        """Whether the server is up (and was started by this process: a forked
        child does not share its parent's server)."""
        return os.getpid() == self._owner and self._proc.poll() is None

    def why_stopped(self) -> str:
        """What the server's exit status and log say (for errors)."""
        code = self._proc.poll()
        state = "running" if code is None else f"exited with status {code}"
        return f"tbsim serve at {self.url if hasattr(self, 'url') else '?'} {state}; log {self.log}"

    def close(self) -> None:
        """Stops the server (open sessions are closed and written); idempotent."""
        if os.getpid() != self._owner:
            return  # a forked child: the parent's server is the parent's
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            try:
                self._proc.stdin.close()  # the server stops on end of input
            except OSError:
                pass
        if self._proc.poll() is None:
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._logfile.close()
        if self._tmp is not None:
            # The server removed it as it exited; this covers one that never started.
            shutil.rmtree(self._tmp, ignore_errors=True)
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
