"""The conversation tbsim's own model agent holds, for harnesses that drive the model
themselves (`tbsim.verifiers`): the system prompt from the briefing, a status line
opening every user message (`[System time] <time> · step <n>`), one tool message per
call in call order, and the nudge when a turn made no call. Templates come from the
bundled `prompts/`, so an edited prompt changes both agents alike."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._binary import content_dir

JSON = Any


def _template(name: str) -> str:
    return (content_dir() / "prompts" / f"{name}.md").read_text(encoding="utf-8").strip()


def _fill(template: str, values: Mapping[str, str]) -> str:
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", value)
    return out


def status_line(obs: Mapping[str, JSON]) -> str:
    return f"[System time] {obs.get('time')} · step {obs.get('step')}"


def notifications(obs: Mapping[str, JSON]) -> list[JSON]:
    notes: list[JSON] = []
    for r in obs.get("results") or []:
        notes.extend(r.get("notifications") or [])
    notes.extend(obs.get("notifications") or [])
    return notes


def render_notifications(obs: Mapping[str, JSON]) -> str:
    notes = notifications(obs)
    if not notes:
        return "(nothing new)"
    return "\n".join("- " + json.dumps(n, ensure_ascii=False, sort_keys=True) for n in notes)


def system_prompt(briefing: Mapping[str, JSON]) -> str:
    values = {
        "name": str(briefing.get("you", "")),
        "department": str(briefing.get("department", "")),
        "company": str(briefing.get("company", "")),
        "manager": str(briefing.get("manager", "")),
        "day_starts": str(briefing.get("day_starts", "")),
        "day_ends": str(briefing.get("day_ends", "")),
    }
    return _fill(_template("system"), values)


def opening(obs: Mapping[str, JSON]) -> str:
    """The first user message: the status line and the morning's notifications."""
    b = obs.get("briefing") or {}
    task = _fill(
        _template("task"),
        {
            "name": str(b.get("you", "")),
            "company": str(b.get("company", "")),
            "notifications": render_notifications(obs),
            "notes": "",
        },
    )
    return f"{status_line(obs)}\n\n{task}"


def tool_content(result: Mapping[str, JSON]) -> str:
    """A call's result as the model reads it: the result (or tbsim's refusal) as JSON."""
    if result.get("ok"):
        body: JSON = {"ok": True, "result": result.get("result")}
    else:
        body = {"ok": False, "error": result.get("error")}
    return json.dumps(body, ensure_ascii=False, sort_keys=True)


def after_turn(obs: Mapping[str, JSON], call_ids: Sequence[str]) -> list[dict[str, JSON]]:
    """The messages that follow a turn: each call's result in call order, then the
    status line with what came in (and the nudge when the turn made no call)."""
    by_id = {r.get("call_id"): r for r in obs.get("results") or []}
    messages: list[dict[str, JSON]] = []
    for cid in call_ids:
        r = by_id.get(cid)
        content = (
            tool_content(r)
            if r is not None
            else json.dumps({"ok": False, "error": "not executed"}, sort_keys=True)
        )
        messages.append({"role": "tool", "tool_call_id": cid, "content": content})
    text = f"{status_line(obs)}\n\n{render_notifications(obs)}"
    if not call_ids:
        text += "\n\n" + _template("nudge")
    if obs.get("over"):
        text += "\n\nThe run is over."
    messages.append({"role": "user", "content": text})
    return messages


def openai_tools(catalogue: Sequence[Mapping[str, JSON]]) -> list[dict[str, JSON]]:
    """The catalogue (`GET /v1/tools`) as OpenAI function tools; each description
    states the call's time cost, as the MCP server's do."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": tool_description(t),
                "parameters": tool_parameters(t),
            },
        }
        for t in catalogue
    ]


def tool_description(tool: Mapping[str, JSON]) -> str:
    """A catalogue entry's description with its time cost, as the MCP server words it."""
    cost = int(tool.get("cost_minutes", 0))
    unit = "minute" if cost == 1 else "minutes"
    return (
        f"{str(tool.get('description', '')).rstrip()} Time cost: {cost} simulated {unit} per call."
    )


def tool_parameters(tool: Mapping[str, JSON]) -> dict[str, JSON]:
    params: dict[str, JSON] = tool.get("parameters") or {"type": "object", "properties": {}}
    return params
