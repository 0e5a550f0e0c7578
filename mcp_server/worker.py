"""One worker of `coworkenv serve --http --workers N`: serves a whole episode hub on a socket its parent bound.

The parent (`run.run_http_workers`) passes the listening socket's descriptor in
COWORKENV_WORKER_FD, the admin token in COWORKENV_ADMIN_TOKEN and the rest as JSON in
COWORKENV_WORKER: environment source, record folder, host, log level, spec roots, MCP-only
defaults. Strict schemas travel as COWORKENV_STRICT_SCHEMAS, which the worker inherits.
"""

from __future__ import annotations

import json
import os
import socket
import sys

from .control import ControlOptions
from .environment import EnvironmentLoadError, EnvironmentSource
from .run import configure_logging, serve_socket


def main() -> int:
    """Load the environment and serve until SIGTERM/SIGINT; 2 on a bad setup (said on stderr)."""
    try:
        config = json.loads(os.environ["COWORKENV_WORKER"])
        fd = int(os.environ["COWORKENV_WORKER_FD"])
        token = os.environ["COWORKENV_ADMIN_TOKEN"]
        source = EnvironmentSource.from_json(config["source"])
    except (KeyError, ValueError, EnvironmentLoadError) as e:
        print(f"coworkenv worker: started without a valid setup from `coworkenv serve --workers`: {e}", file=sys.stderr)
        return 2
    configure_logging(config.get("log_level", "WARNING"), config.get("log_file"))
    try:
        env = source.load()
    except EnvironmentLoadError as e:
        print(f"coworkenv worker {config.get('index')}: {e}", file=sys.stderr)
        return 2
    control = config.get("control") or {}
    sock = socket.socket(fileno=fd)
    serve_socket(sock, env, source, config.get("record_dir"), config.get("host", "127.0.0.1"), token,
                 log_level=config.get("log_level", "WARNING"), json_response=config.get("json_response", True),
                 spec_roots=config.get("spec_roots", ()),
                 control=ControlOptions(bool(control.get("mcp_only")), bool(control.get("reveal_score"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
