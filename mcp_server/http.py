"""The streamable-HTTP transport: episodes at `/episodes/{id}/mcp`, a token-protected admin API at `/admin`.

Admin API (every request needs `Authorization: Bearer <token>`; bodies are JSON objects):

    GET    /admin/episodes                       live episodes
    POST   /admin/episodes                       create {"spec"?: path | "spec_document"?: spec object,
                                                 "episode_id"?: id, "mcp_only"?: bool,
                                                 "reveal_score"?: bool} -> 201
    GET    /admin/episodes/{id}                  one episode
    POST   /admin/episodes/{id}/reset            start again from a fresh workspace
    POST   /admin/episodes/{id}/snapshot         -> {"snapshot_id"}
    POST   /admin/episodes/{id}/restore          {"snapshot_id"}
    POST   /admin/episodes/{id}/fork             {"episode_id"?} -> 201, the new episode
    POST   /admin/episodes/{id}/evaluate         {"final_answer"?} -> evaluation (episode goes on)
    POST   /admin/episodes/{id}/end              {"final_answer"?, "reason"?, "next"?} -> evaluation (recorded;
                                                 episode ends); with "next" (a create's options; without a spec,
                                                 this episode's environment) the next episode is created in the
                                                 same request: the evaluation plus "next", what a create answers
    DELETE /admin/episodes/{id}                  same as end, without an answer
    GET    /admin/episodes/{id}/log              the record's lines
    GET    /admin/episodes/{id}/state            records and content hash
    GET    /admin/episodes/{id}/events?since=N   workspace events from index N, event count, clock, content hash
    POST   /admin/episodes/{id}/step             {"since"?: N, "final_answer"?, "compact"?: bool} -> the events
                                                 answer plus "evaluation" (compact: passed, score, each result's
                                                 passed and weight, stages): a harness's per-step sync in one request
    POST   /admin/episodes/{id}/message          {"role": "user"|"assistant", "content", "step_since"?: N,
                                                 "step_compact"?: bool, "step_final_answer"?} -> the logged event
                                                 (with step_since: {"event", "step": as .../step, judged with
                                                 step_final_answer})
    POST   /admin/episodes/{id}/world            {"changes": [...], "note"?} -> the world event (400 bad_world_change)
    POST   /admin/episodes/{id}/clock            {"seconds"} -> {"now"}: move the simulated clock forward
    POST   /admin/episodes/{id}/stage            {"stage"} -> the stage event: a working day closes (400 bad_stage)

The last five let a remote harness (`coworkenv run --connect`) play the user and the world: user
replies that confirmation policies read, world events, clock moves, the close of each working day
of a multi-day scenario; none is offered to the agent. Evaluations (evaluate, end) carry `stages`,
the per-day verdicts, when the environment has stages.

Errors are JSON `{"error": {"code", "message"}}` with a fitting status: 401 missing token,
403 wrong token, 400 malformed body, 404 unknown episode or route, 405 wrong method, 409 taken id,
410 ended episode, 413 body too large.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import re
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from workspace_sim.core.errors import SpecError
from workspace_sim.record import RecordReadError, read_record_file

from .control import ControlOptions
from .environment import EnvironmentLoadError, EnvironmentSource, ServedEnvironment
from .episode import EPISODE_ID, EpisodeError
from .hub import EpisodeHub, HubError, LiveEpisode
from .jsoncheck import JsonProblem, parse_client_json, request_id

log = logging.getLogger("coworkenv.mcp.http")
MAX_BODY = 1 << 20
Handler = Callable[[Request], Awaitable[Response]]


STOP_REASON = re.compile(r"^[a-z][a-z_]{0,31}$")


def error(status: int, code: str, message: str, headers: dict[str, str] | None = None,
          **extra: Any) -> JSONResponse:
    """A JSON error response (`extra` fields go into the error object, e.g. the JSON path of a bad change)."""
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status, headers=headers)


async def read_body(request: Request, allowed: dict[str, type | tuple[type, ...]]) -> dict[str, Any]:
    """The request's JSON object body (empty allowed), checked against the allowed fields and their types."""
    raw = b""
    while True:  # what `request.stream()` does, without an async generator per request
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        raw += message.get("body", b"")
        if len(raw) > MAX_BODY:
            raise HubError(413, "body_too_large", f"request body over {MAX_BODY} bytes")
        if not message.get("more_body", False):
            break
    if raw == b"{}" or not raw.strip():  # what a harness sends most
        return {}
    try:
        body = parse_client_json(raw)
    except JsonProblem as e:
        raise HubError(400, "malformed_body", f"body refused: {e.message}") from None
    if not isinstance(body, dict):
        raise HubError(400, "malformed_body", f"body must be a JSON object, got {type(body).__name__}")
    return check_fields(body, allowed)


