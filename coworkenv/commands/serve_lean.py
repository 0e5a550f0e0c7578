"""`coworkenv serve` without typer: its command line read by hand, for a cold start that answers sooner.

Building the typer app (typer, its click, its pydantic adapters) costs about 60-100 ms of a
`coworkenv serve` cold start, more than serving the first answer does. `parse` reads the ordinary
forms of serve's command line (`--name value`, `--name=value`, flags, `-w N`, one SPEC) into the
arguments typer would pass; anything else (help, an unknown or repeated option, a value typer would
refuse or convert differently) gives None, and the caller hands the line to typer, which answers it
as always. `run` serves a parsed line; a usage error found while serving is handed to typer too, so
every message and exit status is typer's. `tests/mcp_server/test_serve_lean.py` checks the parse against
typer's on generated command lines.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

# option -> (parameter, kind): "str", "path", "int", "flag", "off" (a flag's --no- form), "paths" (repeatable)
OPTIONS: dict[str, tuple[str, str]] = {
    "--python": ("python", "str"), "--http": ("http", "flag"), "--host": ("host", "str"), "--port": ("port", "int"),
    "--workers": ("workers", "int"), "-w": ("workers", "int"), "--spec-root": ("spec_root", "paths"),
    "--record-dir": ("record_dir", "path"), "--episode-id": ("episode_id", "str"),
    "--default-episode": ("default_episode", "str"), "--admin-token": ("admin_token", "str"),
    "--mcp-only": ("mcp_only", "flag"), "--reveal-score": ("reveal_score", "flag"), "--user": ("user", "str"),
    "--user-model": ("user_model", "str"), "--user-base-url": ("user_base_url", "str"),
    "--user-api-key": ("user_api_key", "str"), "--stt-model": ("stt_model", "str"),
    "--stt-base-url": ("stt_base_url", "str"), "--log-file": ("log_file", "path"), "--log-level": ("log_level", "str"),
    "--strict-schemas": ("strict_schemas", "flag"), "--no-strict-schemas": ("strict_schemas", "off"),
}
DEFAULTS: dict[str, Any] = {
    "spec": None, "python": None, "http": False, "host": "127.0.0.1", "port": 8765, "workers": 1, "spec_root": None,
    "record_dir": Path("runs/episodes"), "episode_id": None, "default_episode": None, "admin_token": None,
    "mcp_only": False, "reveal_score": False, "user": "scripted", "user_model": None, "user_base_url": None,
    "user_api_key": None, "stt_model": None, "stt_base_url": None, "log_file": None, "log_level": "WARNING",
    "strict_schemas": True,
}
ENVVARS = {"admin_token": "COWORKENV_ADMIN_TOKEN", "strict_schemas": "COWORKENV_STRICT_SCHEMAS"}
_TRUE, _FALSE = ("1", "true"), ("0", "false")


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The arguments typer would give `serve_command` for `coworkenv serve ARGV`, or None for a line this reader
    leaves to typer (see the module docstring)."""
    out = dict(DEFAULTS)
    seen: set[str] = set()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            if "spec" in seen or not arg:
                return None
            seen.add("spec")
            out["spec"] = Path(arg)
            continue
        name, eq, inline = arg.partition("=")
        known = OPTIONS.get(name)
        if known is None or (eq and not name.startswith("--")):
            return None
        param, kind = known
        if kind in ("flag", "off"):
            if eq or param in seen:
                return None
            seen.add(param)
            out[param] = kind == "flag"
            continue
        if eq:
            value = inline
        elif i < len(argv) and not argv[i].startswith("-"):
            value = argv[i]
            i += 1
        else:  # a missing value, or one that starts like an option: typer's to judge
            return None
        if not value or "\x00" in value:
            return None
        if kind == "paths":
            out[param] = [*(out[param] or []), Path(value)]
            seen.add(param)
            continue
        if param in seen:
            return None
        seen.add(param)
        if kind == "int":
            if not value.isascii() or not value.isdigit() or len(value) > 6:
                return None
            number = int(value)
            if param == "workers" and not 1 <= number <= 256:
                return None
            out[param] = number
        else:
            out[param] = Path(value) if kind == "path" else value
    for param, var in ENVVARS.items():
        raw = os.environ.get(var)
        if param in seen or raw is None:
            continue
        if param == "strict_schemas":
            if raw.strip().lower() not in _TRUE + _FALSE:
                return None
            out[param] = raw.strip().lower() in _TRUE
        elif raw:
            out[param] = raw
        else:  # set but empty: typer's reading of that
            return None
    return out


def run(argv: list[str]) -> bool:
    """Serve `coworkenv serve ARGV` without typer when `parse` reads it; False (nothing done) when the line is
    typer's. A usage error raised while serving is typer's to show: the line is handed to it (False), as is any
    line whose run ended in typer's Exit (its message is already written; this exits with its status)."""
    args = parse(argv)
    if args is None:
        return False
    from .serving import serve_command

    try:
        serve_command(**args)
    except KeyboardInterrupt:
        sys.exit(130)  # what typer's main answers to an interrupt
    except Exception as e:
        kind = type(e)
        if kind.__name__ == "BadParameter" and kind.__module__.startswith("typer"):
            return False  # typer shows it, with its usage line, from the same checks
        if kind.__name__ == "Exit" and kind.__module__.startswith("typer"):
            sys.exit(getattr(e, "exit_code", 1))
        raise
    return True
