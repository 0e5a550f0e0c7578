"""Episodes the trainer, MCP and adapter tests share: a multi-turn files environment (the user's answer, a
follow-up, two world events), a few generated specs, a scripted policy, and records compared without timings."""

from __future__ import annotations

import json
from typing import Any

from synth import parse_spec
from synth.procedural import generate
from trainers.episodes.turns import AgentTurn, EpisodeContext, PolicyCall
from workspace_sim.record import EpisodeRecord


def multi_turn_doc(**overrides: Any) -> dict[str, Any]:
    """A files environment that needs the user's answer, has a follow-up and two world events."""
    doc: dict[str, Any] = {
        "id": "clarify-rename",
        "title": "Publish the draft report under the name the user gives",
        "capabilities": ["clarification", "dynamic_world"],
        "difficulty": "medium",
        "expected_horizon": 3,
        "world": {"organisation": {"name": "Northwind", "domain": "northwind.example"},
                  "people": [{"name": "Ada Byrne", "email": "ada@northwind.example", "role": "user"}]},
        "services": ["files"],
        "initial": {"files": {"files": [
            {"path": "/drafts/report.md", "content": "# Q3 report\nRevenue up.\n"},
            {"path": "/drafts/keep.md", "content": "keep me\n"}],
            "folders": [{"path": "/reports"}, {"path": "/shared"}]}},
        "now": "2026-02-02T09:00:00+00:00",
        "user": "ada@northwind.example",
        "request": "Please move my draft report (/drafts/report.md) into /reports under its final name.",
        "user_simulator": {
            "persona": "Ada, finance lead; terse",
            "facts": [{"name": "final_name", "value": "q3-final.md", "reveal_keywords": ["name", "called"],
                       "answer": "Call it q3-final.md.", "decoy": "report.md"}],
            "followups": [{"turn": 2, "text": "Thanks! Please also copy it to /shared.",
                           "advance_to": "2026-02-02T10:00:00+00:00"}],
        },
        "events": [
            {"id": "notes-arrive", "at_turn": 1, "announce": "FYI: I just put notes.md into /drafts.",
             "changes": [{"op": "put", "table": "files.files",
                          "record": {"path": "/drafts/notes.md", "content": "notes\n"}}]},
            {"id": "late-memo", "at_time": "2026-02-02T09:30:00+00:00", "distractor": True,
             "changes": [{"op": "put", "table": "files.files",
                          "record": {"path": "/drafts/memo.md", "content": "memo\n"}}]},
        ],
        "predicates": [
            {"kind": "file", "path": "/reports/q3-final.md", "content": {"contains": "Revenue up."}},
            {"kind": "file", "path": "/drafts/report.md", "exists": False},
            {"kind": "file", "path": "/shared/q3-final.md", "content": {"contains": "Revenue up."}},
            {"kind": "unchanged", "scope": "files:/drafts/keep.md"},
        ],
        "reference": {"steps": [
            {"kind": "ask", "text": "What should the final file be called?", "facts": ["final_name"]},
            {"kind": "call", "tool": "move_file",
             "args": {"source": "/drafts/report.md", "destination": "/reports/{{fact:final_name}}"}},
            {"kind": "say", "text": "Moved it to /reports/{{fact:final_name}}."},
            {"kind": "call", "tool": "write_file",
             "args": {"path": "/shared/{{fact:final_name}}", "content": "# Q3 report\nRevenue up.\n"}},
        ], "final_answer": "Done: /reports/{{fact:final_name}} and a copy in /shared."},
    }
    doc.update(overrides)
    return doc


def multi_turn_spec(**overrides: Any) -> Any:
    return parse_spec(multi_turn_doc(**overrides))


def comparable(rec: EpisodeRecord) -> dict[str, Any]:
    """A record without its wall-clock timings (the only part that may differ between equal runs)."""
    doc = json.loads("[" + ",".join(rec.to_jsonl().splitlines()) + "]")
    for line in doc:
        if line["type"] == "final":
            line.pop("timings")
    return doc


def generated_specs() -> list[Any]:
    return [generate(cap, seed) for cap in ("file_management", "document_from_data") for seed in range(3)]


class Scripted:
    """A policy that plays a fixed list of turns, then repeats the last."""

    def __init__(self, turns: list[AgentTurn]) -> None:
        self.turns = turns
        self.seen: list[list[dict[str, Any]]] = []

    def info(self) -> Any:
        from workspace_sim.record import PolicyInfo

        return PolicyInfo(name="scripted-test")

    def start(self, context: EpisodeContext) -> None:
        self.i = 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        self.seen.append(messages)
        turn = self.turns[min(self.i, len(self.turns) - 1)]
        self.i += 1
        return turn


LIST = PolicyCall("list_directory", {"path": "/drafts"})  # a call every files episode can make


def without_remote(rec: EpisodeRecord) -> list[dict[str, Any]]:
    """`comparable(rec)` without the one setting a remote run adds (where the server-side episode lives)."""
    doc = comparable(rec)
    doc[0]["policy"]["settings"].pop("remote", None)
    return doc