def check_fields(body: dict[str, Any], allowed: dict[str, type | tuple[type, ...]], where: str = "") -> dict[str, Any]:
    """`body` when it has only the allowed fields, each of its type (None counts as absent), else a 400 HubError
    naming the field (`where` prefixes the names of a nested object's fields, e.g. "next.")."""
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        fields = ", ".join(where + a for a in allowed) or "none"
        raise HubError(400, "malformed_body", f"unknown field(s) {', '.join(where + u for u in unknown)}; "
                                              f"allowed: {fields}")
    for name, typ in allowed.items():
        if name in body and body[name] is not None and not isinstance(body[name], typ):
            want = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
            raise HubError(400, "malformed_body", f"field {where}{name} must be {want}, got "
                                                  f"{type(body[name]).__name__}")
    return body


def describe(live: LiveEpisode, request: Request | None = None) -> dict[str, Any]:
    """What the admin API says about a live episode."""
    ep = live.episode
    path = f"/episodes/{ep.id}/mcp"
    out = {"episode_id": ep.id, "env_id": ep.env.id, "title": ep.env.title, "mcp_path": path,
           "mcp_only": ep.control is not None,
           "env_hash": ep.env_hash, "segment": ep.segment_id, "calls": len(ep.workspace.events()),
           "snapshots": list(ep.snapshots),
           "record": str(ep.record_path) if ep.record_path else None}
    if request is not None:
        out["mcp_url"] = _base_url(request) + path
    return out


_BASES: dict[tuple[Any, ...], str] = {}


def _base_url(request: Request) -> str:
    """`str(request.base_url)` without its trailing slash, kept per scheme, server, root path and Host header."""
    scope = request.scope
    server = scope.get("server")  # a (host, port) pair; ASGI lets it be a list (Starlette's TestClient sends one)
    key = (scope.get("scheme"), tuple(server) if server is not None else None, scope.get("root_path"),
           scope.get("app_root_path"), tuple(bytes(v) for k, v in scope["headers"] if k == b"host"))
    base = _BASES.get(key)
    if base is None:
        if len(_BASES) >= 64:
            _BASES.pop(next(iter(_BASES)))
        base = _BASES[key] = str(request.base_url).rstrip("/")
    return base


CREATE_FIELDS: dict[str, type | tuple[type, ...]] = {"spec": str, "spec_document": dict, "episode_id": str,
                                                     "mcp_only": bool, "reveal_score": bool}


def created(live: LiveEpisode, request: Request) -> dict[str, Any]:
    """What a create answers: the episode, and `start`, what a harness syncs first (events, clock, content hash)."""
    out = describe(live, request)
    out["start"] = live.episode.events_since(0)
    return out


STEP_FIELDS: dict[str, type | tuple[type, ...]] = {"step_since": int, "step_compact": bool, "step_final_answer": str}


def step_since(body: dict[str, Any]) -> int | None:
    """The `step_since` of a harness's request (the step's sync wanted in the same answer), checked; or None."""
    since = body.get("step_since")
    if since is not None and (isinstance(since, bool) or not 0 <= since < 10**18):
        raise HubError(400, "malformed_body", f"step_since must be a whole number of at least 0, got {since!r}")
    return since


def step_of(live: LiveEpisode, since: int, body: dict[str, Any]) -> dict[str, Any]:
    """The step's sync as `POST .../step` answers it, judged with `step_final_answer` if given (under the episode's
    lock)."""
    step = live.episode.events_since(since)
    step["evaluation"] = live.episode.evaluate(body.get("step_final_answer"), bool(body.get("step_compact")))
    return step


