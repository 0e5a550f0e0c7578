"""`coworkenv sandbox reap`: remove sandbox containers left behind."""

from __future__ import annotations

import typer


def reap(
    all_: bool = typer.Option(False, "--all", help="Remove every sandbox container, live owners too."),
    docker_host: str | None = typer.Option(None, help="Engine URL (default: DOCKER_HOST or local socket)."),
) -> None:
    """Remove sandbox containers left behind by processes that died."""
    from docker.errors import DockerException

    from workspace_sim.sandboxes.engine import EngineUnavailable, reap_orphans, short_error

    try:
        removed = reap_orphans(docker_host, everything=all_)
    except EngineUnavailable as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    except DockerException as e:
        typer.echo(f"error: the engine refused: {short_error(e)}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"removed {len(removed)} container(s)")
