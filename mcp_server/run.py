"""Running the server: stdio (one episode) or streamable HTTP (many), with logging kept off stdout."""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Sequence

import anyio

from .control import ControlOptions
from .environment import EnvironmentSource, ServedEnvironment
from .episode import EPISODE_ID, Episode
from .first_answer import PreRead, claim_stdin, first_answer, first_answer_enabled, write_answer
from .sdklog import apply as apply_sdk_logging
from .sdklog import own_sdk_logging  # noqa: F401 (callers import it from here)

if TYPE_CHECKING:
    import socket

log = logging.getLogger("coworkenv.mcp")


def configure_logging(level: str = "WARNING", log_file: str | Path | None = None) -> None:
    """Send all logging to stderr or a file, never stdout (stdout carries the stdio protocol)."""
    handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level.upper())


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


SHUTDOWN_GRACE_S = 3  # seconds open requests get to finish after SIGINT/SIGTERM before they are dropped


def accept_stop_signals() -> None:
    """Unblock the stop signals, which a server inherits blocked when a threaded parent (a Ray worker) starts
    it; blocked, SIGINT and SIGTERM would stay pending and the server could only be killed, unrecorded."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


async def _serve_until_signal(episode: Episode, log_level: str, stdin: BinaryIO | None = None,
                              answered: tuple[Any, bytes] | None = None) -> None:
    from .server import build_server
    from .stdio import checked_stdio_server

    apply_sdk_logging()
    server = build_server(episode, log_level=log_level)
    async with anyio.create_task_group() as tg:
        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
                async for sig in signals:
                    _end_and_exit(episode, sig)

        tg.start_soon(stop_on_signal)
        lowlevel = server._lowlevel_server  # what EpisodeServer.run_stdio runs, on a stdin already taken over
        async with checked_stdio_server(stdin, answered) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        tg.cancel_scope.cancel()


def _end_and_exit(episode: Episode, sig: Any) -> None:
    # the stdio reader blocks in a thread that cannot be cancelled, so end the
    # episode (final line written, record closed) and leave at once
    log.warning("received signal %s; ending episode %s", sig, episode.id)
    episode.end()
    logging.shutdown()
    os._exit(0)


MAX_FIRST_LINE = 1 << 20  # a longer first line is the SDK's to answer (read on, not answered early)


def run_stdio(
    env: ServedEnvironment, source: EnvironmentSource | None, record_dir: str | Path | None,
    episode_id: str | None = None, log_level: str = "WARNING", control: ControlOptions | None = None,
) -> dict[str, Any]:
    """Serve one episode over stdin/stdout until the client disconnects (or SIGTERM); returns its evaluation.

    The client's first request is answered before the `mcp` SDK is loaded when `mcp_server.first_answer`
    can answer it exactly as the SDK would (a cold start's first answer without the SDK's import time).
    Without MCP-only control that answer needs only the environment and its start workspace, so it is written
    before the episode opens its record (whose header builds every tool's argument model and schema); a stop
    signal at any point still ends and records the episode. With `control` enabled the episode is MCP-only: the
    agent asks the user and submits its answer itself."""
    accept_stop_signals()
    enabled = control is not None and control.enabled
    ahead = first_answer_enabled() and not enabled and not _refused_at_open(record_dir, episode_id)
    workspace = env.build_workspace() if ahead else None
    made: list[Episode] = []

    def episode_now() -> Episode:
        if not made:  # signals are blocked while it is made (see below), so a handler never makes a second
            made.append(Episode(env, episode_id, source=source, record_dir=record_dir, transport="stdio",
                                control=control, workspace=workspace))
            log.info("episode %s of %s; record %s", made[0].id, env.id, made[0].record_path)
        return made[0]

    def open_episode() -> Episode:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            return episode_now()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    if not ahead:
        open_episode()
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:  # until the server loop listens for them (anyio's receiver replaces these)
        signal.signal(sig, lambda signum, frame: _end_and_exit(episode_now(), signal.Signals(signum)))
    stdin, restore = claim_stdin()
    try:
        answered = None
        if first_answer_enabled():
            line = stdin.readline(MAX_FIRST_LINE)
            if line.endswith(b"\n"):
                answered = first_answer(line, _Ahead(env, workspace) if ahead else episode_now())
            if answered is not None:
                write_answer(answered[1])
            stdin = PreRead(line, stdin)  # type: ignore[assignment]
        episode = open_episode()
        own_sdk_logging()
        anyio.run(_serve_until_signal, episode, log_level, stdin, answered)
    except KeyboardInterrupt:
        pass
    finally:
        restore()
        for sig, handler in before.items():
            signal.signal(sig, handler)
        if made:  # (when the episode could not open, its error goes on up)
            evaluation = made[0].end()
    if not made:  # interrupted before it opened: open and end it, recorded as any other
        evaluation = open_episode().end()
    log.info("episode %s ended: score %s", made[0].id, evaluation.get("score"))
    return evaluation


class _Ahead:
    """What the first answer reads of an episode not opened yet: its environment, start workspace, no control."""

    def __init__(self, env: ServedEnvironment, workspace: Any) -> None:
        self.env, self.workspace, self.control = env, workspace, None


def _refused_at_open(record_dir: str | Path | None, episode_id: str | None) -> bool:
    """Whether the episode would refuse to open (a malformed id, or its record is already there): it is then
    opened, and refused, before any answer."""
    if episode_id is not None and not EPISODE_ID.match(episode_id):
        return True
    return record_dir is not None and episode_id is not None and (Path(record_dir) / f"{episode_id}.jsonl").exists()


class ListenError(RuntimeError):
    """An address the server cannot listen on (taken, not ours, not an address); the message says which."""


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (0: a free port), with TCP_NODELAY for the connections it accepts."""
    import socket  # here: a stdio server never needs it

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted connections inherit this; without it small responses wait ~40 ms on delayed ACKs
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as e:
        sock.close()
        import errno

        hint = ("; pass --port 0 for a free port (the server prints its URL), or stop what holds this one"
                if e.errno == errno.EADDRINUSE and port else "")
        raise ListenError(f"cannot listen on {host}:{port}: {e.strerror or e}{hint}") from None
    return sock


def base_url(host: str, sock: socket.socket) -> str:
    """The base URL clients use for a listening socket."""
    return f"http://{host if ':' not in host else f'[{host}]'}:{sock.getsockname()[1]}"


def run_http(
    env: ServedEnvironment | None, source: EnvironmentSource | None, record_dir: str | Path | None,
    host: str = "127.0.0.1", port: int = 8765, token: str | None = None, default_episode: str | None = None,
    log_level: str = "WARNING", json_response: bool = True, spec_roots: Sequence[str | Path] = (),
    control: ControlOptions | None = None, workers: int = 1, log_file: str | Path | None = None,
) -> None:
    """Serve episodes over streamable HTTP until interrupted; live episodes are ended and recorded on the way out.

    `control` is the default for created episodes (an admin create may turn MCP-only on or off per
    episode). `workers` > 1 serves from that many processes, each a whole server on its own port
    (`port`, `port + 1`, ...; free ones with 0) sharing the token and record folder; see
    `run_http_workers`.
    """
    if token is None:
        token = secrets.token_urlsafe(24)
        print(f"coworkenv: admin token (generated): {token}", file=sys.stderr, flush=True)
    if workers > 1:
        if source is None:
            raise ValueError("several workers need an environment source (a spec or --python) each can load")
        if default_episode:
            raise ValueError("--default-episode needs a single worker: an episode id lives on one server")
        if control is not None and control.user is not None:
            raise ValueError("--user llm needs a single worker (each worker would need its own user endpoint)")
        run_http_workers(source, record_dir, host, port, token, log_level, json_response, spec_roots, workers,
                         log_file, control)
        return
    sock = listen(host, port)
    base = base_url(host, sock)
    print(f"coworkenv: listening on {base} (MCP at {base}/episodes/<id>/mcp, admin at {base}/admin/episodes)",
          file=sys.stderr, flush=True)
    serve_socket(sock, env, source, record_dir, host, token, default_episode, log_level, json_response, spec_roots,
                 control)


def serve_socket(
    sock: socket.socket, env: ServedEnvironment | None, source: EnvironmentSource | None,
    record_dir: str | Path | None, host: str, token: str, default_episode: str | None = None,
    log_level: str = "WARNING", json_response: bool = True, spec_roots: Sequence[str | Path] = (),
    control: ControlOptions | None = None,
) -> None:
    """Serve the HTTP app on an already listening socket until interrupted (SIGINT or SIGTERM)."""
    from .http import build_app
    from .hub import EpisodeHub

    own_sdk_logging()
    accept_stop_signals()
    hub = EpisodeHub(env, source, record_dir, host=host, json_response=json_response, spec_roots=spec_roots,
                     control=control)
    app = build_app(hub, token, default_episode)
    # a connection still open at a stop signal gets SHUTDOWN_GRACE_S, then is dropped; the lifespan's end then
    # ends and records every live episode, so SIGINT always stops the server with every record whole
    # ws="none": nothing here speaks WebSocket (an upgrade request is answered as plain HTTP, by the routes'
    # 404/405), and uvicorn's default would import a WebSocket library at every start (~20-40 ms of a cold start)
    # uvicorn without its command line (mcp_server.uvicorn_lean: click and the reload supervisors are ~30 ms)
    from .uvicorn_lean import config_and_server

    config_class, server_class = config_and_server()
    config = config_class(app, log_level=log_level.lower(), lifespan="on", access_log=False, ws="none",
                          timeout_graceful_shutdown=SHUTDOWN_GRACE_S)
    server_class(config).run(sockets=[sock])


def run_http_workers(
    source: EnvironmentSource, record_dir: str | Path | None, host: str, port: int, token: str,
    log_level: str, json_response: bool, spec_roots: Sequence[str | Path], workers: int,
    log_file: str | Path | None = None, control: ControlOptions | None = None,
) -> None:
    """Serve from `workers` processes, one port each, and wait for them; SIGINT/SIGTERM stop them all.

    This process binds every port first (so a port in use fails here, before anything starts),
    then hands each socket to a worker process (`python -m mcp_server.worker`), which loads the
    environment and serves a whole hub on it. Episodes are not shared between workers: a client
    spreads them by id over the URLs printed here (`coworkenv run --connect URL1,URL2,...`), which
    keeps every MCP request of an episode on the process that holds its workspace. Workers share
    the admin token, the record folder (episode ids are unique per record folder: the hubs refuse
    an id whose record exists, and generated ids are random) and the MCP-only defaults (`control`;
    an LLM user is refused before this, since its endpoint settings do not travel).
    """
    import subprocess

    socks: list[socket.socket] = []
    try:
        for i in range(workers):
            socks.append(listen(host, 0 if port == 0 else port + i))
    except ListenError:
        for sock in socks:
            sock.close()
        raise
    urls = [base_url(host, s) for s in socks]
    config = {"source": source.to_json(), "record_dir": str(record_dir) if record_dir is not None else None,
              "host": host, "log_level": log_level, "json_response": json_response,
              "spec_roots": [str(r) for r in spec_roots], "log_file": str(log_file) if log_file else None,
              "control": (control or ControlOptions()).to_json()}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i, sock in enumerate(socks):
            env = {**os.environ, "COWORKENV_ADMIN_TOKEN": token, "COWORKENV_WORKER_FD": str(sock.fileno()),
                   "COWORKENV_WORKER": json.dumps({**config, "index": i})}
            procs.append(subprocess.Popen([sys.executable, "-m", "mcp_server.worker"], env=env,
                                          pass_fds=[sock.fileno()], stdin=subprocess.DEVNULL))
        for sock in socks:
            sock.close()  # the workers hold them now
        for i, url in enumerate(urls):
            print(f"coworkenv: worker {i} listening on {url} (MCP at {url}/episodes/<id>/mcp, admin at "
                  f"{url}/admin/episodes)", file=sys.stderr, flush=True)
        print(f"coworkenv: {workers} workers; spread episodes over them with: coworkenv run --connect "
              f"{','.join(urls)}", file=sys.stderr, flush=True)

        def stop(signum: int, frame: Any) -> None:
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)

        for sig in STOP_SIGNALS:
            signal.signal(sig, stop)
        accept_stop_signals()
        for i, p in enumerate(procs):
            code = p.wait()
            if code not in (0, -signal.SIGTERM, -signal.SIGINT):
                log.error("worker %d (%s) exited with status %s", i, urls[i], code)
    finally:
        for sock in socks:
            sock.close()
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