def episode_control(hub: EpisodeHub, body: dict[str, Any]) -> ControlOptions | None:
    """The MCP-only options of a create request: the server's default with `mcp_only`/`reveal_score` applied."""
    if body.get("mcp_only") is None and body.get("reveal_score") is None:
        return None
    base = hub.control
    enabled = base.enabled if body.get("mcp_only") is None else body["mcp_only"]
    reveal = base.reveal_score if body.get("reveal_score") is None else body["reveal_score"]
    if reveal and not enabled:
        raise HubError(400, "malformed_body", "reveal_score applies to MCP-only episodes: give mcp_only true too")
    return ControlOptions(enabled, reveal, base.user)


class AdminApi:
    """The admin routes over a hub, each behind the bearer token."""

    def __init__(self, hub: EpisodeHub, token: str) -> None:
        if len(token) < 16:
            raise ValueError("the admin token must be at least 16 characters")
        self.hub, self.token = hub, token

    def guard(self, handler: Handler) -> Handler:
        """Wrap a handler with the token check and the translation of errors into JSON responses."""

        async def wrapped(request: Request) -> Response:
            auth = request.headers.get("authorization", "")
            scheme, _, given = auth.partition(" ")
            if not auth:
                return error(401, "missing_token", "send the admin token as 'Authorization: Bearer <token>'",
                             {"WWW-Authenticate": "Bearer"})
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token.encode()):
                return error(403, "bad_token", "the admin token is wrong")
            try:
                return await handler(request)
            except HubError as e:
                return error(e.status, e.code, e.message)
            except EnvironmentLoadError as e:
                return error(400, "bad_environment", str(e))
            except SpecError as e:  # a world change that does not apply; nothing was changed
                return error(400, "bad_world_change", str(e), path=e.path, problem=e.problem)
            except EpisodeError as e:
                return error(409, "episode_conflict", str(e))
            except Exception as e:  # an admin request must never take the server down
                log.exception("admin request %s %s failed", request.method, request.url.path)
                return error(500, "internal_error", f"{type(e).__name__}: {e}")

        return wrapped

    def routes(self) -> list[Route]:
        """The admin routes."""
        g = self.guard
        p = "/admin/episodes"
        # a training loop's requests first (the router tries each route's pattern in turn); no two routes share
        # a path and a method, so the order changes nothing else
        return [
            Route(p + "/{eid}/end", g(self.end), methods=["POST"]),
            Route(p, g(self.create), methods=["POST"]),
            Route(p + "/{eid}/message", g(self.message), methods=["POST"]),
            Route(p + "/{eid}/step", g(self.step), methods=["POST"]),
            Route(p + "/{eid}/reset", g(self.reset), methods=["POST"]),
            Route(p + "/{eid}/evaluate", g(self.evaluate), methods=["POST"]),
            Route(p + "/{eid}/world", g(self.world), methods=["POST"]),
            Route(p + "/{eid}/clock", g(self.clock), methods=["POST"]),
            Route(p + "/{eid}/stage", g(self.stage), methods=["POST"]),
            Route(p, g(self.list_episodes), methods=["GET"]),
            Route(p + "/{eid}", g(self.show), methods=["GET"]),
            Route(p + "/{eid}", g(self.delete), methods=["DELETE"]),
            Route(p + "/{eid}/snapshot", g(self.snapshot), methods=["POST"]),
            Route(p + "/{eid}/restore", g(self.restore), methods=["POST"]),
            Route(p + "/{eid}/fork", g(self.fork), methods=["POST"]),
            Route(p + "/{eid}/log", g(self.log), methods=["GET"]),
            Route(p + "/{eid}/state", g(self.state), methods=["GET"]),
            Route(p + "/{eid}/events", g(self.events), methods=["GET"]),
        ]

    async def list_episodes(self, request: Request) -> Response:
        return JSONResponse({"episodes": [describe(live, request) for live in self.hub.live.values()]})

    async def _environment(self, body: dict[str, Any], where: str = "") -> tuple[EnvironmentSource | None,
                                                                                ServedEnvironment | None]:
        """The source and environment a create's options name (both None: the default), loaded."""
        if body.get("spec") and body.get("spec_document") is not None:
            raise HubError(400, "malformed_body", f"give either {where}spec (a path on the server) or "
                                                  f"{where}spec_document, not both")
        source = self.hub.spec_source(body["spec"]) if body.get("spec") else None
        env = self.hub.pool.environment(body["spec_document"]) if body.get("spec_document") is not None else None
        if source is not None:
            try:
                env = await anyio.to_thread.run_sync(source.load)
            except EnvironmentLoadError as e:  # the file's text must never reach the client: log it, say where
                log.warning("admin: spec %s did not load: %s", source.ref, e)
                raise HubError(400, "bad_environment", f"{where}spec {body['spec']!r} is not a loadable environment "
                                                       "spec (the server log says why)") from None
        return source, env

    async def create(self, request: Request) -> Response:
        body = await read_body(request, CREATE_FIELDS)
        source, env = await self._environment(body)
        live = await self.hub.create(source, body.get("episode_id"), env=env, control=episode_control(self.hub, body))
        return JSONResponse(created(live, request), status_code=201)

    async def show(self, request: Request) -> Response:
        return JSONResponse(describe(self.hub.get(request.path_params["eid"]), request))

    async def reset(self, request: Request) -> Response:
        await read_body(request, {})
        live = self.hub.get(request.path_params["eid"])
        async with live.lock:  # never between a tool call and its event
            live.episode.reset()
        return JSONResponse(describe(live, request))

    async def snapshot(self, request: Request) -> Response:
        await read_body(request, {})
        live = self.hub.get(request.path_params["eid"])
        return JSONResponse({"episode_id": live.episode.id, "snapshot_id": live.episode.snapshot()})

    async def restore(self, request: Request) -> Response:
        body = await read_body(request, {"snapshot_id": str})
        if not body.get("snapshot_id"):
            raise HubError(400, "malformed_body", "give the snapshot_id to restore")
        live = self.hub.get(request.path_params["eid"])
        try:
            live.episode.restore(body["snapshot_id"])
        except EpisodeError as e:
            raise HubError(404, "unknown_snapshot", str(e)) from None
        return JSONResponse(describe(live, request))

    async def fork(self, request: Request) -> Response:
        body = await read_body(request, {"episode_id": str})
        live = await self.hub.fork(request.path_params["eid"], body.get("episode_id"))
        return JSONResponse(describe(live, request), status_code=201)

    async def evaluate(self, request: Request) -> Response:
        body = await read_body(request, {"final_answer": str})
        live = self.hub.get(request.path_params["eid"])
        return JSONResponse(live.episode.evaluate(body.get("final_answer")))

    async def end(self, request: Request) -> Response:
        body = await read_body(request, {"final_answer": str, "reason": str, "next": dict})
        reason = body.get("reason")
        if reason is not None and not STOP_REASON.match(reason):
            raise HubError(400, "malformed_body", f"reason must be a stop reason such as 'answered' or "
                                                  f"'max_turns' (lowercase letters and '_'), got {reason!r}")
        eid = request.path_params["eid"]
        if body.get("next") is None:
            return JSONResponse(await self.hub.end(eid, body.get("final_answer"), reason))
        # end-and-next: everything the next episode needs is checked before this one ends
        options = check_fields(body["next"], CREATE_FIELDS, "next.")
        ended = self.hub.get(eid).episode
        source, env = await self._environment(options, "next.")
        if env is None:  # the ended episode's environment, not the server's default
            source, env = ended.source, ended.env
        next_id = options.get("episode_id")
        if next_id is not None:
            if not EPISODE_ID.match(next_id):
                raise HubError(400, "invalid_episode_id", f"next.episode_id must be 1-64 letters, digits, '-' or '_' "
                                                          f"(starting with a letter or digit), got {next_id!r}")
            self.hub.check_free(next_id)
        control = episode_control(self.hub, options)
        evaluation = await self.hub.end(eid, body.get("final_answer"), reason)
        try:
            live = await self.hub.create(source, next_id, env=env, control=control)
        except HubError as e:  # rare (a record appeared meanwhile): the evaluation must still reach the client
            return error(e.status, e.code, f"episode {eid!r} ended (its evaluation is in 'evaluation') but the next "
                                           f"one was not created: {e.message}", evaluation=evaluation)
        except Exception as e:  # the record folder refusing the new file, and the like: the same, as a 500
            log.exception("episode %s ended; its next episode could not be created", eid)
            return error(500, "next_not_created", f"episode {eid!r} ended (its evaluation is in 'evaluation') but "
                                                  f"the next one was not created: {type(e).__name__}: {e}",
                         evaluation=evaluation)
        return JSONResponse({**evaluation, "next": created(live, request)})

    async def delete(self, request: Request) -> Response:
        return JSONResponse(await self.hub.end(request.path_params["eid"], None))

    async def log(self, request: Request) -> Response:
        eid = request.path_params["eid"]
        live = self.hub.get(eid)
        path = live.episode.record_path
        if path is None:
            raise HubError(404, "no_record", f"episode {eid!r} is not recorded (the server runs without a record folder)")
        live.episode.flush_record()
        try:
            rec = read_record_file(path)
        except RecordReadError as e:
            raise HubError(500, "record_unreadable", str(e)) from None
        segments = [{"header": s.header, "events": s.events, "final": s.final} for s in rec.segments]
        return JSONResponse({"episode_id": eid, "record": str(path), "segments": segments, "skipped": rec.skipped})

    async def state(self, request: Request) -> Response:
        return JSONResponse(self.hub.get(request.path_params["eid"]).episode.state_summary())

    async def events(self, request: Request) -> Response:
        raw = request.query_params.get("since", "0")
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
            raise HubError(400, "malformed_query", f"since must be a whole number of at least 0, got {raw!r}")
        live = self.hub.get(request.path_params["eid"])
        async with live.lock:  # never between a tool call and its event
            return JSONResponse(live.episode.events_since(int(raw)))

    async def step(self, request: Request) -> Response:
        body = await read_body(request, {"since": int, "final_answer": str, "compact": bool})
        since = body.get("since", 0)
        if isinstance(since, bool) or not isinstance(since, int) or not 0 <= since < 10**18:
            raise HubError(400, "malformed_body", f"since must be a whole number of at least 0, got {since!r}")
        live = self.hub.get(request.path_params["eid"])
        async with live.lock:  # the events and the judgement of one and the same state
            out = live.episode.events_since(since)
            out["evaluation"] = live.episode.evaluate(body.get("final_answer"), bool(body.get("compact")))
        return JSONResponse(out)

    async def message(self, request: Request) -> Response:
        body = await read_body(request, {"role": str, "content": str, **STEP_FIELDS})
        if body.get("role") not in ("user", "assistant") or body.get("content") is None:
            raise HubError(400, "malformed_body", "give role ('user' or 'assistant') and content (a string)")
        since = step_since(body)
        live = self.hub.get(request.path_params["eid"])
        async with live.lock:
            event = live.episode.add_message(body["role"], body["content"])
            if since is None:
                return JSONResponse(event)
            return JSONResponse({"event": event, "step": step_of(live, since, body)})

    async def world(self, request: Request) -> Response:
        body = await read_body(request, {"changes": list, "note": str})
        if body.get("changes") is None:
            raise HubError(400, "malformed_body", "give changes: a list of {op: put|patch|delete, table, ...}")
        live = self.hub.get(request.path_params["eid"])
        async with live.lock:
            return JSONResponse(live.episode.apply_world_change(body["changes"], body.get("note") or ""))

    async def clock(self, request: Request) -> Response:
        body = await read_body(request, {"seconds": (int, float)})
        seconds = body.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < 1e9:
            raise HubError(400, "malformed_body", f"seconds must be a number from 0 to 1e9, got {seconds!r}")
        live = self.hub.get(request.path_params["eid"])
        async with live.lock:
            return JSONResponse({"episode_id": live.episode.id, "now": live.episode.advance_clock(float(seconds))})


    async def stage(self, request: Request) -> Response:
        body = await read_body(request, {"stage": str})
        if not body.get("stage"):
            raise HubError(400, "malformed_body", "give stage: the id of the stage (working day) to close")
        live = self.hub.get(request.path_params["eid"])
        async with live.lock:
            try:
                return JSONResponse(live.episode.close_stage(body["stage"]))
            except EpisodeError as e:
                if live.episode.ended:
                    raise
                raise HubError(400, "bad_stage", str(e)) from None


