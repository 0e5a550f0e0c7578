"""Episodes against a remote coworkenv HTTP server (`coworkenv serve ... --http`), for `run --connect URL`.

The server holds the workspace; this side holds the conversation. `RemoteSession` creates the
episode through the admin API (the spec sent inline, its hash checked against the local one),
sends the agent's tool calls over streamable HTTP, and plays the user and the world through the
admin API (user replies, world events, clock moves, the close of each day), so the runner's
`SpecDriver` sees a `RemoteWorkspace` with the same few operations as a local one. Step judgements
and the final evaluation come from the server: a step's sync is one request (`POST .../step`: the new
events, clock, content hash and the judgement), or rides on a tool call's or a message's answer, with
the judgement in its compact form (verdicts and weights; the final evaluation comes from the end, in
full) and an assistant message's judged with its text as the final answer (what the runner asks next
when it is one); the create's answer carries the start state's. Any failure to reach the server raises
`RemoteError` with a message saying what failed, which the runner turns into a stop reason.

The tool calls go through the lean harness client (`trainers.episodes.harness_client`: the
sessionless protocol spoken directly, the SDK's bytes on the wire) by default, or through the SDK's
`mcp.Client` with `RemoteTarget(client="sdk")` or COWORKENV_REMOTE_CLIENT=sdk. Either way the
episodes of one thread (or one batch worker's portal) share one connection per server
(`ConnectionPools`) for the admin API and the MCP endpoint, and each environment's tool listing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import weakref
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from anyio.from_thread import BlockingPortal, start_blocking_portal

from workspace_sim.core.errors import SpecError

from .harness_client import STEP_META, EpisodeClient, HarnessError, ServerConnection, result_text
from .wire import WireError, WireTimeout

ADMIN_TOKEN_ENV = "COWORKENV_ADMIN_TOKEN"
STEP_SYNC_ENV = "COWORKENV_REMOTE_STEP_SYNC"


def step_sync_enabled() -> bool:
    """Whether remote episodes sync a step in one request (`POST .../step`: events, clock, hash and judgement) and
    take the start from the create's answer: on unless $COWORKENV_REMOTE_STEP_SYNC is 0 (then `GET .../events` and
    `POST .../evaluate` apart, as before; an older server without `/step` gets that anyway)."""
    return os.environ.get(STEP_SYNC_ENV, "1").strip().lower() not in ("0", "false", "no")
REMOTE_CLIENT_ENV = "COWORKENV_REMOTE_CLIENT"
CLIENTS = ("lean", "sdk")


def default_client() -> str:
    """The MCP client remote episodes use unless told: $COWORKENV_REMOTE_CLIENT (lean or sdk), else lean."""
    return os.environ.get(REMOTE_CLIENT_ENV, "").strip().lower() or "lean"
_log = logging.getLogger(__name__)


class RemoteError(RuntimeError):
    """The remote server could not be reached or refused a request; the message says which and why."""


@dataclass(frozen=True)
class RemoteTarget:
    """Where a remote coworkenv server is and how to reach it: base URL, admin token, per-request timeout, and
    the MCP client for tool calls (`lean`, the harness client, or `sdk`, the SDK's `mcp.Client`)."""

    url: str
    token: str = field(repr=False)  # never printed in logs or reprs
    timeout: float = 60.0
    client: str = field(default_factory=default_client)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--connect needs the server's base URL such as http://127.0.0.1:8765, got {self.url!r}")
        if parts.path not in ("", "/") or parts.query:
            raise ValueError(f"--connect needs the server's base URL without a path (e.g. http://127.0.0.1:8765), "
                             f"got {self.url!r}")
        if not self.token:
            raise ValueError(f"--connect needs the server's admin token (--admin-token or {ADMIN_TOKEN_ENV})")
        if not self.timeout > 0:
            raise ValueError(f"timeout must be positive, got {self.timeout!r}")
        if self.client not in CLIENTS:
            raise ValueError(f"the remote MCP client must be lean or sdk (${REMOTE_CLIENT_ENV}), got {self.client!r}")

    @property
    def base(self) -> str:
        """The base URL without a trailing slash."""
        return self.url.rstrip("/")

    @classmethod
    def from_options(cls, url: str, token: str | None, timeout: float = 60.0) -> RemoteTarget:
        """The target for `--connect URL [--admin-token T]`, the token falling back to $COWORKENV_ADMIN_TOKEN."""
        return cls(url, token if token is not None else os.environ.get(ADMIN_TOKEN_ENV, ""), timeout)


@dataclass(frozen=True)
class RemoteServers:
    """Several coworkenv servers a batch is spread over (`run --connect URL1,URL2,...`), one admin token for all.

    Each episode goes to one server chosen from its id by rendezvous hashing (the server whose
    blake2b(url, episode id) is highest): the same id always lands on the same server, and adding
    or removing a server moves only the episodes that must move. Nothing fails over: an episode
    whose server goes down ends with stop reason "error" naming that server, and the rest of the
    batch goes on on the others.
    """

    targets: tuple[RemoteTarget, ...]

    def __post_init__(self) -> None:
        if not self.targets:
            raise ValueError("--connect needs at least one server URL")
        bases = [t.base for t in self.targets]
        twice = sorted({b for b in bases if bases.count(b) > 1})
        if twice:
            raise ValueError(f"--connect lists {', '.join(twice)} more than once; give each server once")

    def pick(self, episode_id: str) -> RemoteTarget:
        """The server that runs the episode with this id."""
        def weight(t: RemoteTarget) -> bytes:
            return hashlib.blake2b(f"{t.base}\n{episode_id}".encode(), digest_size=8).digest()

        return max(self.targets, key=weight)

    @classmethod
    def from_options(cls, urls: str, token: str | None, timeout: float = 60.0) -> RemoteServers:
        """The servers of `--connect URL1,URL2,... [--admin-token T]` (token as in `RemoteTarget.from_options`)."""
        parts = [u.strip() for u in urls.split(",")]
        if any(not u for u in parts):
            raise ValueError(f"--connect takes base URLs separated by commas, without empty entries; got {urls!r}")
        return cls(tuple(RemoteTarget.from_options(u, token, timeout) for u in parts))


class ConnectionPools:
    """The connections that the remote episodes of one thread (or one batch worker's portal) share.

    A fresh HTTP client costs tens of milliseconds (it loads the CA bundle), several times what the
    server spends on a whole episode; so the episodes keep one `ServerConnection` per server, used
    by the admin API and the lean client's MCP requests alike (one keep-alive connection when they
    run one after another), with each environment's tool listing (which the server marks cacheable
    for a day) fetched once per server. For the SDK's client (`client="sdk"`, which needs `portal`)
    they also share one async HTTP client and one MCP response cache. `close()` releases them all.
    """

    def __init__(self, portal: BlockingPortal | None = None) -> None:
        self.portal = portal
        self._servers: dict[tuple[str, float, str], ServerConnection] = {}
        self._mcp: Any = None
        self._listings: Any = None
        self.versions: dict[str, str] = {}  # server base -> the sessionless protocol revision it answered

    def connection(self, target: RemoteTarget) -> ServerConnection:
        """The connection to a server (made on first use), for its admin API and the lean client."""
        key = (target.base, target.timeout, target.token)
        if key not in self._servers:
            self._servers[key] = ServerConnection(target.base, target.token, target.timeout)
        return self._servers[key]

    def mcp_client(self, url: str, timeout: float, env_key: str, server: str) -> Any:
        """An SDK `Client` for an episode's endpoint on the shared HTTP client and listing cache; `env_key`
        names the environment on its server (listings are shared between episodes of the same one only).
        Once a server has answered in a sessionless revision, later clients adopt it without probing."""
        from mcp import Client
        from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore
        from mcp.client.streamable_http import streamable_http_client

        assert self.portal is not None, "the SDK client's pools need the portal it runs on"
        if self._mcp is None:
            self._mcp = self.portal.call(_async_client)
            self._listings = InMemoryResponseCacheStore()
        cache = CacheConfig(store=self._listings, partition="coworkenv-run", target_id=env_key)
        return Client(streamable_http_client(url, http_client=self._mcp, terminate_on_close=False),
                      read_timeout_seconds=timeout, cache=cache, mode=self.versions.get(server, "auto"))

    def learned(self, server: str, version: str) -> None:
        """Remember the revision a server answered in, when it is a sessionless one."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if version in MODERN_PROTOCOL_VERSIONS:
            self.versions[server] = version

    def close(self) -> None:
        """Close every connection (idempotent)."""
        for conn in self._servers.values():
            conn.close()
        self._servers.clear()
        if self._mcp is not None and self.portal is not None:
            self.portal.call(self._mcp.aclose)
        self._mcp = None


async def _async_client() -> Any:
    """The MCP side's HTTP client with the SDK's own defaults, made inside the portal's event loop."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    return create_mcp_http_client()


_POOLS: weakref.WeakKeyDictionary[BlockingPortal, ConnectionPools] = weakref.WeakKeyDictionary()
_THREAD = threading.local()


def pools_for(portal: BlockingPortal) -> ConnectionPools:
    """The connection pools of the episodes run on `portal` (made on first use)."""
    if portal not in _POOLS:
        _POOLS[portal] = ConnectionPools(portal)
    return _POOLS[portal]


def thread_pools() -> ConnectionPools:
    """The connection pools of the episodes this thread runs without a portal (made on first use, kept for the
    thread's life: a training loop calling `run_episode(..., connect=...)` over and over reuses them)."""
    pools = getattr(_THREAD, "pools", None)
    if pools is None:
        pools = _THREAD.pools = ConnectionPools()
    return pools


def close_pools(portal: BlockingPortal | None = None) -> None:
    """Close the pools of `portal`, if any were made (before the portal itself stops); without a portal, this
    thread's own pools."""
    pools = _POOLS.pop(portal, None) if portal is not None else _THREAD.__dict__.pop("pools", None)
    if pools is not None:
        pools.close()


class AdminClient:
    """The admin API of a remote server over HTTP; every failure becomes a RemoteError. With `pools`, it uses
    their shared client for the server (and leaves it open on `close`)."""

    def __init__(self, target: RemoteTarget, pools: ConnectionPools | None = None) -> None:
        self.target = target
        self._shared = pools is not None
        self.connection = pools.connection(target) if pools is not None else \
            ServerConnection(target.base, target.token, target.timeout)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                params: dict[str, Any] | None = None) -> Any:
        """Send one admin request and return its JSON answer; errors name the request and the server's reason."""
        what = f"{method} {path}"
        try:
            r = self.connection.admin(method, path, body, params)
        except WireTimeout:
            raise RemoteError(f"the server at {self.target.base} did not answer {what} within "
                              f"{self.target.timeout:g}s") from None
        except WireError as e:
            raise RemoteError(f"cannot reach the server at {self.target.base} ({what}): {e}") from None
        try:
            doc = r.json()
        except ValueError:
            doc = None
        if r.status_code >= 400:
            err = doc.get("error") if isinstance(doc, dict) and isinstance(doc.get("error"), dict) else {}
            if r.status_code in (401, 403):
                raise RemoteError(f"the server at {self.target.base} refused the admin token ({r.status_code}: "
                                  f"{err.get('message', r.reason_phrase)}); pass the token the server was started "
                                  f"with (--admin-token or {ADMIN_TOKEN_ENV})")
            if err.get("code") == "bad_world_change":
                raise SpecError(str(err.get("path", "")), str(err.get("problem", err.get("message"))))
            detail = err.get("message") or r.text[:200] or r.reason_phrase
            raise RemoteError(f"{what} failed with HTTP {r.status_code} ({err.get('code', 'http_error')}): {detail}")
        if not isinstance(doc, dict):
            raise RemoteError(f"{what}: the server at {self.target.base} did not answer with a JSON object; "
                              "is this a coworkenv server?")
        return doc

    def close(self) -> None:
        """Close the HTTP connection pool, unless it is shared."""
        if not self._shared:
            self.connection.close()


