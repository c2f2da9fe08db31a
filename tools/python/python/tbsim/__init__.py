"""tbsim: the TraineeBench simulator from Python.

`pip install tbsim` gives the `tbsim` command and this package: `Server` (the
installed binary's session API on a free loopback port), `Client` and `AsyncClient`
(typed clients of that API), `scenarios()` (what can be given by name), the
Gymnasium environment in `tbsim.gym` (ids registered on import), and, with their
extras, `tbsim.verifiers` and `tbsim.openenv` (`python -m tbsim.openenv`).
"""

from ._binary import ScenarioInfo, binary, content_dir, scenarios
from ._http import ServerGone
from .client import ApiError, AsyncClient, Client, Created, Step, render
from .server import Server

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "Created",
    "ScenarioInfo",
    "Server",
    "ServerGone",
    "Step",
    "binary",
    "content_dir",
    "render",
    "scenarios",
]


def _register() -> None:
    try:
        from .gym import register
    except ImportError:  # gymnasium missing: the env is optional
        return
    register()


_register()