class McpEndpoint:
    """ASGI endpoint for `/episodes/{id}/mcp`: hands the request to that episode, or answers 404/410."""

    def __init__(self, hub: EpisodeHub) -> None:
        self.hub = hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        eid = scope.get("path_params", {}).get("eid", "")
        try:
            await self.hub.handle_mcp(eid, scope, receive, send)
        except HubError as e:
            rid = await _request_id(receive) if scope.get("method") == "POST" else None
            body = {"jsonrpc": "2.0", "id": rid,
                    "error": {"code": -32001, "message": f"{e.message} (HTTP {e.status} {e.code})",
                              "data": {"status": e.status, "code": e.code}}}
            await JSONResponse(body, status_code=e.status)(scope, receive, send)


async def _request_id(receive: Receive) -> str | int | None:
    """The JSON-RPC id of the request body still to be read (None if it has none or is not JSON-RPC)."""
    raw = b""
    while len(raw) <= MAX_BODY:
        message = await receive()
        raw += message.get("body", b"")
        if not message.get("more_body"):
            break
    else:
        return None
    try:
        return request_id(parse_client_json(raw))
    except JsonProblem as e:  # parsed but refused (too deep, a lone surrogate): its id can still be answered
        return request_id(e.value)


async def _json_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return error(404, "no_route", f"no route {request.method} {request.url.path}; MCP lives at "
                                      "/episodes/{id}/mcp and the admin API under /admin/episodes")
    if exc.status_code == 405:
        return error(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}")
    return error(exc.status_code, "http_error", str(exc.detail))