def check_server(target: RemoteTarget) -> int:
    """Ask the server for its live episodes (a cheap request that needs the token); returns how many are live.

    Raises RemoteError when the server cannot be reached, refuses the token or is not a coworkenv server.
    """
    admin = AdminClient(target)
    try:
        episodes = admin.request("GET", "/admin/episodes").get("episodes")
    finally:
        admin.close()
    if not isinstance(episodes, list):
        raise RemoteError(f"{target.base} answered GET /admin/episodes without an episode list; is this a coworkenv "
                          "server?")
    return len(episodes)


class RemoteEvent:
    """A workspace event as the server sent it; `to_json()` gives it back (what records are built from)."""

    __slots__ = ("doc",)

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def to_json(self) -> dict[str, Any]:
        """The event's JSON, as `workspace_sim.Event.to_json()` wrote it on the server."""
        return self.doc


class RemoteEvaluation:
    """An evaluation as the server sent it, with the reading methods the runner uses."""

    def __init__(self, doc: dict[str, Any]) -> None:
        results = doc.get("results")
        if not isinstance(results, list) or not isinstance(doc.get("score"), (int, float)):
            raise RemoteError(f"the server sent a malformed evaluation: {str(doc)[:200]}")
        self.doc = doc
        self.compact = doc.get("compact") is True  # a step's judgement without descriptions (see `to_json`)
        self.passed = bool(doc.get("passed"))
        try:  # the unrounded score, as `Evaluation.score` computes it (the JSON's is rounded)
            total = sum(float(r["weight"]) for r in results)
            won = sum(float(r["weight"]) for r in results if r.get("passed"))
        except (KeyError, TypeError, ValueError):
            raise RemoteError(f"the server sent a malformed evaluation: {str(doc)[:200]}") from None
        self.score = 1.0 if total == 0 else won / total

    def vector(self) -> list[bool]:
        """Pass/fail per predicate, in order."""
        return [bool(r.get("passed")) for r in self.doc["results"]]

    def to_json(self) -> dict[str, Any]:
        """The evaluation as the server wrote it; a compact one (a step's judgement: verdicts, weights and score
        only) has no full form, and asking for it is an error rather than a record with less in it."""
        if self.compact:
            raise RemoteError("a compact step judgement has no full evaluation; the episode's end brings that")
        return self.doc


