"""The shell service's tools (the package docstring says what the service models)."""

from __future__ import annotations

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, ToolError
from workspace_sim.core.registry import tool
from .records import FileChanges, CommandResult
from workspace_sim.sandboxes.settings import sandbox_settings
from workspace_sim.sandboxes.tree import apply_delta, tree_from_context
from workspace_sim.services.files.records import File, Folder  # the records a sandbox's changes are written as

RESOURCE = "sandbox.docker"
MAX_COMMAND = 20000


class SandboxFailure(ToolError):
    code = "sandbox_error"


def _render(d: dict) -> str:
    parts = [f"$ {d['command']}"]
    if d["stdout"]:
        parts.append(d["stdout"].rstrip("\n"))
    if d["stderr"]:
        parts.append("[stderr]\n" + d["stderr"].rstrip("\n"))
    status = "timed out" if d["timed_out"] else f"exit code {d['exit_code']}"
    changed = [f"{k.replace('_', ' ')}: {', '.join(v)}" for k, v in d["files"].items() if v]
    parts.append(status + (" · " + "; ".join(changed) if changed else ""))
    parts.extend(f"note: {n}" for n in d["notes"])
    return "\n".join(parts)


@tool(destructive=True, render=_render)
def run_command(ctx: ToolContext, command: str) -> dict:
    """Run a shell command (POSIX sh, common Unix tools) in an isolated Linux sandbox whose /work folder
    holds the workspace files: it starts in /work, where workspace path /reports/q1.csv is
    ./reports/q1.csv, and files it creates, changes or deletes under /work are saved back to the
    workspace (anything outside /work is scratch). There is no network; the command runs as an
    unprivileged user with time, memory and process limits, and long output is shortened.

    Args:
        command: The shell command line, e.g. "wc -l reports/*.csv" or "sort -u names.txt > unique.txt".
    """
    if not command.strip():
        raise InvalidArgument("command is empty; give a shell command such as 'ls -la'")
    if len(command) > MAX_COMMAND:
        raise InvalidArgument(f"command is longer than {MAX_COMMAND} characters; write a script file first")
    if "\x00" in command:
        raise InvalidArgument("command contains a NUL byte")
    from workspace_sim.sandboxes.container import ContainerSandbox, SandboxError

    settings = sandbox_settings(ctx.config)
    owned = ctx.resources is None  # outside a Workspace: a container for this call only
    sandbox = ContainerSandbox(settings) if owned else ctx.resources.get(RESOURCE, lambda: ContainerSandbox(settings))
    try:
        outcome = sandbox.run(tree_from_context(ctx), command, ctx.now.timestamp())
    except SandboxError as e:
        raise SandboxFailure(str(e)) from None
    finally:
        if owned:
            sandbox.close()
    notes = list(outcome.notes) + [f"not saved: {i}" for i in outcome.ignored]
    if outcome.delta is not None:
        apply_delta(ctx, outcome.delta, File, Folder)
    return CommandResult(
        command=command, exit_code=outcome.exit_code, timed_out=outcome.timed_out,
        stdout=outcome.stdout, stderr=outcome.stderr,
        files=FileChanges(**outcome.delta.summary()) if outcome.delta is not None else FileChanges(), notes=notes,
    ).model_dump()
