"""A Gymnasium environment over the session API.

Observation: a dict with `text` (the observation rendered for a model, see
`render`) and `observation` (the engine's JSON, as a string). Action: a list of
tool calls, each `{"name", "arguments", "id"?}` (arguments a dict or JSON text),
or a JSON string of that list. Reward: the change in the run's checkpoint score.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple

import gymnasium as gym
from gymnasium import spaces

from .client import Client, render


class ToolCalls(gym.Space):
    """The action space: a list of tool calls (or its JSON text)."""

    def __init__(self) -> None:
        super().__init__(shape=None, dtype=None)

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            try:
                x = json.loads(x)
            except ValueError:
                return False
        return isinstance(x, list) and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in x)

    def sample(self, mask: Any = None, probability: Any = None) -> list:
        return [{"name": "wait", "arguments": {"minutes": 30}}]

    @property
    def is_np_flattenable(self) -> bool:
        return False


class TbsimEnv(gym.Env):
    """One tbsim session per episode. `reset(seed=..., options={"scenario": ..., "hints": ..., ...})`."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, base_url: str = "http://127.0.0.1:8765", scenario: Optional[str] = None,
                 token: Optional[str] = None, agent: str = "gym", render_mode: Optional[str] = None,
                 **create_options: Any):
        self.client = Client(base_url, token)
        self.scenario = scenario
        self.agent = agent
        self.create_options = create_options
        self.render_mode = render_mode
        self.session: Optional[str] = None
        self._last: Optional[Dict[str, Any]] = None
        self.observation_space = spaces.Dict({"text": spaces.Text(1 << 24), "observation": spaces.Text(1 << 26)})
        self.action_space = ToolCalls()

    def _obs(self, observation: Dict[str, Any]) -> Dict[str, str]:
        self._last = observation
        return {"text": render(observation), "observation": json.dumps(observation)}

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, str], Dict[str, Any]]:
        super().reset(seed=seed)
        self.close()
        opts = dict(self.create_options)
        opts.update(options or {})
        scenario = opts.pop("scenario", self.scenario)
        if scenario is None:
            raise ValueError("no scenario: pass scenario= to the env or options={'scenario': ...} to reset")
        opts.setdefault("agent", self.agent)
        created = self.client.create(scenario, seed=seed, **opts)
        self.session = created["session"]
        info = dict(created["info"], session=self.session)
        return self._obs(created["observation"]), info

    def step(self, action: Any) -> Tuple[Dict[str, str], float, bool, bool, Dict[str, Any]]:
        if self.session is None:
            raise RuntimeError("call reset() first")
        calls = json.loads(action) if isinstance(action, str) else list(action)
        out = self.client.step(self.session, calls)
        return (self._obs(out["observation"]), float(out["reward"]), bool(out["terminated"]),
                bool(out["truncated"]), dict(out["info"], session=self.session))

    def render(self) -> Optional[str]:
        return render(self._last) if self._last is not None else None

    def close(self) -> None:
        if self.session is not None:
            try:
                self.client.delete(self.session)
            except Exception:  # the server may have expired it already
                pass
            self.session = None
