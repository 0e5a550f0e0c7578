"""How well-formed the tool calls of a set of episode records were: made, valid JSON, accepted."""

from __future__ import annotations

from collections.abc import Sequence

from workspace_sim.record import EpisodeRecord


def is_valid_json_call(name: str, response: str) -> bool:
    """Whether a recorded call was well-formed JSON: the hf policy names an unparsable block
    `unparsed_tool_call` (or keeps its name and raw text, which the runner answers as invalid JSON)."""
    return name != "unparsed_tool_call" and not (response.startswith("Error (invalid_arguments)")
                                                 and "not valid JSON" in response)


def call_counts(records: Sequence[EpisodeRecord]) -> tuple[int, int, int]:
    """(tool calls made, calls that were valid JSON, calls the workspace accepted) over finished records."""
    calls = valid = accepted = 0
    for r in records:
        if r.final is None:
            continue
        answers = {m.tool_call_id: m.content or "" for m in r.final.messages if m.role == "tool"}
        for m in r.final.messages:
            for c in m.tool_calls or []:
                response = answers.get(c.id, "")
                calls += 1
                valid += is_valid_json_call(c.function.name, response)
                accepted += c.id in answers and not response.startswith("Error (")
    return calls, valid, accepted
