"""`coworkenv serve`: serve an environment over MCP (stdio, or streamable HTTP with many episodes).

This is typer's reading of the line; an ordinary one is read by `serve_lean` without typer. Both hand it to
`serving.serve_command`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .serving import serve_command


def serve(
    spec: Optional[Path] = typer.Argument(None, help="Environment spec file (JSON or YAML)."),
    python: Optional[str] = typer.Option(None, "--python", help="MODULE:FUNCTION returning a ServedEnvironment."),
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP (many episodes) instead of stdio."),
    host: str = typer.Option("127.0.0.1", help="HTTP address to bind (local only unless told otherwise)."),
    port: int = typer.Option(8765, help="HTTP port (0 picks a free one; the address is printed on stderr)."),
    workers: int = typer.Option(1, "--workers", "-w", min=1, max=256,
                                help="HTTP: serve from this many processes, one port each (PORT, PORT+1, ...); "
                                     "spread episodes over them with `coworkenv run --connect URL1,URL2,...`."),
    spec_root: Optional[list[Path]] = typer.Option(
        None, "--spec-root", help="HTTP: a folder the admin API may load specs from by path (repeatable; "
                                  "default: the served spec's folder, none with --python)."),
    record_dir: Path = typer.Option(Path("runs/episodes"), help="Folder for the episodes' JSONL records."),
    episode_id: Optional[str] = typer.Option(None, help="Id of the stdio episode (default: random)."),
    default_episode: Optional[str] = typer.Option(None, help="HTTP: open an episode with this id at start."),
    admin_token: Optional[str] = typer.Option(None, envvar="COWORKENV_ADMIN_TOKEN",
                                              help="HTTP admin token (default: generated and printed on stderr)."),
    mcp_only: bool = typer.Option(
        False, "--mcp-only", help="Let an MCP client finish an episode by itself: adds the ask_user and "
                                  "submit_answer tools, world events as the episode goes, and the episode://status "
                                  "resource (HTTP: the default for created episodes)."),
    reveal_score: bool = typer.Option(False, "--reveal-score",
                                      help="--mcp-only: submit_answer tells the agent its score and checks."),
    user: str = typer.Option("scripted", "--user", help="--mcp-only: who answers ask_user, scripted or llm."),
    user_model: Optional[str] = typer.Option(None, "--user-model", help="llm user: model name."),
    user_base_url: Optional[str] = typer.Option(None, "--user-base-url", help="llm user: endpoint base URL."),
    user_api_key: Optional[str] = typer.Option(None, "--user-api-key", help="llm user: API key (else "
                                                                             "COWORKENV_OPENAI_API_KEY, or "
                                                                             "OPENAI_API_KEY)."),
    stt_model: Optional[str] = typer.Option(
        None, "--stt-model", help="transcribe_audio: the model of an OpenAI-compatible speech-to-text endpoint for "
                                  "audio files without a transcript (sets COWORKENV_STT_MODEL; the key from "
                                  "COWORKENV_STT_API_KEY, COWORKENV_OPENAI_API_KEY or OPENAI_API_KEY)."),
    stt_base_url: Optional[str] = typer.Option(
        None, "--stt-base-url", help="transcribe_audio: that endpoint's base URL (sets COWORKENV_STT_BASE_URL; "
                                     "default https://api.openai.com/v1)."),
    log_file: Optional[Path] = typer.Option(None, help="Write logs to this file instead of stderr."),
    log_level: str = typer.Option("WARNING", help="DEBUG, INFO, WARNING or ERROR."),
    strict_schemas: bool = typer.Option(
        True, "--strict-schemas/--no-strict-schemas", envvar="COWORKENV_STRICT_SCHEMAS",
        help="Serve input schemas in strict form (the default: no $ref, every argument required, null for an "
             "optional one left out), which clients that make schemas strict take unchanged (the OpenAI Agents "
             "SDK's convert_schemas_to_strict); --no-strict-schemas serves the ordinary form (optional arguments "
             "not required, defaults shown). The tools accept calls in either form."),
) -> None:
    """Serve an environment to MCP clients; every episode is recorded and scored when it ends."""
    serve_command(**locals())
