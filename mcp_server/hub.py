"""The live episodes of an HTTP server: each has its own workspace, MCP server and session manager.

Workspaces start as forks of a per-environment template and inline specs are parsed once
(`mcp_server.pool`); an episode's `MCPServer` is built only when a request needs it (the fast
path's sessionless calls and cached listings do not), and a harness's call may bring its step's
sync (`LiveEpisode.step_sync`, asked for with `Coworkenv-Step-Since`).

The hub loads the `mcp` SDK only when the first MCP request arrives: creating, resetting and ending
episodes (the admin API) never need it, so a fresh server's first admin answer does not wait for
it (`tests/mcp_server/test_serve_lazy.py`).

Episodes are addressed explicitly (by id in the URL path), so one MCP request can only ever reach
the episode it names. Sessionless tool calls and listings go to the fast path
(`mcp_server.fastpath`); anything else goes to the episode's own streamable-HTTP session manager,
started in the hub's task group on first use and stopped when the episode ends. Ending an episode
evaluates it (on the event loop, unless its workspace holds a sandbox to release) and closes its
record; the record's fsync follows in the background, and the hub waits for every one before it
stops. Record lines are written right after the answers (`recording.DeferredRecords`).
"""

from __future__ import annotations

import contextlib
import copy
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Sequence

from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.types import Receive, Scope, Send
from workspace_sim.record import DeferredRecords, record_after_answer, sync_file

from .control import ControlOptions
from .environment import EnvironmentSource, ServedEnvironment, environment_hash
from .identity import server_title
from .inflight import InFlight, session_request
from .jsoncheck import JsonProblem, parse_client_json, refuse_bad_json, refuse_bad_request
from .episode import EPISODE_ID, Episode, EpisodeError, RecordExistsError, new_episode_id
from .pool import EpisodePool
from .sdklog import apply as apply_sdk_logging
from .settings import fast_path_enabled

if TYPE_CHECKING:  # the SDK's modules, loaded by the first MCP request (see the module)
    from mcp.server.transport_security import TransportSecuritySettings

    from .fastpath import FastPath
    from .server import EpisodeServer

log = logging.getLogger("coworkenv.mcp.hub")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_ENDED_REMEMBERED = 10_000
MAX_HASHES_KEPT = 16


def transport_security(host: str) -> TransportSecuritySettings:
    """DNS-rebinding protection for a server bound to a local address; none when bound elsewhere on purpose."""
    from mcp.server.transport_security import TransportSecuritySettings

    if host in LOCAL_HOSTS:
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


@dataclass
class LiveEpisode:
    """An episode being served: its lock, its tools, its MCP server and its session manager's state. The
    `MCPServer` is built on the first request that needs it (the fast path's sessionless calls and cached
    listings do not: they go through `call_tool` and `info_stamp` here), and the session manager runs only
    once a request needs it (a handshake-era session, or anything the fast path hands on): an episode driven
    by modern tool calls alone never builds either."""

    episode: Episode
    # one call at a time; admin changes take it too. Uncontended (nearly always: one harness per episode) it is
    # taken without a trip through the event loop, which cost each call and admin request tens of microseconds
    lock: anyio.Lock = field(default_factory=lambda: anyio.Lock(fast_acquire=True))
    sessions_started: bool = False
    in_flight: InFlight = field(default_factory=InFlight)  # request ids being answered, per session
    _server: EpisodeServer | None = None
    _tools: list[Any] | None = None
    # the session manager's (made on first use: each costs a create microseconds, and most episodes never start one)
    _stop: anyio.Event | None = None
    _stopped: anyio.Event | None = None
    _starting: anyio.Lock | None = None

    @property
    def stop(self) -> anyio.Event:
        """Set when the episode ends: its session manager, if it runs, stops."""
        if self._stop is None:
            self._stop = anyio.Event()
        return self._stop

    @property
    def stopped(self) -> anyio.Event:
        """Set once its session manager has stopped."""
        if self._stopped is None:
            self._stopped = anyio.Event()
        return self._stopped

    @property
    def starting(self) -> anyio.Lock:
        """Held while its session manager starts."""
        if self._starting is None:
            self._starting = anyio.Lock()
        return self._starting

    @property
    def server(self) -> EpisodeServer:
        """The episode's `MCPServer` (built on first use, sharing this episode's lock and tools)."""
        if self._server is None:
            from .server import build_server

            apply_sdk_logging()
            self._server = build_server(self.episode, lock=self.lock, tools=self.tools)
        return self._server

    @property
    def title(self) -> str:
        """The server's title (`serverInfo.title`)."""
        return server_title(self.episode)

    @property
    def tools(self) -> list[Any]:
        """The episode's MCP tools (from the registry, made once per tool set)."""
        if self._tools is None:
            from .server import episode_tools

            self._tools = episode_tools(self.episode)
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """A tool call as the episode's server answers it (`server.call_episode`), without building the server."""
        if self._server is not None:  # built (a session asked for it): its admission setting holds
            return await self._server.call_tool(name, arguments)
        from .server import call_episode

        return await call_episode(self.episode, self.lock, name, arguments)

    async def step_sync(self, since: int, compact: bool = False) -> dict[str, Any] | None:
        """The step's sync a harness asked for with a call (`POST .../step` without a final answer): the events
        from index `since`, count, clock, content hash and the evaluation (`compact`: see `Episode.evaluate`), of
        one state; None once ended."""
        async with self.lock:
            if self.episode.ended:
                return None
            out = self.episode.events_since(since)
            out["evaluation"] = self.episode.evaluate(None, compact)
        return out

    def info_stamp(self) -> dict[str, Any]:
        """The `serverInfo` stamp of the episode's results, the same as its built server's (shared, as the built
        server's is: to be serialized, never changed)."""
        title = self.title
        stamp = _STAMPS.get(title)
        if stamp is None:
            from .server import server_info

            if len(_STAMPS) >= MAX_HASHES_KEPT:
                _STAMPS.pop(next(iter(_STAMPS)))
            stamp = _STAMPS[title] = copy.deepcopy(server_info(title))
        return stamp


