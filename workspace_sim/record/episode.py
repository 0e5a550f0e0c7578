"""One episode in memory: its header, events, steps and (once finished) its final line.

`EpisodeRecord.lines()` gives the lines in writing order and `to_jsonl()` their text; reading
groups lines back into records (`workspace_sim.record.jsonl`). `stage_verdicts` and
`stage_summary` read the per-day verdicts of a multi-day evaluation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Mapping

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.blobs import BlobStore

from .encoding import line_texts
from .lines import ERROR_STOPS, EventLine, FinalLine, HeaderLine, StepLine



class EpisodeRecord(BaseModel):
    """One episode in memory: header, events, steps and (once finished) the final line."""

    model_config = ConfigDict(extra="forbid")
    header: HeaderLine
    events: list[EventLine] = Field(default_factory=list)
    steps: list[StepLine] = Field(default_factory=list)
    final: FinalLine | None = None

    @property
    def episode_id(self) -> str:
        """The episode's id."""
        return self.header.episode_id

    @property
    def env_id(self) -> str:
        """The environment the episode ran in."""
        return self.header.env_id

    @property
    def group(self) -> str:
        """The rollout group (explicit group or the environment id)."""
        return self.header.group or self.header.env_id

    @property
    def complete(self) -> bool:
        """Whether the final line was written."""
        return self.final is not None

    @property
    def passed(self) -> bool:
        """Whether every predicate passed (False for an unfinished episode)."""
        return self.final is not None and bool(self.final.evaluation.get("passed"))

    @property
    def errored(self) -> bool:
        """Whether the episode stopped on an error (of the environment, the user simulator or the policy)
        rather than by answering or reaching a limit; such episodes are not evidence about the policy."""
        return self.final is not None and self.final.stop_reason in ERROR_STOPS

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The transcript as plain Hugging Face chat dicts (empty before the final line)."""
        return [m.to_hf() for m in self.final.messages] if self.final else []

    def lines(self) -> Iterator[BaseModel]:
        """The lines in writing order: header, then each turn's events and step, then final."""
        yield self.header
        steps = sorted(self.steps, key=lambda s: s.turn)
        events = sorted(self.events, key=lambda e: e.index)
        ei = 0
        for step in steps:
            while ei < len(events) and events[ei].turn <= step.turn:
                yield events[ei]
                ei += 1
            yield step
        yield from events[ei:]
        if self.final is not None:
            yield self.final

    def to_jsonl(self, blobs: BlobStore | None = None) -> str:
        """The episode as JSONL text (one JSON object per line, trailing newline).

        Strings of 4,096 characters or more are written once, as `blob` lines, and referred to by
        hash (see workspace_sim.core.blobs); pass one `BlobStore` for every episode of a file to share
        blobs across them.
        """
        store = blobs if blobs is not None else BlobStore()
        return "".join(text for line in self.lines() for text in line_texts(line.model_dump(mode="json"), store))

    def write(self, path: str | Path, append: bool = True) -> Path:
        """Write (by default append) the episode to a JSONL file, creating folders as needed."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("a" if append else "w", encoding="utf-8") as f:
            f.write(self.to_jsonl())
        return p


def stage_verdicts(evaluation: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The per-stage verdicts of an evaluation (`[{id, passed, score, reached, ...}]`); empty for a single day."""
    stages = (evaluation or {}).get("stages")
    return [s for s in stages if isinstance(s, dict)] if isinstance(stages, list) else []


def stage_summary(evaluation: Mapping[str, Any] | None) -> str:
    """Each working day's verdict in one short text, e.g. 'mon ✓1.00  tue ✗0.40  wed -' (a day never reached is
    '-'); '' for a single-day evaluation. What `episodes`, `run`, `eval` and the report show per day."""
    parts = []
    for s in stage_verdicts(evaluation):
        mark = "-" if not s.get("reached", True) else ("✓" if s.get("passed") else "✗") + f"{float(s.get('score', 0)):.2f}"
        parts.append(f"{s.get('id', '?')} {mark}")
    return "  ".join(parts)
