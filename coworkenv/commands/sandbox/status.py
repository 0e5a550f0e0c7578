"""`coworkenv sandbox status`: whether each sandbox works on this machine."""

from __future__ import annotations

import typer


def status(
    image: str = typer.Option("coworkenv-sandbox:latest", help="Image the shell tool would use."),
    docker_host: str | None = typer.Option(None, help="Engine URL (default: DOCKER_HOST or local socket)."),
    bwrap: str = typer.Option("bwrap", help="bubblewrap executable run_python would use (name or path)."),
) -> None:
    """Say whether run_command and run_python can be offered here (exit 1 when either cannot),
    and list live sandbox containers."""
    from pydantic import ValidationError

    from workspace_sim.core.errors import pydantic_error_message
    from workspace_sim.sandboxes.engine import LABEL, OWNER_LABEL, client, engine_status
    from workspace_sim.sandboxes.python_sandbox import isolation_status
    from workspace_sim.sandboxes.settings import SandboxSettings

    ok, reason = engine_status(docker_host, image)
    typer.echo("run_command: available" if ok else f"run_command: not offered ({reason})")
    if ok:
        for c in client(docker_host).containers.list(all=True, filters={"label": LABEL}):
            typer.echo(f"  {c.short_id} {c.status} owner={c.labels.get(OWNER_LABEL, '?')}")
    try:
        py_ok, py_reason = isolation_status(SandboxSettings(bwrap=bwrap))
    except ValidationError as e:
        py_ok, py_reason = False, f"--bwrap: {pydantic_error_message(e)}"
    typer.echo(f"run_python: available (bubblewrap: {bwrap})" if py_ok
               else f"run_python: not offered ({py_reason})")
    raise typer.Exit(0 if ok and py_ok else 1)
