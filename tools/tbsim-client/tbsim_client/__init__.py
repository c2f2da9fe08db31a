"""Client for tbsim's HTTP session API (`tbsim serve`), and a Gymnasium environment.

    from tbsim_client import Client
    c = Client("http://127.0.0.1:8765")
    s = c.create("busy-day")
    out = c.step(s["session"], [{"name": "finish", "arguments": {}}])
    c.delete(s["session"])

`TbsimEnv` (needs `gymnasium`) wraps the same API as a Gymnasium `Env`.
"""

from .client import ApiError, Client, Session, render

__all__ = ["ApiError", "Client", "Session", "render"]

try:  # gymnasium is optional
    from .env import TbsimEnv  # noqa: F401

    __all__.append("TbsimEnv")
except ImportError:  # pragma: no cover
    pass
