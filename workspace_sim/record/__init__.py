"""The episode record: typed JSONL lines, one reader/writer, one replay; used by mcp_server and trainers alike.

- `lines`: the line types (`HeaderLine`, `EventLine`, `StepLine`, `FinalLine`, the chat messages),
  each field described; docs/episode-record.md is the format's page.
- `episode`: `EpisodeRecord`, one episode in memory, and the per-day verdict helpers.
- `encoding`: the text of a line (one JSON line, blobs for long strings).
- `build`: lines as dicts for writers on a hot path, and `violations_and_faults`, the one rule.
- `jsonl`: reading (streaming; errors name `file:line`) and writing whole files.
- `writer`: `RecordWriter`, a live episode appended and flushed line by line.
- `replay`: re-running a record on a fresh workspace and comparing it.

It imports nothing of ours outside workspace_sim.
"""

from .build import event_line, final_line, header_line, tool_schemas, transcript, violations_and_faults
from .episode import EpisodeRecord, stage_summary, stage_verdicts
from .jsonl import (RecordedSegment, RecordFile, RecordStream, append_line, parse_lines, read_record_file,
                    read_records, record_files, replace_final_line, write_records)
from .lines import (ERROR_STOPS, RECORD_VERSION, ChatMessage, ErrorLine, EventLine, FaultInfo, FinalLine,
                    FunctionCall, HeaderLine, Line, PolicyInfo, RecordError, RecordReadError, StepLine, StopReason,
                    ToolCall, TurnTokens, ViolationInfo)
from .replay import ReplayError, ReplayReport, replay_event, replay_events, replay_record, replay_records
from .writer import DeferredRecords, LaterLine, RecordWriter, record_after_answer, sync_file, sync_files

__all__ = [
    "ERROR_STOPS", "RECORD_VERSION", "ChatMessage", "DeferredRecords", "EpisodeRecord", "ErrorLine", "EventLine",
    "FaultInfo", "FinalLine", "FunctionCall", "HeaderLine", "LaterLine", "Line", "PolicyInfo", "RecordError",
    "RecordFile", "RecordReadError", "RecordStream", "RecordWriter", "RecordedSegment", "ReplayError",
    "ReplayReport", "StepLine", "StopReason", "ToolCall", "TurnTokens", "ViolationInfo", "append_line",
    "event_line", "final_line", "header_line", "parse_lines", "read_record_file", "read_records",
    "record_after_answer", "record_files", "replace_final_line", "replay_event", "replay_events",
    "replay_record", "replay_records", "stage_summary", "stage_verdicts", "sync_file", "sync_files",
    "tool_schemas", "transcript", "violations_and_faults", "write_records",
]
