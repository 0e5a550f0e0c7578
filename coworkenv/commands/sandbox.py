"""`coworkenv sandbox build-image|status|reap`: the Docker sandbox behind run_command, and whether
run_python's bubblewrap sandbox works here."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The sandboxes behind run_command (Docker) and run_python (bubblewrap).",
                        no_args_is_help=True)
    app.add_typer(group, name="sandbox")

    @group.command("build-image")
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

    @group.command("status")
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

    @group.command("reap")
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
