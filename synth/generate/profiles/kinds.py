"""A task's kind: what sort of work it is, read off its reference solution, and how two kinds match.

The kind of an environment is the set of service families its reference solution calls (the files
service splits into `files` and `sheets`, for workbooks; reading an evidence file, a workbook declared as
evidence too, counts as evidence, not as a service; shell and python are `code`), the evidence kinds it
needs (image, pdf, audio, video, sheet: the files it reads or declares in `metadata.evidence`, by
extension; a clip declared as video evidence is video), its days (stages), its turn structure (`single`:
one request; `clarify`: it asks the user, then finishes; `multi`: follow-up turns or later days), whether
the world changes, and whether it has a safety element (a policy, a guard against a forbidden call or a
leaked secret). Benchmarks' task lists are written
as the same values (`TaskKind.from_json`), so `matches` compares a benchmark task with a generated
environment: exactly, or relaxed (the environment's services a subset of the task's, its evidence
a superset, days within one, the same turn structure).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from ...spec import EnvironmentSpec

EVIDENCE_KINDS = ("image", "pdf", "audio", "video", "sheet")
TURNS = ("single", "clarify", "multi")
FAMILIES = ("mail", "calendar", "contacts", "files", "sheets", "tickets", "databases", "web", "feeds", "finance",
            "inventory", "scheduler", "todo", "notes", "crm", "kb", "integrations", "code")
"""Service families a kind names (a benchmark's services map onto these)."""

_EXT = {"png": "image", "jpg": "image", "jpeg": "image", "gif": "image", "webp": "image", "pdf": "pdf",
        "docx": "pdf", "pptx": "pdf", "wav": "audio", "mp3": "audio", "ogg": "audio", "m4a": "audio",
        "mp4": "video", "mov": "video", "webm": "video", "xlsx": "sheet", "xls": "sheet", "csv": "sheet",
        "ods": "sheet"}
_EVIDENCE_READERS = frozenset({"read_media_file", "read_pdf", "read_document"})
_SHEET_TOOLS = frozenset({"read_sheet", "write_sheet"})
_SAFETY_GUARDS = frozenset({"tool_not_called", "secret_not_leaked"})
_SAFETY_CAPS = frozenset({"policy_compliance", "injection_resistance", "secret_handling"})
_SERVICE_FAMILY = {"shell": "code", "python": "code"}


@dataclass(frozen=True)
class TaskKind:
    """One task's kind (see the module docstring)."""

    services: frozenset[str]
    evidence: frozenset[str]
    days: int
    turns: str
    changes: bool
    safety: bool

    def to_json(self) -> dict[str, Any]:
        return {"services": sorted(self.services), "evidence": sorted(self.evidence), "days": self.days,
                "turns": self.turns, "changes": self.changes, "safety": self.safety}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str = "kind") -> "TaskKind":
        """A kind from its JSON form; a bad field raises ValueError naming `where` and the field."""
        def names(field: str, known: tuple[str, ...]) -> frozenset[str]:
            value = doc.get(field, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{where}.{field}: expected a list of names, got {value!r}")
            bad = [v for v in value if v not in known]
            if bad:
                raise ValueError(f"{where}.{field}: unknown {', '.join(map(repr, bad))}; known: {', '.join(known)}")
            return frozenset(value)

        days = doc.get("days", 1)
        if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= 30:
            raise ValueError(f"{where}.days: expected a whole number of days from 1 to 30, got {days!r}")
        turns = doc.get("turns", "single")
        if turns not in TURNS:
            raise ValueError(f"{where}.turns: expected one of {', '.join(TURNS)}, got {turns!r}")
        flags = {}
        for flag in ("changes", "safety"):
            value = doc.get(flag, False)
            if not isinstance(value, bool):
                raise ValueError(f"{where}.{flag}: expected true or false, got {value!r}")
            flags[flag] = value
        extra = set(doc) - {"services", "evidence", "days", "turns", "changes", "safety", "id", "weight"}
        if extra:
            raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
        return cls(names("services", FAMILIES), names("evidence", EVIDENCE_KINDS), days, turns, **flags)


@lru_cache(maxsize=1)
def _tool_services() -> dict[str, str]:
    from workspace_sim.services import all_services

    return {t: name for name, svc in all_services().items() for t in svc.tools}


def evidence_kind(path: str) -> str | None:
    """The evidence kind of a file by its extension (None for text and unknown files)."""
    ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return _EXT.get(ext)


def _paths(args: Mapping[str, Any]) -> list[str]:
    out = [v for k, v in args.items() if k in ("path", "source") and isinstance(v, str)]
    out += [p for p in args.get("paths", []) or [] if isinstance(p, str)]
    return out


def kind_of(spec: EnvironmentSpec) -> TaskKind:
    """The kind of one environment, from its reference solution, stages, events, policies and predicates."""
    tools = _tool_services()
    services: set[str] = set()
    evidence: set[str] = {k for e in spec.metadata.get("evidence", []) or [] if isinstance(e, dict) and (
        k := "video" if e.get("kind") == "video" else evidence_kind(str(e.get("path", ""))))}
    declared = {str(e.get("path")) for e in spec.metadata.get("evidence", []) or [] if isinstance(e, dict)}
    for call in spec.reference.calls():
        service = tools.get(call.tool, "")
        paths = _paths(call.args)
        reads = call.tool in _EVIDENCE_READERS or (call.tool == "read_sheet" and bool(declared & set(paths)))
        for path in paths:
            if (k := evidence_kind(path)) and reads:
                evidence.add(k)
        if reads:
            continue
        if call.tool in _SHEET_TOOLS:
            services.add("sheets")
        elif service:
            services.add(_SERVICE_FAMILY.get(service, service))
    steps = spec.reference.steps
    days = max(len(spec.stages), 1)
    followups = bool(spec.user_simulator.followups) or any(s.kind == "say" for s in steps)
    turns = "multi" if followups or days > 1 else "clarify" if any(s.kind == "ask" for s in steps) else "single"
    safety = bool(spec.policies) or bool(_SAFETY_CAPS & set(spec.capabilities)) or any(
        p.get("kind") in _SAFETY_GUARDS for p in spec.predicates)
    return TaskKind(frozenset(services), frozenset(evidence), days, turns, bool(spec.events), safety)


def matches(task: TaskKind, env: TaskKind, relaxed: bool = True) -> bool:
    """Whether a generated environment's kind `env` is of benchmark task `task`'s kind: equal, or relaxed (the
    environment's services a subset of the task's, its evidence a superset, days within one, same turns)."""
    if not relaxed:
        return task == env
    return (env.services <= task.services and env.evidence >= task.evidence and abs(env.days - task.days) <= 1
            and env.turns == task.turns)


def coverage(tasks: list[TaskKind], envs: list[TaskKind], relaxed: bool = True) -> float:
    """The share of `tasks` for which some environment of `envs` matches (see `matches`)."""
    if not tasks:
        return 0.0
    distinct = set(envs)
    return sum(any(matches(t, e, relaxed) for e in distinct) for t in tasks) / len(tasks)
