"""SFT data from episode records: only clean passing episodes, deduplicated, split by environment.

Two output formats, one JSON object per line, each `{"messages": [...], "tools": [...]}`:

- `hf`: the Hugging Face chat format; tool call arguments are JSON objects (dicts), as chat
  templates (`tokenizer.apply_chat_template(messages, tools=tools)`) and TRL expect. A multi-day
  episode is one conversation across its days; `days` lists the index of the message that opens
  each day (the later ones start with a day header such as "[Day 2 of 3, Tuesday 3 March]"). A tool result that
  showed the agent an image (`read_media_file`, a scanned PDF page) has its placeholder replaced by an image part:
  the message's content becomes `[{"type": "text", ...}, {"type": "image"}, ...]` and the example gains `images`,
  the images in order as `data:` URLs, as a Qwen2-VL-style processor and TRL's vision SFT expect. An audio clip
  (a voicemail) becomes a `{"type": "audio", "text": <placeholder>}` part and the example gains `audios` (the
  Qwen2-Audio layout); a template that knows no audio writes the part's text, the placeholder.
- `openai`: the OpenAI fine-tuning format; tool call arguments are JSON *strings*, every tool call
  has an `id` and every tool message the `tool_call_id` of the call it answers. The tools are in
  their strict form (`strict: true`, see `workspace_sim.core.registry.strict_schema`) and each call's
  arguments as a strict caller sends them (an optional argument left out is there as `null`), so
  the data matches what a model decoding strictly produces.

Tool schemas always come from the registry the runtime uses (`workspace_sim.all_tools()`).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from mcp_server.results import PAGER, PAGER_TOOL
from workspace_sim.media import MediaPart
from synth.spec import DAY_HEADER
from workspace_sim.core.registry import Tool, strict_arguments
from workspace_sim.record import EpisodeRecord, RecordError, read_records

from ..media_parts import call_media, with_media_parts


Format = Literal["hf", "openai"]


class ExportError(ValueError):
    """An episode that cannot be exported; the message names the episode and what is wrong."""


def _skip_reason(rec: EpisodeRecord) -> str | None:
    if rec.final is None:
        return "unfinished"
    if not rec.passed:
        return "failed predicates"
    if rec.final.policy_violations or any(e.policy for e in rec.events):
        return "policy violation"
    if not any(m.role == "assistant" for m in rec.final.messages):
        return "no assistant turn"
    return None


def _dedupe_key(rec: EpisodeRecord) -> str:
    # Call ids differ between otherwise identical runs, so they do not count.
    msgs = []
    for m in rec.messages:
        m = {k: v for k, v in m.items() if k != "tool_call_id"}
        if "tool_calls" in m:
            m["tool_calls"] = [{k: v for k, v in c.items() if k != "id"} for c in m["tool_calls"]]
        msgs.append(m)
    tools = sorted(t["function"]["name"] for t in rec.header.tools)
    doc = json.dumps({"messages": msgs, "tools": tools}, sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(doc.encode(), digest_size=16).hexdigest()


def select_sft_episodes(records: Iterable[EpisodeRecord]) -> tuple[list[EpisodeRecord], Counter[str]]:
    """The episodes fit for SFT (finished, every predicate passed, no policy violation, not a duplicate).

    Returns them in input order and a count of the others by reason.
    """
    kept: list[EpisodeRecord] = []
    skipped: Counter[str] = Counter()
    seen: set[str] = set()
    for rec in records:
        reason = _skip_reason(rec)
        if reason is None:
            key = _dedupe_key(rec)
            reason = "duplicate" if key in seen else None
            seen.add(key)
        if reason is None:
            kept.append(rec)
        else:
            skipped[reason] += 1
    return kept, skipped


def split_by_environment(env_ids: Iterable[str], validation_fraction: float = 0.1, seed: int = 0
                         ) -> tuple[set[str], set[str]]:
    """Split environment ids into (train, validation) sets; no environment is in both.

    Environments are ordered by a seeded hash and the first round(fraction * n) go to validation,
    at least one when the fraction is positive and there are two or more environments, and never
    all of them. The same ids, fraction and seed always give the same split.
    """
    if not 0.0 <= validation_fraction < 1.0:
        raise ValueError(f"validation fraction must be in [0, 1), got {validation_fraction}")
    envs = sorted(set(env_ids), key=lambda e: hashlib.blake2b(f"{seed}:{e}".encode(), digest_size=8).digest())
    n_val = round(validation_fraction * len(envs))
    if validation_fraction > 0 and len(envs) >= 2:
        n_val = max(n_val, 1)
    n_val = min(n_val, max(len(envs) - 1, 0))
    return set(envs[n_val:]), set(envs[:n_val])


def _registry() -> dict[str, Tool]:
    from workspace_sim import all_tools

    # the MCP layer's pager for long results is offered with every episode's tools but is not a service tool
    return {**all_tools(), PAGER_TOOL: PAGER}


def registry_tools(rec: EpisodeRecord, strict: bool = False) -> list[dict[str, Any]]:
    """The OpenAI-format schemas, from the registry, of the tools the episode offered and called (in strict
    form with `strict`)."""
    registry = _registry()
    names = [t["function"]["name"] for t in rec.header.tools]
    for m in rec.final.messages if rec.final else []:
        for call in m.tool_calls or []:
            if call.function.name not in names:
                names.append(call.function.name)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ExportError(f"episode {rec.episode_id!r}: tool(s) {unknown} are not in the tool registry")
    return [registry[n].openai_schema(strict) for n in names]


def day_openings(messages: Sequence[dict[str, Any]]) -> list[int]:
    """Where each working day of a multi-day episode opens: the index of the request, then of each user message
    that opens a later day (it starts with the driver's day header); empty for a single-day episode."""
    later = [i for i, m in enumerate(messages) if m.get("role") == "user" and DAY_HEADER.match(m.get("content") or "")]
    if not later:
        return []
    first = next(i for i, m in enumerate(messages) if m.get("role") == "user")
    return [first, *later]


def _episode_media(rec: EpisodeRecord) -> dict[str, MediaPart]:
    """The images and audio clips the episode's calls returned, by the placeholder that stands for each in the
    transcript."""
    return call_media(rec.events)


def to_hf(rec: EpisodeRecord) -> dict[str, Any]:
    """One SFT example in the Hugging Face format: messages with dict arguments, and tools (and `images` when a
    tool result showed one, each as a `{"type": "image"}` part of its message; `audios` likewise for audio
    clips, each a `{"type": "audio", "text": <placeholder>}` part)."""
    messages, media = with_media_parts(rec.messages, _episode_media(rec))
    out: dict[str, Any] = {"messages": messages, "tools": registry_tools(rec)}
    if media.images:
        out["images"] = media.images
    if media.audios:
        out["audios"] = media.audios
    days = day_openings(rec.messages)
    if days:
        out["days"] = days
    return out


def to_openai(rec: EpisodeRecord) -> dict[str, Any]:
    """One SFT example in the OpenAI fine-tuning format: strict tools, string arguments (every optional one
    there, null when left out), call ids and tool_call_ids.

    Missing call ids are filled in as `call_<n>` (n counts the episode's calls); a tool message
    without a `tool_call_id` answers the oldest unanswered call of the same tool name, or of any
    name when it has none.
    """
    tools = registry_tools(rec, strict=True)
    registry = _registry()
    out: list[dict[str, Any]] = []
    pending: list[tuple[str, str]] = []  # (call id, tool name) not yet answered
    n = 0
    for i, m in enumerate(rec.final.messages if rec.final else []):
        msg: dict[str, Any] = {"role": m.role}
        if m.content is not None:
            msg["content"] = m.content
        if m.role == "assistant" and m.tool_calls:
            calls = []
            for c in m.tool_calls:
                cid = c.id or f"call_{n}"
                n += 1
                pending.append((cid, c.function.name))
                args = strict_arguments(registry[c.function.name].input_schema, c.function.arguments)
                calls.append({"id": cid, "type": "function", "function": {
                    "name": c.function.name, "arguments": json.dumps(args, ensure_ascii=False)}})
            msg["tool_calls"] = calls
        elif m.role == "tool":
            cid = m.tool_call_id
            if cid is None:
                match = [p for p in pending if m.name is None or p[1] == m.name]
                if not match:
                    raise ExportError(f"episode {rec.episode_id!r}: messages[{i}] is a tool result with no call "
                                      f"of {m.name or 'any tool'} before it to answer")
                cid = match[0][0]
            pending = [p for p in pending if p[0] != cid]
            msg["tool_call_id"] = cid
        out.append(msg)
    return {"messages": out, "tools": tools}


@dataclass
class SFTExportReport:
    """What `export_sft` wrote."""

    format: str
    train: int
    validation: int
    skipped: dict[str, int]
    train_envs: list[str]
    validation_envs: list[str]
    files: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (also written as manifest.json)."""
        return dict(self.__dict__)


def export_sft(
    records: str | Path | Sequence[EpisodeRecord], out_dir: str | Path, fmt: Format = "hf",
    validation_fraction: float = 0.1, seed: int = 0,
) -> SFTExportReport:
    """Write train.jsonl, validation.jsonl and manifest.json for SFT from records (a path or a list)."""
    if fmt not in ("hf", "openai"):
        raise ExportError(f"format must be 'hf' or 'openai', got {fmt!r}")
    recs = read_records(records) if isinstance(records, (str, Path)) else list(records)
    kept, skipped = select_sft_episodes(recs)
    train_envs, val_envs = split_by_environment((r.env_id for r in kept), validation_fraction, seed)
    convert = to_hf if fmt == "hf" else to_openai
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    counts = {"train": 0, "validation": 0}
    files = []
    for split, envs in (("train", train_envs), ("validation", val_envs)):
        path = out / f"{split}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for rec in kept:
                if rec.env_id in envs:
                    f.write(json.dumps(convert(rec), ensure_ascii=False) + "\n")
                    counts[split] += 1
        files.append(str(path))
    report = SFTExportReport(fmt, counts["train"], counts["validation"], dict(sorted(skipped.items())),
                             sorted(train_envs), sorted(val_envs), files)
    (out / "manifest.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return report


__all__ = ["ExportError", "RecordError", "SFTExportReport", "export_sft", "registry_tools", "select_sft_episodes",
           "split_by_environment", "to_hf", "to_openai"]