_STAMPS: dict[Any, dict[str, Any]] = {}  # server title -> its `serverInfo` stamp


SDK_MAX_BODY = 4 << 20  # the SDK answers a larger body with 413 before it parses anything


class HubError(ValueError):
    """A hub request that cannot be honoured; `status` is the HTTP status that fits."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


async def _sync_record(path: Path) -> None:
    """fsync an ended episode's record off the event loop; a failure is logged, never raised into the hub's
    task group (it would stop every other episode)."""
    try:
        await anyio.to_thread.run_sync(sync_file, path)
    except OSError as e:
        log.warning("could not sync the record %s to disk: %s", path, e)


class EpisodeHub:
    """Creates, serves, forks and ends episodes for the HTTP transport."""

    def __init__(
        self, env: ServedEnvironment | None, source: EnvironmentSource | None, record_dir: str | Path | None,
        host: str = "127.0.0.1", json_response: bool = True, spec_roots: Sequence[str | Path] = (),
        control: ControlOptions | None = None, fast_path: bool = True,
    ) -> None:
        self.env, self.source = env, source
        self.control = control or ControlOptions()
        roots = list(spec_roots)
        if not roots and source is not None and source.kind == "spec":
            roots = [Path(source.ref).parent]
        self.spec_roots = [Path(r).expanduser().resolve() for r in roots]
        self.record_dir = Path(record_dir) if record_dir is not None else None
        self.host = host
        self.json_response = json_response
        self._security: TransportSecuritySettings | None = None
        self._fast_wanted = fast_path and fast_path_enabled()
        self._fast: FastPath | None = None
        self.live: dict[str, LiveEpisode] = {}
        self.ended: dict[str, None] = {}  # ids only (bounded): an ended episode's evaluation is in its record
        self._tg: TaskGroup | None = None
        self._hashes: dict[int, tuple[ServedEnvironment, str]] = {}
        self.pool = EpisodePool()  # environments parsed once, workspaces forked from a template
        self.records = DeferredRecords() if record_after_answer() else None  # records written after the answers

    @property
    def security(self) -> TransportSecuritySettings:
        """The transport security of the MCP endpoints (`transport_security(host)`, made on first use)."""
        if self._security is None:
            self._security = transport_security(self.host)
        return self._security

    @property
    def fast(self) -> FastPath | None:
        """The fast path for sessionless requests (made on first use); None when it is turned off."""
        if self._fast is None and self._fast_wanted:
            from .fastpath import FastPath

            self._fast = FastPath(self.security, self.json_response)
        return self._fast

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator["EpisodeHub"]:
        """Serve episodes while inside; on the way out every live episode is ended and recorded, and every
        ended episode's record is on disk (fsync)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield self
            finally:
                with anyio.CancelScope(shield=True):
                    try:
                        for eid in list(self.live):
                            try:
                                await self.end(eid, None, "user_ended")
                            except Exception:  # one episode's failure must not leave the others unended
                                log.exception("episode %s could not be ended at shutdown", eid)
                    finally:
                        if self.records is not None:  # every queued line written, every fsync done
                            self.records.flush_due()
                            await anyio.to_thread.run_sync(self.records.close)
                self._tg = None

    def spec_source(self, ref: str) -> EnvironmentSource:
        """The source of a spec named by an admin request: a path under one of the spec roots (symlinks and
        '..' resolved first; a relative path is taken from the first root), else a 403 HubError."""
        if not self.spec_roots:
            raise HubError(403, "spec_outside_roots", "this server loads no spec files by path (start it with "
                                                      "--spec-root FOLDER); send spec_document instead")
        if "\0" in ref or len(ref) > 4096:
            raise HubError(400, "malformed_body", "spec must be a path of at most 4096 characters without NUL")
        given = Path(ref).expanduser()
        path = (given if given.is_absolute() else self.spec_roots[0] / given).resolve()
        if not any(path.is_relative_to(root) for root in self.spec_roots):
            roots = ", ".join(str(r) for r in self.spec_roots)
            raise HubError(403, "spec_outside_roots", f"spec {ref!r} is outside the folders this server loads "
                                                      f"specs from ({roots})")
        return EnvironmentSource.spec(path)

    # --- lifecycle -----------------------------------------------------------------------------

    async def create(self, source: EnvironmentSource | None = None, episode_id: str | None = None,
                     env: ServedEnvironment | None = None, control: ControlOptions | None = None) -> LiveEpisode:
        """A new episode of the served environment, of the given source, or of an environment given inline;
        `control` overrides the server's MCP-only default for this episode."""
        if env is None and source is not None:
            env = source.load()
        elif env is None and self.env is not None:
            env, source = self.env, self.source
        elif env is None:
            raise HubError(400, "no_environment", "this server has no default environment; give a spec")
        eid = episode_id or new_episode_id()
        self.check_free(eid, disk=episode_id is not None)  # a fresh random id has no record: the open makes sure
        try:
            episode = Episode(env, eid, source=source, record_dir=self.record_dir, transport="http",
                              env_hash=self._env_hash(env), control=control or self.control,
                              fresh=self.pool.factory(env), record_later=self.records,
                              open_record_later=episode_id is None)
        except RecordExistsError as e:
            raise HubError(409, "record_exists", str(e)) from None
        except EpisodeError as e:
            raise HubError(400, "invalid_episode_id", str(e)) from None
        return await self._serve(episode)

    async def fork(self, episode_id: str, new_id: str | None = None) -> LiveEpisode:
        """A new episode starting from another's current state."""
        parent = self.get(episode_id).episode
        new_id = new_id or new_episode_id()
        self.check_free(new_id)
        try:
            async with self.get(episode_id).lock:
                child = parent.fork(new_id, self.record_dir)
        except RecordExistsError as e:
            raise HubError(409, "record_exists", str(e)) from None
        except EpisodeError as e:
            raise HubError(400, "invalid_episode_id", str(e)) from None
        return await self._serve(child)

    async def end(self, episode_id: str, final_answer: str | None, reason: str | None = None) -> dict[str, Any]:
        """Evaluate an episode, close its record and stop serving it; returns the evaluation."""
        live = self.get(episode_id)
        del self.live[episode_id]
        try:
            async with live.lock:  # after any call in flight
                if live.episode.holds_resources():  # releasing a sandbox container takes a while: off the loop
                    evaluation = await anyio.to_thread.run_sync(live.episode.end, final_answer, reason, False)
                else:  # judged on the loop, as a step's sync is (a hop to a thread costs more than most ends)
                    evaluation = live.episode.end(final_answer, reason, False)
        except Exception as e:
            if live.episode.evaluation is None:
                self.ended[episode_id] = None  # gone all the same: a 410 from now on, not a 404
                raise
            # judged, but its record could not be completed (a full disk): the evaluation still reaches the caller
            log.error("episode %s ended but its record is incomplete: %s", episode_id, e)
            evaluation = {**live.episode.evaluation, "record_error": f"{type(e).__name__}: {e}"}
        finally:
            live.stop.set()  # made here if need be: a session manager still starting stops at once
            path = live.episode.record_path
            if path is not None and self.records is not None:  # written and flushed; on disk shortly after
                self.records.sync_later(path)
            elif path is not None and self._tg is not None:
                self._tg.start_soon(_sync_record, path)
        if live.sessions_started:
            await live.stopped.wait()
        if len(self.ended) >= MAX_ENDED_REMEMBERED:
            self.ended.pop(next(iter(self.ended)))
        self.ended[episode_id] = None
        return evaluation

    def get(self, episode_id: str) -> LiveEpisode:
        """A live episode, or a 404/410 HubError saying it is unknown or has ended."""
        live = self.live.get(episode_id)
        if live is not None:
            return live
        if episode_id in self.ended:
            raise HubError(410, "episode_ended", f"episode {episode_id!r} has ended; create a new one")
        raise HubError(404, "unknown_episode", f"no episode {episode_id!r}; create one with POST /admin/episodes")

    def _env_hash(self, env: ServedEnvironment) -> str:
        known = self._hashes.get(id(env))
        if known is None or known[0] is not env:
            if len(self._hashes) >= MAX_HASHES_KEPT:  # inline specs arrive one per episode: keep a few
                self._hashes.pop(next(iter(self._hashes)))
            known = self._hashes[id(env)] = (env, environment_hash(env))
        return known[1]

    def check_free(self, eid: str, disk: bool = True) -> None:
        """Nothing if `eid` may name a new episode; else a 409 HubError (taken by a live or ended episode, or, with
        `disk`, by a record in the record folder; the record's exclusive open refuses one in any case)."""
        if eid in self.live or eid in self.ended:
            raise HubError(409, "episode_exists", f"episode id {eid!r} is already taken; choose another or omit it")
        if disk and self.record_dir is not None and EPISODE_ID.match(eid) \
                and (self.record_dir / f"{eid}.jsonl").exists():
            raise HubError(409, "record_exists", f"episode id {eid!r} already has a record in {self.record_dir} "
                                                 "(episode ids are unique per record folder); choose another or omit it")

    async def _serve(self, episode: Episode) -> LiveEpisode:
        if self._tg is None:
            raise HubError(503, "not_running", "the episode hub is not running")
        live = LiveEpisode(episode)
        self.live[episode.id] = live
        return live

    async def _sessions(self, live: LiveEpisode) -> Any:
        """The episode's SDK session manager, started on first use."""
        if not live.sessions_started:
            async with live.starting:
                if not live.sessions_started:
                    if self._tg is None:
                        raise HubError(503, "not_running", "the episode hub is not running")
                    live.server.streamable_http_app(streamable_http_path="/", json_response=self.json_response,
                                                    transport_security=self.security)
                    await self._tg.start(self._run_sessions, live)
                    live.sessions_started = True
        return live.server.session_manager

    async def _run_sessions(self, live: LiveEpisode, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        try:
            async with live.server.session_manager.run():
                task_status.started()
                await live.stop.wait()
        finally:
            live.stopped.set()

    # --- MCP requests --------------------------------------------------------------------------

    async def handle_mcp(self, episode_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass one HTTP request to the named episode: a modern tool call or listing to the fast path
        (`mcp_server.fastpath`), anything else to its MCP session manager."""
        from .fastpath import ClientGone, log_hang_up, modern_version, read_prefix, replay

        live = self.get(episode_id)

        async def sdk(scope: Scope, receive: Receive, send: Send) -> None:
            await (await self._sessions(live)).handle_request(scope, receive, send)

        pending = None
        read: tuple[bytes, Any] | None = None  # the body read whole and its parsed JSON, for the fast path
        if scope.get("method") == "POST":
            try:
                body, more = await read_prefix(receive, SDK_MAX_BODY)
            except ClientGone as e:  # one line, never the SDK's traceback (it would also meet an ended episode)
                log_hang_up(f"episode {episode_id}", e)
                return
            if not more:
                try:  # parsed once here: the fast path takes the parsed request (it parsed the body again)
                    read = (body, parse_client_json(body))
                except JsonProblem:
                    await refuse_bad_json(body, send)
                    return
                if await refuse_bad_request(read[1], send):  # a wrong `jsonrpc`, params not an object
                    return
            pending = None if more else session_request(scope, body)
            receive = replay(body, more, receive)
        if self.fast is not None and modern_version(scope) is not None:
            await self.fast.handle(live, scope, receive, send, sdk, read)
            return
        async with live.in_flight.hold(pending, send) as fresh:  # a duplicate in-flight id is refused
            if fresh:
                await sdk(scope, receive, send)
