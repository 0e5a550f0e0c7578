"""The lines an MCP server writes into an episode's record, in the one record format (`workspace_sim.record`).

The server writes no `step` lines (it never sees assistant turns): a segment is a `header`, an
`event` per tool call, message, world change or day's close, and a `final` line built from the
events (the transcript, the evaluation, the score as reward). `header.policy.settings` says where
the environment came from (`source`), so `coworkenv eval` can rebuild and judge an unfinished record.
"""

from __future__ import annotations

from typing import Any, Mapping

from workspace_sim import Workspace
from workspace_sim.record import RecordedSegment, final_line, header_line, transcript

POLICY_NAME = "mcp-client"


def served_header(segment_id: str, env: Any, env_hash: str, workspace: Workspace,
                  settings: dict[str, Any]) -> dict[str, Any]:
    """The `header` line of a segment: environment, start-state hash, offered tools, where it came from."""
    return header_line(segment_id, str(env.id), policy=POLICY_NAME, settings=settings,
                       tools=[t.openai_schema() for t in workspace.tools.values()], env_hash=env_hash,
                       initial_state_hash=workspace.initial.content_hash,
                       capabilities=list(getattr(env, "capabilities", []) or []), seed=workspace.config.seed)


def served_final(segment_id: str, task: str, events: list[dict[str, Any]], renders: Mapping[str, Any],
                 evaluation: dict[str, Any], stop_reason: str, final_answer: str | None,
                 timings: Mapping[str, float]) -> dict[str, Any]:
    """The `final` line of a segment: transcript from its events, evaluation, reward (the score), why it stopped,
    timings, violations and faults."""
    return final_line(segment_id, transcript(task, events, renders, final_answer), evaluation,
                      float(evaluation.get("score", 0.0)), stop_reason, final_answer, timings, events=events)


def served_segment(segment: RecordedSegment) -> bool:
    """Whether a segment was recorded by an MCP server (`mcp_server.Episode`), whose final line this package
    writes, rather than by an episode runner (whose final line holds its policy's messages and reward)."""
    settings = segment.settings
    return "transport" in settings and "started_at" in settings and "segment" in settings