class _RemoteState:
    """`workspace.state` of a remote workspace: only the clock is read through it, fetched when asked."""

    def __init__(self, ws: RemoteWorkspace) -> None:
        self._ws = ws

    @property
    def now(self) -> datetime:
        return self._ws.now


class RemoteWorkspace:
    """The server's workspace of one episode, with the operations `SpecDriver` and the runner use.

    Reads (clock, events, content hash) are fetched from the server when something may have
    changed them; writes (messages, world changes, clock moves) go to the admin API at once.
    """

    def __init__(self, admin: AdminClient, episode_id: str, start: Any = None) -> None:
        self.admin, self.episode_id = admin, episode_id
        self._events: list[RemoteEvent] = []
        self._now: datetime | None = None
        self._hash = ""
        self._stale = True
        self.state = _RemoteState(self)
        self.step_answer: str | None = None  # the final answer the per-step judgement is fetched with
        self._judged: RemoteEvaluation | None = None  # the judgement of the state as last synced
        self._judged_answer: str | None = None  # the final answer it was judged with
        self._final_steps = True  # whether the server judges a message's sync with a final answer
        self._steps = step_sync_enabled()  # whether to use POST .../step (an older server has GET .../events only)
        self.compact = self._steps  # step judgements in their compact form (an older server refuses the field)
        if self._steps and isinstance(start, dict):  # the create's answer carries the start: no first sync
            self._take(start)

    def _path(self, what: str) -> str:
        return f"/admin/episodes/{self.episode_id}/{what}"

    def touched(self) -> None:
        """Something (a tool call) may have changed the remote workspace; read it again when asked."""
        self._stale = True
        self._judged = None

    def judged(self, final_answer: str | None) -> RemoteEvaluation | None:
        """The server's judgement of the current state with this final answer, when the last sync brought it
        (one request per step instead of two), else None."""
        self._sync()
        if self._judged is not None and final_answer == self._judged_answer:
            return self._judged
        return None

    def step_since(self) -> int | None:
        """The event index from which a tool call may bring the step's sync with its answer (the events known so
        far), or None when it may not (the old sync, or a judgement with a final answer is wanted)."""
        return len(self._events) if self._steps and self.step_answer is None else None

    def called(self, result: dict[str, Any]) -> None:
        """A tool call was answered: take the step's sync it brought (`_meta["coworkenv/step"]`), else read the
        workspace again when asked."""
        meta = result.get("_meta")
        synced = meta.pop(STEP_META, None) if isinstance(meta, dict) else None
        if isinstance(synced, dict) and isinstance(synced.get("evaluation"), dict):
            self._take(synced)
        else:
            self.touched()

    def _sync(self) -> None:
        if not self._stale:
            return
        since = len(self._events)
        if self._steps:  # events, clock, hash and the step's judgement in one request
            body: dict[str, Any] = {"since": since}
            if self.step_answer is not None:
                body["final_answer"] = self.step_answer
            if self.compact:
                body["compact"] = True
            try:
                doc = self.admin.request("POST", self._path("step"), body)
            except RemoteError as e:
                if self.compact and "compact" in _refused_fields(e):  # an older server: the full judgement
                    self.compact = False
                    del body["compact"]
                    doc = self.admin.request("POST", self._path("step"), body)
                elif "HTTP 404 (no_route)" not in str(e):
                    raise
                else:
                    self._steps = False
        if not self._steps:
            doc = self.admin.request("GET", self._path("events"), params={"since": since})
        self._take(doc, self.step_answer)

    def _take(self, doc: dict[str, Any], answer: str | None = None) -> None:
        """Take a sync (new events, clock, hash, and the judgement with final answer `answer`, if it brings one)."""
        try:
            new = [RemoteEvent(e) for e in doc["events"]]
            now, content_hash, count = datetime.fromisoformat(doc["now"]), str(doc["content_hash"]), int(doc["count"])
        except (KeyError, TypeError, ValueError) as e:
            raise RemoteError(f"the server sent malformed events ({type(e).__name__}: {e})") from None
        self._events.extend(new)
        if count != len(self._events):
            raise RemoteError(f"the remote episode's event log changed behind the runner's back ({count} events on "
                              f"the server, {len(self._events)} seen); was it reset or restored by someone else?")
        self._judged = RemoteEvaluation(doc["evaluation"]) if isinstance(doc.get("evaluation"), dict) else None
        self._judged_answer = answer
        self._now, self._hash, self._stale = now, content_hash, False

    @property
    def now(self) -> datetime:
        """The remote simulated time."""
        self._sync()
        assert self._now is not None
        return self._now

    @property
    def content_hash(self) -> str:
        """The remote workspace's content hash."""
        self._sync()
        return self._hash

    def events(self) -> list[RemoteEvent]:
        """The remote event log, oldest first."""
        self._sync()
        return list(self._events)

    def add_message(self, role: str, content: str) -> RemoteEvent:
        """Log a conversation turn on the server (confirmation policies read these)."""
        self._judged = None
        body: dict[str, Any] = {"role": role, "content": content}
        since = self.step_since()
        if since is not None:  # the step's sync comes with the answer
            body["step_since"] = since
            if self.compact:
                body["step_compact"] = True
            if role == "assistant" and self._final_steps:  # judged as the final answer it most often is (the
                body["step_final_answer"] = content  # runner's next judgement then needs no request)
        try:
            doc = self.admin.request("POST", self._path("message"), body)
        except RemoteError as e:
            if since is None or "step_" not in str(e):
                raise
            refused = _refused_fields(e)
            if "step_since" not in refused and refused & {"step_compact", "step_final_answer"}:  # older: without them
                self.compact = self.compact and "step_compact" not in refused
                self._final_steps = self._final_steps and "step_final_answer" not in refused
                body.pop("step_compact", None)
                body.pop("step_final_answer", None)
            else:  # older still: it syncs with GET .../events and POST .../evaluate
                self._steps, since = False, None
                for key in ("step_since", "step_compact", "step_final_answer"):
                    body.pop(key, None)
            doc = self.admin.request("POST", self._path("message"), body)
        if since is not None and isinstance(doc.get("event"), dict) and isinstance(doc.get("step"), dict):
            self._take(doc["step"], body.get("step_final_answer"))
            return RemoteEvent(doc["event"])
        event = RemoteEvent(doc)
        if not self._stale and event.doc.get("index") == len(self._events):
            self._events.append(event)  # a message moves neither the clock nor the records
        else:
            self._stale = True
        return event

    def apply_world_change(self, changes: list[Any], note: str = "") -> RemoteEvent:
        """Apply a world event on the server; a change that does not apply raises SpecError as locally."""
        self.touched()
        return RemoteEvent(self.admin.request("POST", self._path("world"), {"changes": list(changes), "note": note}))

    def close_stage(self, stage: str) -> RemoteEvent:
        """Close a stage (working day) on the server, which keeps the state it closed on for that day's predicates."""
        self.touched()
        return RemoteEvent(self.admin.request("POST", self._path("stage"), {"stage": stage}))

    def advance_clock(self, seconds: float) -> None:
        """Move the remote simulated clock forward."""
        self.touched()
        self.admin.request("POST", self._path("clock"), {"seconds": seconds})


