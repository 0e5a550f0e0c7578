"""Where an episode's workspace lives: in this process, or on a remote coworkenv server.

`open_backend` picks one for an episode. `LocalBackend` forks the prepared start workspace and
sends calls direct or through an in-process MCP client; `RemoteBackend` creates the episode on a
remote server (tool calls over MCP, user and world through its admin API, judgements from it).
Both offer what the episode session needs: a tool channel, a judgement, the end, the release.
"""

from __future__ import annotations

import re
import secrets
from typing import Any, Literal

from mcp_server.episode import Episode

from .channels import DirectChannel, InProcessMCPChannel, ToolChannel
from .prepared import PreparedSpec
from .remote import RemoteError, RemoteSession, RemoteTarget

Transport = Literal["direct", "mcp"]


class LocalBackend:
    """The episode's workspace in this process; calls go direct or through an in-process MCP client."""

    def __init__(self, prepared: PreparedSpec, transport: Transport, portal: Any) -> None:
        self.prepared, self.transport, self.portal = prepared, transport, portal
        self.ws: Any = prepared.workspace()

    def settings(self) -> dict[str, Any]:
        """What the record's policy settings say of the backend (nothing, for a local one)."""
        return {}

    def open(self) -> ToolChannel:
        """The channel the agent's tool calls go through."""
        episode = Episode(self.prepared.env, "runner", workspace=self.ws)
        return InProcessMCPChannel(episode, self.portal) if self.transport == "mcp" else DirectChannel(episode)

    def evaluate(self, final_answer: str | None) -> Any:
        """The spec's judgement of the workspace now and `final_answer`."""
        return self.prepared.spec.evaluate(self.ws, final_answer, judge=self.prepared.judge)

    def end(self, final_answer: str | None, reason: str) -> dict[str, Any] | None:
        """The final evaluation the backend gives (None: the session's own last judgement is the final one)."""
        return None  # the runner's own last judgement is the final one

    def close(self) -> None:
        """Release the workspace (its live resources, such as a sandbox container)."""
        self.ws.close()


def remote_episode_id(episode_id: str) -> str:
    """A server-side episode id for a runner's episode: its id made URL-safe plus a random suffix (ids are
    never reused on a server, and many runners may share one)."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", episode_id).strip("-_")[:46] or "ep"
    return f"{safe}-{secrets.token_hex(8)}"


class RemoteBackend:
    """The episode's workspace on a remote coworkenv server; the runner plays user and world through its admin API."""

    def __init__(self, prepared: PreparedSpec, target: RemoteTarget, episode_id: str, portal: Any) -> None:
        self.prepared, self.target, self.portal = prepared, target, portal
        self.remote_id = remote_episode_id(episode_id)
        self.session: RemoteSession | None = None
        self.ws: Any = _Unopened(target)

    def settings(self) -> dict[str, Any]:
        """The server and the server-side episode id, for the record."""
        return {"remote": {"url": self.target.base, "episode_id": self.remote_id}}

    def open(self) -> ToolChannel:
        """Create the episode on the server; its MCP channel."""
        self.session = RemoteSession(self.target, self.prepared.spec.to_document(), self.remote_id,
                                     self.prepared.env_hash, self.prepared.start.content_hash, self.portal)
        self.ws = self.session.workspace
        assert self.session.channel is not None
        return self.session.channel

    def evaluate(self, final_answer: str | None) -> Any:
        """The server's judgement of its workspace now and `final_answer`."""
        assert self.session is not None
        return self.session.evaluate(final_answer)

    def end(self, final_answer: str | None, reason: str) -> dict[str, Any] | None:
        """End the remote episode; the server's final evaluation."""
        if self.session is None:
            raise RemoteError(f"no episode was created on {self.target.base}")
        return self.session.end(final_answer, reason)

    def close(self) -> None:
        """Release the remote episode (idempotent)."""
        if self.session is not None:
            self.session.close()


class _Unopened:
    """The workspace of a remote episode that could not be created: nothing to read."""

    def __init__(self, target: RemoteTarget) -> None:
        self.target = target

    def events(self) -> list[Any]:
        """Refused: the episode was never created."""
        raise RemoteError(f"no episode was created on {self.target.base}")


def open_backend(prepared: PreparedSpec, transport: Transport, portal: Any, connect: RemoteTarget | None,
             eid: str) -> LocalBackend | RemoteBackend:
    """The backend of episode `eid`: on the remote server `connect`, else local (calls by `transport`)."""
    if connect is not None:
        return RemoteBackend(prepared, connect, eid, portal)
    return LocalBackend(prepared, transport, portal)
