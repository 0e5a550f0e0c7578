"""What `coworkenv serve` does once its line is read: `serve_command`, shared by typer's reading (`serve.py`) and the
lean one (`serve_lean.py`); it imports no typer, so a lean `serve` starts without it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ._environment import fail, source_from_options

if TYPE_CHECKING:
    import typer


def _bad(message: str) -> "typer.BadParameter":
    """A usage error (typer is loaded for it only: `serve` starts without typer, see `serve_lean`)."""
    import typer

    return typer.BadParameter(message)


def control_options(mcp_only: bool, reveal_score: bool, user: str, model: Optional[str], base_url: Optional[str],
                    api_key: Optional[str]):  # -> mcp_server.ControlOptions
    """The MCP-only options of `serve`, with the simulated user built from trainers' user settings; a usage
    error names a bad combination (the user options without --mcp-only, an unknown user kind)."""
    from mcp_server.control import ControlOptions

    llm = {k: v for k, v in {"model": model, "base_url": base_url, "api_key": api_key}.items() if v is not None}
    if user not in ("scripted", "llm"):
        raise _bad(f"--user must be scripted or llm, got {user!r}")
    if not mcp_only and (reveal_score or user != "scripted" or llm):
        raise _bad("--reveal-score and --user* apply to MCP-only episodes: add --mcp-only")
    if llm and user != "llm":
        raise _bad("--user-model/--user-base-url/--user-api-key need --user llm")
    if user == "scripted":
        return ControlOptions(mcp_only, reveal_score)
    from trainers.episodes.batch import UserSpec

    try:
        build = UserSpec("llm", llm).factory()
    except ValueError as e:
        raise _bad(str(e)) from None

    def make_user(env: object) -> object:
        if not hasattr(env, "user_simulator"):
            raise ValueError(f"the llm user needs a spec environment; {getattr(env, 'id', env)!r} has no user simulator")
        return build(env, int(getattr(env, "seed", 0)))  # type: ignore[arg-type]

    return ControlOptions(True, reveal_score, make_user)


def _speech_to_text(model: Optional[str], base_url: Optional[str]) -> None:
    """Set the speech-to-text endpoint of `transcribe_audio` for the server and its workers (the environment
    variables it reads at each call), refusing a bad one before anything starts."""
    from workspace_sim.media import speech_to_text as stt

    for value, var in ((model, stt.ENV["model"]), (base_url, stt.ENV["base_url"])):
        if value is not None:
            os.environ[var] = value
    try:
        stt.settings_from_env()
    except stt.SettingsError as e:
        raise _bad(str(e)) from None


def serve_command(spec: Optional[Path], python: Optional[str], http: bool, host: str, port: int, workers: int,
                  spec_root: Optional[list[Path]], record_dir: Path, episode_id: Optional[str],
                  default_episode: Optional[str], admin_token: Optional[str], mcp_only: bool, reveal_score: bool,
                  user: str, user_model: Optional[str], user_base_url: Optional[str], user_api_key: Optional[str],
                  stt_model: Optional[str], stt_base_url: Optional[str], log_file: Optional[Path], log_level: str,
                  strict_schemas: bool) -> None:
    """Serve an environment to MCP clients (`coworkenv serve`'s body, typer's or `serve_lean`'s parse of the
    command line); a bad option raises typer's BadParameter or the Exit of `fail`, naming what is wrong."""
    from mcp_server.environment import EnvironmentLoadError
    from mcp_server.run import ListenError, configure_logging, run_http, run_stdio

    if log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise _bad(f"--log-level must be DEBUG, INFO, WARNING or ERROR, got {log_level!r}")
    if not 0 <= port <= 65535 or (port and port + workers - 1 > 65535):
        raise _bad(f"--port must be 0-65535 (with --workers {workers}: at most {65536 - workers}), got {port}")
    if workers > 1 and not http:
        raise _bad("--workers applies to --http only (stdio serves one episode)")
    if workers > 1 and default_episode:
        raise _bad("--default-episode needs one worker: an episode id lives on one server")
    if workers > 1 and user == "llm":
        raise _bad("--user llm needs one worker (each worker would need its own user endpoint)")
    if admin_token is not None and len(admin_token) < 16:
        raise _bad("the admin token must be at least 16 characters")
    # the MCP server reads it where it lists tools (mcp_server.server.strict_schemas_requested)
    os.environ["COWORKENV_STRICT_SCHEMAS"] = "1" if strict_schemas else "0"
    _speech_to_text(stt_model, stt_base_url)
    from mcp_server.admission import inline_tools_from_env

    try:  # read where the first tool call runs; a bad value is refused here, before anything starts
        inline_tools_from_env()
    except ValueError as e:
        raise fail(str(e)) from None
    if http:
        from mcp_server.settings import fast_path_enabled

        try:  # read by every hub (and worker); a bad value is refused here, before anything starts
            fast_path_enabled()
        except ValueError as e:
            raise fail(str(e)) from None
    source = source_from_options(spec, python)
    configure_logging(log_level, log_file)
    try:
        env = source.load()
    except EnvironmentLoadError as e:
        raise fail(str(e)) from None
    control = control_options(mcp_only, reveal_score, user, user_model, user_base_url, user_api_key)
    if control.user is not None and not hasattr(env, "user_simulator"):
        raise fail(f"--user llm needs a spec environment; {env.id!r} has no simulated user to play")
    record = record_dir.expanduser().resolve()
    roots = [r.expanduser().resolve() for r in spec_root or []]
    for r in roots:
        if not r.is_dir():
            raise _bad(f"--spec-root {r} is not a folder")
    if http:
        try:
            run_http(env, source, record, host, port, admin_token, default_episode, log_level, spec_roots=roots,
                     control=control, workers=workers, log_file=log_file)
        except ListenError as e:  # the port (or one of the workers' ports) is taken or not ours to bind
            raise fail(str(e)) from None
    else:
        try:
            run_stdio(env, source, record, episode_id, log_level, control=control)
        except ValueError as e:  # a bad episode id
            raise fail(str(e)) from None
