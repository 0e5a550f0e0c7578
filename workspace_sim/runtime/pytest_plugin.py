"""pytest plugin (entry point `pytest11`): a `workspace` fixture restored between tests.

Override `workspace_factory` (session scope) in your conftest to build the workspace you want;
each test gets it at the same start state, because the fixture restores a snapshot afterwards
(constant time). `workspace_fs` also mounts the workspace's files into pyfakefs's `fs` fixture
under `/workspace`, and `read_back_fs(workspace, fs)` applies what the code under test wrote there
back to the workspace as one logged change.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from workspace_sim.runtime.config import WorkspaceConfig
from workspace_sim.runtime.workspace import Workspace

FS_ROOT = "/workspace"


@pytest.fixture(scope="session")
def workspace_factory() -> Workspace:
    """The session's workspace; override to load your own data or spec."""
    return Workspace.create(WorkspaceConfig())


@pytest.fixture
def workspace(workspace_factory: Workspace) -> Iterator[Workspace]:
    """The session workspace at its start state; restored after the test, whatever it did."""
    if not isinstance(workspace_factory, Workspace):
        pytest.fail(f"workspace_factory must return a workspace_sim.Workspace (built once per session), got "
                    f"{type(workspace_factory).__name__}: override it in conftest.py with "
                    "@pytest.fixture(scope='session') returning Workspace.create(...)", pytrace=False)
    snap = workspace_factory.snapshot()
    try:
        yield workspace_factory
    finally:
        workspace_factory.restore(snap)


@pytest.fixture
def workspace_fs(workspace: Workspace, fs: Any) -> Any:
    """pyfakefs's `fs` holding the workspace's files under /workspace (needs pyfakefs)."""
    from workspace_sim.sandboxes.fakefs import mount_files

    mount_files(workspace, fs, FS_ROOT)
    return fs


def read_back_fs(workspace: Workspace, fs: Any, root: str = FS_ROOT) -> Any:
    """Apply the files changed under `root` in the fake filesystem back to the workspace."""
    from workspace_sim.sandboxes.fakefs import read_back

    return read_back(workspace, fs, root)