def _refused_fields(e: Exception) -> set[str]:
    """The body fields a server refused as unknown (its 400 says "unknown field(s) a, b; allowed: ...")."""
    m = re.search(r"unknown field\(s\) ([^;]*);", str(e))
    return {f.strip() for f in m.group(1).split(",")} if m else set()


def _text(result: Any) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


class LeanMCPChannel:
    """The agent's tool calls through the lean harness client (`harness_client.EpisodeClient`) on the shared
    connection to the episode's server; the environment's listing is fetched by its first episode only.

    A tool's own failure comes back as an error result, as with the other channels; a failure of the
    request itself raises RemoteError, since no later call could succeed either.
    """

    name = "remote"

    def __init__(self, connection: ServerConnection, path: str, workspace: RemoteWorkspace, env_key: str) -> None:
        self.url = connection.base + path
        self.workspace = workspace
        self.client = EpisodeClient(connection, path, env_key)
        try:
            self.client.list_tools()
        except HarnessError as e:
            raise RemoteError(f"cannot list the tools at {self.url}: {e}") from None

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The remote MCP server's answer (text content and isError)."""
        self.workspace.touched()
        try:  # the step's sync comes with the answer (one request fewer per step)
            result = self.client.call_tool(tool, arguments, step_since=self.workspace.step_since(),
                                           compact=self.workspace.compact)
        except HarnessError as e:
            raise RemoteError(f"the MCP call {tool} to {self.url} failed: {e}") from None
        self.workspace.called(result)
        return result_text(result), bool(result.get("isError"))

    def close(self) -> None:
        """Nothing to close: the connection is shared, and a sessionless episode has no session."""