class FlushRecords:
    """ASGI middleware: once a request has been answered, the record lines it queued are written
    (`recording.DeferredRecords`), so no answer waits for its own record lines."""

    def __init__(self, app: Any, hub: EpisodeHub) -> None:
        self.app, self.hub = app, hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            if self.hub.records is not None:
                self.hub.records.flush_due()


def build_app(hub: EpisodeHub, token: str, default_episode: str | None = None) -> Starlette:
    """The Starlette app: episodes' MCP endpoints and the admin API; the hub runs for the app's lifetime."""
    admin = AdminApi(hub, token)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with hub.run():
            if default_episode:
                await hub.create(None, default_episode)
            yield

    mcp = Route("/episodes/{eid}/mcp", McpEndpoint(hub))
    app = Starlette(routes=[mcp, *admin.routes()], lifespan=lifespan, middleware=[Middleware(FlushRecords, hub=hub)],
                    exception_handlers={404: _json_http_error, 405: _json_http_error})
    return McpShortcut(app, mcp, hub)  # type: ignore[return-value]  (a Starlette app in every way that is used)


class McpShortcut:
    """ASGI front of the app: a request for an episode's MCP endpoint goes straight to it, past Starlette's two
    exception middlewares, `FlushRecords` and the router, which cost a call tens of microseconds in process
    (a tool call is most of what a training loop sends). It is what Starlette would do for that path: the
    route's own pattern matches, the scope gets the `app`, `router`, `endpoint` and `path_params` Starlette
    gives it, the records are flushed after the answer, and an exception is answered 500 `Internal Server
    Error` when nothing was sent yet and raised on, as `ServerErrorMiddleware` does (nothing under the endpoint
    raises `HTTPException`, the one thing the other middleware turns into an answer). Anything else,
    lifespan included, is the Starlette app's; attributes (`state`, `routes`, ...) are read through to it."""

    def __init__(self, app: Starlette, route: Route, hub: EpisodeHub) -> None:
        self.app, self.route, self.hub = app, route, hub
        self._pattern, self._endpoint = route.path_regex, route.endpoint

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self._pattern.match(scope["path"]) if scope["type"] == "http" and not scope.get("root_path") \
            else None
        if found is None:
            await self.app(scope, receive, send)
            return
        scope["app"] = self.app
        scope.setdefault("router", self.app.router)
        scope["endpoint"] = self._endpoint
        scope["path_params"] = {**scope.get("path_params", {}), "eid": found["eid"]}
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self._endpoint(scope, receive, tracked)
        except Exception:
            if not started:
                await PlainTextResponse("Internal Server Error", status_code=500)(scope, receive, send)
            raise
        finally:
            if self.hub.records is not None:
                self.hub.records.flush_due()
