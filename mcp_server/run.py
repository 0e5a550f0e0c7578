"""Running the server: stdio (one episode) or streamable HTTP (many), with logging kept off stdout."""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import sys
from pathlib import Path
from typing import Any, Sequence

import anyio

from .control import ControlOptions
from .environment import EnvironmentSource, ServedEnvironment
from .episode import Episode
from .server import build_server

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


async def _serve_until_signal(episode: Episode, log_level: str) -> None:
    server = build_server(episode, log_level=log_level)
    async with anyio.create_task_group() as tg:
        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
                async for sig in signals:
                    # the stdio reader blocks in a thread that cannot be cancelled, so end the
                    # episode (final line written, record closed) and leave at once
                    log.warning("received signal %s; ending episode %s", sig, episode.id)
                    episode.end()
                    logging.shutdown()
                    os._exit(0)

        tg.start_soon(stop_on_signal)
        await server.run_stdio()
        tg.cancel_scope.cancel()


def run_stdio(
    env: ServedEnvironment, source: EnvironmentSource | None, record_dir: str | Path | None,
    episode_id: str | None = None, log_level: str = "WARNING", control: ControlOptions | None = None,
) -> dict[str, Any]:
    """Serve one episode over stdin/stdout until the client disconnects (or SIGTERM); returns its evaluation.

    With `control` enabled the episode is MCP-only: the agent asks the user and submits its answer itself."""
    episode = Episode(env, episode_id, source=source, record_dir=record_dir, transport="stdio", control=control)
    log.info("episode %s of %s; record %s", episode.id, env.id, episode.record_path)
    try:
        anyio.run(_serve_until_signal, episode, log_level)
    except KeyboardInterrupt:
        pass
    finally:
        evaluation = episode.end()
    log.info("episode %s ended: score %s", episode.id, evaluation.get("score"))
    return evaluation


def run_http(
    env: ServedEnvironment | None, source: EnvironmentSource | None, record_dir: str | Path | None,
    host: str = "127.0.0.1", port: int = 8765, token: str | None = None, default_episode: str | None = None,
    log_level: str = "WARNING", json_response: bool = True, spec_roots: Sequence[str | Path] = (),
    control: ControlOptions | None = None,
) -> None:
    """Serve episodes over streamable HTTP until interrupted; live episodes are ended and recorded on the way out.

    `control` is the default for created episodes (an admin create may turn MCP-only on or off per episode)."""
    import uvicorn

    from .http import build_app
    from .hub import EpisodeHub

    if token is None:
        token = secrets.token_urlsafe(24)
        print(f"coworkenv: admin token (generated): {token}", file=sys.stderr, flush=True)
    hub = EpisodeHub(env, source, record_dir, host=host, json_response=json_response, spec_roots=spec_roots,
                     control=control)
    app = build_app(hub, token, default_episode)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit this; without it small responses wait ~40 ms on delayed ACKs
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    base = f"http://{host if ':' not in host else f'[{host}]'}:{bound}"
    print(f"coworkenv: listening on {base} (MCP at {base}/episodes/<id>/mcp, admin at {base}/admin/episodes)",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level=log_level.lower(), lifespan="on", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
