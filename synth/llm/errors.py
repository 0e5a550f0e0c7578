"""The one error the LLM plumbing raises, with a kind that says what went wrong and whether to go on."""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal["auth", "not_found", "http", "connection", "timeout", "bad_response", "empty", "tool_calls"]

# An endpoint that rejects our key, lacks the model or cannot be reached will fail every later
# request the same way, so a batch should stop instead of discarding environment after environment.
FATAL_KINDS: frozenset[str] = frozenset({"auth", "not_found", "connection"})


class LLMError(Exception):
    """A chat-completion request that did not yield an assistant message to work with."""

    def __init__(self, kind: ErrorKind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status

    @property
    def fatal(self) -> bool:
        """Whether later requests to the same endpoint would fail the same way."""
        return self.kind in FATAL_KINDS
