"""Python: run a snippet in a bubblewrap sandbox whose file system is the workspace.

Each call runs in fresh user, mount, PID, network and IPC namespaces with a tmpfs root holding
only the workspace's files and the read-only interpreter, an empty environment and a seccomp
filter (see workspace_sim/sandboxes/bwrap.py). Where that sandbox cannot be built the tool is not
offered, and the reason is in `Workspace.unavailable` and the log.
"""

from __future__ import annotations

from .records import SERVICE, RunStatus, FileChanges, PythonRun
from .tools import MAX_CODE, PythonWorkerFailure, run_python

SERVICE.add_tools(
    run_python,
)

__all__ = [
    "SERVICE", "MAX_CODE", "PythonWorkerFailure", "run_python", "RunStatus", "FileChanges", "PythonRun",
]
