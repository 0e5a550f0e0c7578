"""The python service's tools (the package docstring says what the service models)."""

from __future__ import annotations

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, ToolError
from workspace_sim.core.registry import tool
from .records import FileChanges, PythonRun
from workspace_sim.sandboxes.settings import sandbox_settings
from workspace_sim.sandboxes.tree import apply_delta, tree_from_context
from workspace_sim.services.files.records import File, Folder  # the records a sandbox's changes are written as

MAX_CODE = 100_000


class PythonWorkerFailure(ToolError):
    code = "sandbox_error"


def _render(d: dict) -> str:
    parts = []
    if d["stdout"]:
        parts.append(d["stdout"].rstrip("\n"))
    if d["stderr"]:
        parts.append("[stderr]\n" + d["stderr"].rstrip("\n"))
    status = {"ok": f"exit code {d['exit_code']}", "error": f"error: {d['error']}",
              "timeout": "timed out", "killed": f"killed: {d['error']}"}[d["status"]]
    changed = [f"{k.replace('_', ' ')}: {', '.join(v)}" for k, v in d["files"].items() if v]
    parts.append(status + (" · " + "; ".join(changed) if changed else ""))
    parts.extend(f"note: {n}" for n in d["notes"])
    return "\n".join(parts)


@tool(destructive=True, render=_render)
def run_python(ctx: ToolContext, code: str) -> dict:
    """Run a Python 3 snippet whose file system is the workspace: open, os, pathlib, csv and json see
    the workspace files at their usual paths (e.g. open('/reports/q1.csv')), and files it creates,
    changes or deletes are saved back (except under /tmp, which is scratch). Standard library only;
    no processes, no network, and time and memory limits; print results to see them.

    Args:
        code: The Python source to run, as a script (not an expression to evaluate).
    """
    if not code.strip():
        raise InvalidArgument("code is empty; give Python statements such as print(open('/notes.txt').read())")
    if len(code) > MAX_CODE:
        raise InvalidArgument(f"code is longer than {MAX_CODE} characters; split the work into smaller steps")
    if "\x00" in code:
        raise InvalidArgument("code contains a NUL byte")
    from workspace_sim.sandboxes.bwrap import IsolationUnavailable
    from workspace_sim.sandboxes.python_sandbox import WorkerError, run_python_code

    settings = sandbox_settings(ctx.config)
    try:
        outcome = run_python_code(tree_from_context(ctx), code, settings, ctx.config.seed)
    except (WorkerError, IsolationUnavailable) as e:
        raise PythonWorkerFailure(f"{e}; nothing was changed") from None
    notes = []
    if outcome.status == "timeout":
        notes.append(f"stopped: the code ran past the {settings.python_timeout_s:g} s time limit")
    if outcome.delta is None:
        notes.append("the process was killed; files it wrote were not saved")
    if outcome.output_truncated:
        notes.append(f"output truncated to {settings.output_bytes} bytes per stream")
    notes += [f"not saved: {i}" for i in outcome.ignored]
    notes += [f"not visible to the code (the sandbox's own path): {h}" for h in outcome.hidden]
    if outcome.delta is not None:
        apply_delta(ctx, outcome.delta, File, Folder)
    return PythonRun(
        status=outcome.status, exit_code=outcome.exit_code, error=outcome.error,
        stdout=outcome.stdout, stderr=outcome.stderr,
        files=FileChanges(**outcome.delta.summary()) if outcome.delta is not None else FileChanges(), notes=notes,
    ).model_dump()
