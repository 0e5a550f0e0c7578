"""Building record lines as the dicts they are written as, in the line types' field order.

Writers on a hot path (the MCP server) build lines without validating a model for each; every
builder here gives exactly `Model.model_validate(line).model_dump(mode="json")` of its line type
(the tests check it), so a record reads back the same through either path. `violations_and_faults`
is the one rule for the `final` line's two lists, from events of any form.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

from workspace_sim.core.events import Event, render_default
from workspace_sim.services import all_tools

from .lines import RECORD_VERSION, EventLine, FaultInfo, RecordError, ViolationInfo


def header_line(episode_id: str, env_id: str, *, policy: str, settings: Mapping[str, Any], tools: list[Any],
                env_hash: str = "", initial_state_hash: str = "", initial_predicates: list[bool] | None = None,
                initial_score: float = 0.0, capabilities: Iterable[str] = (), seed: int = 0,
                group: str | None = None) -> dict[str, Any]:
    """A `header` line (see `HeaderLine` for the fields)."""
    return {"type": "header", "record_version": RECORD_VERSION, "episode_id": episode_id, "env_id": env_id,
            "env_hash": env_hash, "initial_state_hash": initial_state_hash,
            "initial_predicates": list(initial_predicates or []), "initial_score": initial_score,
            "capabilities": list(capabilities), "policy": {"name": policy, "settings": dict(settings)}, "seed": seed,
            "group": group, "tools": tools}


def event_line(event: Event, episode_id: str, turn: int) -> dict[str, Any]:
    """The `event` line of a workspace event: its `to_json()` with type, episode and turn, every field present."""
    j = event.to_json()
    return {"type": "event", "episode_id": episode_id, "index": j["index"], "turn": turn, "kind": j["kind"],
            "sim_time": j["sim_time"], "tool": j.get("tool"), "args": j.get("args"), "ok": j.get("ok", True),
            "result": j.get("result"), "error": j.get("error"), "policy": j.get("policy"), "read": j.get("read"),
            "via": j.get("via"), "diff": j.get("diff", []), "role": j.get("role"), "content": j.get("content")}


def chat_message(role: str, content: str | None = None, tool_calls: list[dict[str, Any]] | None = None,
                 tool_call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    """One transcript message as a `final` line holds it (see `ChatMessage`)."""
    return {"role": role, "content": content, "tool_calls": tool_calls, "tool_call_id": tool_call_id, "name": name}


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """One tool call of an assistant message (see `ToolCall`)."""
    return {"type": "function", "function": {"name": name, "arguments": arguments}, "id": call_id}


def transcript(task: str, events: Iterable[Mapping[str, Any]], renders: Mapping[str, Any],
               final_answer: str | None) -> list[dict[str, Any]]:
    """The episode as a Hugging Face chat transcript, from its event lines: the task, each call and its result
    text (`renders`: tool name -> renderer), messages, the answer."""
    messages: list[dict[str, Any]] = [chat_message("user", task)]
    for ev in events:
        if ev.get("kind") == "message":
            if len(messages) == 1 and ev.get("role") == "user" and ev.get("content") == task:
                continue  # the request, logged as turn 0 by an MCP-only episode: already the first message
            if ev.get("role") in ("user", "assistant") and ev.get("content") is not None:
                messages.append(chat_message(ev["role"], ev["content"]))
            continue
        if ev.get("kind") != "call":
            continue
        call_id = f"call_{ev['index']}"
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        messages.append(chat_message("assistant", None, [tool_call(ev["tool"], args, call_id)]))
        if ev.get("ok"):
            render = renders.get(ev["tool"]) or render_default
            try:
                text = render(ev.get("result"))
            except Exception:
                text = render_default(ev.get("result"))
        else:
            err = ev.get("error") or {}
            text = f"Error ({err.get('code')}): {err.get('message')}"
        messages.append(chat_message("tool", text, tool_call_id=call_id, name=ev["tool"]))
    last = messages[-1]
    if final_answer is not None and not (last["role"] == "assistant" and last.get("content") == final_answer
                                         and not last.get("tool_calls")):
        messages.append(chat_message("assistant", final_answer))  # unless already logged as the last message
    return messages


def final_line(episode_id: str, messages: list[dict[str, Any]], evaluation: dict[str, Any], reward: float,
               stop_reason: str, final_answer: str | None, timings: Mapping[str, float],
               events: Iterable[Any] = (), stop_detail: str | None = None,
               tokens: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A `final` line (see `FinalLine`); its violations and faults are derived from `events`."""
    violations, faults = violations_and_faults(events)
    return {"type": "final", "episode_id": episode_id, "messages": messages, "evaluation": evaluation,
            "reward": float(reward), "stop_reason": stop_reason, "stop_detail": stop_detail,
            "final_answer": final_answer, "timings": {k: round(v, 6) for k, v in timings.items()},
            "tokens": list(tokens or []), "policy_violations": [v.model_dump() for v in violations],
            "fault_errors": [f.model_dump() for f in faults]}


def violations_and_faults(events: Iterable[Any]) -> tuple[list[ViolationInfo], list[FaultInfo]]:
    """Policy violations and injected faults among an episode's events (event lines as dicts or EventLines, or
    workspace Events).

    A violation is a failed call whose error code is `policy_violation`; a fault one whose code is
    `fault`, handled when a later call of the same tool succeeded (the agent retried); otherwise it
    is unhandled, which rewards penalise.
    """
    calls = [c for c in map(_call_view, events) if c is not None]
    violations: list[ViolationInfo] = []
    faults: list[FaultInfo] = []
    for i, (index, tool, ok, code, message, policy) in enumerate(calls):
        if ok:
            continue
        if code == "policy_violation":
            violations.append(ViolationInfo(event_index=index, tool=tool, policy=policy, message=message))
        elif code == "fault":
            handled = any(later[1] == tool and later[2] for later in calls[i + 1:])
            faults.append(FaultInfo(event_index=index, tool=tool, message=message, handled=handled))
    return violations, faults


def _call_view(e: Any) -> tuple[int, str, bool, str | None, str, str] | None:
    """(index, tool, ok, error code, error message, policy) of a call event, or None for other events."""
    if isinstance(e, Event):
        if e.kind != "call":
            return None
        err = e.error
        return e.index, e.tool or "", e.ok, err.code if err else None, err.message if err else "", e.policy or ""
    if isinstance(e, EventLine):
        if e.kind != "call":
            return None
        err = e.error
        return e.index, e.tool or "", e.ok, err.code if err else None, err.message if err else "", e.policy or ""
    if e.get("kind") != "call":
        return None
    err = e.get("error") or {}
    return (e["index"], e.get("tool") or "", bool(e.get("ok", True)), err.get("code"), err.get("message", ""),
            e.get("policy") or "")


def tool_schemas(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI-format schemas from the one tool registry, for all tools or the named ones (in order)."""
    tools = all_tools()
    if names is None:
        return [tools[n].openai_schema() for n in sorted(tools)]
    names = list(names)
    missing = [n for n in names if n not in tools]
    if missing:
        raise RecordError(f"unknown tool(s) {missing}; the registry has {', '.join(sorted(tools))}")
    return [tools[n].openai_schema() for n in names]


def now_iso() -> str:
    """The wall-clock time, for record settings (not part of any workspace state)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
