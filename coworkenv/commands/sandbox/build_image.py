"""`coworkenv sandbox build-image`: build the Docker image run_command runs in."""

from __future__ import annotations

import typer


def build_image(
    tag: str = typer.Option("coworkenv-sandbox:latest", help="Image name:tag to create."),
    busybox: str | None = typer.Option(None, help="Path of a static busybox binary (default: found)."),
    docker_host: str | None = typer.Option(None, help="Engine URL (default: DOCKER_HOST or local socket)."),
) -> None:
    """Build the default sandbox image from a static busybox, with no registry or network."""
    from workspace_sim.sandboxes.engine import EngineUnavailable
    from workspace_sim.sandboxes.image import ImageBuildError
    from workspace_sim.sandboxes.image import build_image as build

    try:
        info = build(tag, busybox, docker_host)
    except (ImageBuildError, EngineUnavailable) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"built {info['tag']} ({info['id'][:19]}) from {info['busybox']}, {info['bytes']} bytes")