class RemoteMCPChannel:
    """The agent's tool calls through the SDK's `mcp.Client` over streamable HTTP to the episode's endpoint.

    A tool's own failure comes back as an error result, as with the other channels; a failure of
    the connection itself raises RemoteError, since no later call could succeed either.
    """

    name = "remote"

    def __init__(self, url: str, workspace: RemoteWorkspace, timeout: float,
                 portal: BlockingPortal | None = None, pools: ConnectionPools | None = None,
                 env_key: str | None = None, server: str | None = None) -> None:
        from mcp import Client

        self.url, self.workspace, self.timeout = url, workspace, timeout
        self._own: AbstractContextManager[BlockingPortal] | None = None
        if pools is not None and pools.portal is None:
            pools = None  # the SDK's shared clients live on a portal; without one, this channel has its own
        if pools is not None:
            portal = pools.portal
        if portal is None:
            self._own = start_blocking_portal()
            portal = self._own.__enter__()
        self.portal = portal
        client = pools.mcp_client(url, timeout, env_key or url, server or url) if pools is not None \
            else Client(url, read_timeout_seconds=timeout)
        self._client_cm = portal.wrap_async_context_manager(client)
        try:
            self.client = self._client_cm.__enter__()
        except BaseException as e:
            self._close_portal()
            if isinstance(e, Exception):
                raise RemoteError(f"cannot open an MCP session at {url}: {_describe(e)}") from None
            raise
        self._open = True
        if pools is not None:
            pools.learned(server or url, self.client.protocol_version)
            try:  # from the shared cache after the environment's first episode; the SDK checks results against it
                self.portal.call(self.client.list_tools)
            except Exception as e:
                self.close()
                raise RemoteError(f"cannot list the tools at {url}: {_describe(e)}") from None

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The remote MCP server's answer (text content and isError)."""
        self.workspace.touched()
        try:
            result = self.portal.call(self.client.call_tool, tool, arguments)
        except Exception as e:
            raise RemoteError(f"the MCP call {tool} to {self.url} failed: {_describe(e)}") from None
        return _text(result), bool(result.is_error)

    def close(self) -> None:
        """Close the MCP session (a dead server is not an error here) and the event loop if this channel started it."""
        try:
            if self._open:
                self._open = False
                self._client_cm.__exit__(None, None, None)
        except Exception as e:  # the server may be gone already; there is nothing left to release there
            _log.debug("closing the MCP session at %s failed: %s", self.url, _describe(e))
        finally:
            self._close_portal()

    def _close_portal(self) -> None:
        if self._own is not None:
            self._own.__exit__(None, None, None)
            self._own = None


