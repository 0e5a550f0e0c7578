"""Errors a tool call can end in; each carries a stable code and a message meant for the model."""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    """A failed tool call: the message is shown to the agent; state is left unchanged."""

    code = "tool_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class UnknownTool(ToolError):
    code = "unknown_tool"


class InvalidArgument(ToolError):
    code = "invalid_argument"


class NotFound(ToolError):
    code = "not_found"


class Conflict(ToolError):
    code = "conflict"


class PermissionDenied(ToolError):
    code = "permission_denied"


class PolicyViolation(ToolError):
    code = "policy_violation"


class Unavailable(ToolError):
    """The call needs something this workspace does not offer (a service, a tool, an engine)."""

    code = "unavailable"


class InjectedFault(ToolError):
    code = "fault"


class LimitExceeded(ToolError):
    """A call refused because it would take the workspace past one of its limits (WorkspaceLimits)."""

    code = "limit_exceeded"


class CallTimeout(ToolError):
    """A call that ran past its wall-time budget; its effects are discarded."""

    code = "timeout"


class SpecError(ValueError):
    """A malformed document (predicate, policy, fault, state); the message names the JSON path."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem


def pydantic_error_message(exc: Exception, root: str = "") -> str:
    """Turn a pydantic ValidationError into one line per problem, each naming its field path."""
    errors = getattr(exc, "errors", None)
    if errors is None:
        return str(exc)
    lines = []
    for err in errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        where = f"{root}.{loc}" if root and loc else (root or loc)
        value = err.get("input")
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        lines.append(f"{where or '(root)'}: {err.get('msg')} (got {shown})")
    return "; ".join(lines)