def _describe(e: BaseException) -> str:
    """One line for an exception, looking inside exception groups for the first real cause."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


class RemoteSession:
    """One episode on a remote server: created from the spec, driven, judged and ended through its APIs."""

    def __init__(self, target: RemoteTarget, spec_document: dict[str, Any], episode_id: str, env_hash: str,
                 start_hash: str, portal: BlockingPortal | None = None, pools: ConnectionPools | None = None) -> None:
        self.target = target
        if pools is None:
            pools = pools_for(portal) if portal is not None else thread_pools()
        self.admin = AdminClient(target, pools)
        self.ended = False
        self.channel: LeanMCPChannel | RemoteMCPChannel | None = None
        try:
            info = self.admin.request("POST", "/admin/episodes", {"spec_document": spec_document,
                                                                  "episode_id": episode_id})
        except BaseException:
            self.admin.close()
            raise
        self.episode_id = str(info.get("episode_id", episode_id))
        self.workspace = RemoteWorkspace(self.admin, self.episode_id, info.get("start"))
        try:
            if info.get("env_hash") != env_hash:
                raise RemoteError(f"the server built a different environment (hash {info.get('env_hash')!r}, "
                                  f"here {env_hash!r}); are both sides running the same coworkenv version?")
            if self.workspace.content_hash != start_hash:
                raise RemoteError("the server's start state differs from the spec's start state here; are both sides "
                                  "running the same coworkenv version?")
            mcp_only = "mcp_only" if info.get("mcp_only") else "harness"
            path = str(info.get("mcp_path", f"/episodes/{self.episode_id}/mcp"))
            env_key = f"{target.base}#{env_hash}#{mcp_only}"
            if target.client == "lean":
                self.channel = LeanMCPChannel(self.admin.connection, path, self.workspace, env_key)
            else:
                self.channel = RemoteMCPChannel(target.base + path, self.workspace, target.timeout, portal, pools,
                                                env_key=env_key, server=target.base)
        except BaseException:
            self.close()
            raise

    def evaluate(self, final_answer: str | None) -> RemoteEvaluation:
        """The server's judgement of the episode so far (the episode goes on)."""
        judged = self.workspace.judged(final_answer)
        if judged is not None:  # the step's sync brought it
            return judged
        self.workspace.step_answer = final_answer  # later syncs fetch the judgement with this answer
        body = {"final_answer": final_answer} if final_answer is not None else {}
        return RemoteEvaluation(self.admin.request("POST", f"/admin/episodes/{self.episode_id}/evaluate", body))

    def end(self, final_answer: str | None, reason: str) -> dict[str, Any]:
        """End the remote episode (the server records and judges it); returns the server's evaluation."""
        body: dict[str, Any] = {"reason": reason}
        if final_answer is not None:
            body["final_answer"] = final_answer
        self.ended = True
        return RemoteEvaluation(self.admin.request("POST", f"/admin/episodes/{self.episode_id}/end", body)).to_json()

    def close(self) -> None:
        """Close the MCP session, end the remote episode if still live (best effort), close the connections."""
        try:
            if self.channel is not None:
                self.channel.close()
            if not self.ended:
                self.ended = True
                try:
                    self.admin.request("POST", f"/admin/episodes/{self.episode_id}/end", {"reason": "error"})
                except (RemoteError, SpecError):
                    pass  # the server is gone or the episode ended already: nothing left to release there
        finally:
            self.admin.close()
