"""The pytest plugin: `workspace` is restored between tests; pyfakefs mounting round-trips files."""

from __future__ import annotations

import pytest

from support import need

CONFTEST = '''
import pytest
from workspace_sim import Workspace, WorkspaceConfig

@pytest.fixture(scope="session")
def workspace_factory():
    return Workspace.create(WorkspaceConfig(services=["files"]),
                            {"files": {"files": [{"path": "/docs/a.txt", "content": "start"}]}})
'''

TESTS = '''
def test_first_mutates(workspace):
    assert workspace.call("write_file", {"path": "/docs/a.txt", "content": "dirty"}).ok
    assert workspace.call("delete_file", {"path": "/docs/a.txt"}).ok

def test_second_sees_the_start_state(workspace):
    assert workspace.table("files.files")["/docs/a.txt"].content == "start"
    assert workspace.events() == []
'''

FS_TESTS = '''
import os
from workspace_sim.runtime.pytest_plugin import read_back_fs

def test_code_under_test_edits_files(workspace, workspace_fs):
    path = "/workspace/docs/a.txt"
    assert open(path).read() == "start"
    with open(path, "a") as f:
        f.write(" and more")
    os.makedirs("/workspace/out")
    with open("/workspace/out/r.csv", "w") as f:
        f.write("a,b\\n")
    read_back_fs(workspace, workspace_fs)
    files = workspace.table("files.files")
    assert files["/docs/a.txt"].content == "start and more"
    assert files["/out/r.csv"].content == "a,b\\n"
    assert {c.key for c in workspace.diff()} >= {"/docs/a.txt", "/out/r.csv"}
'''


def test_workspace_fixture_is_restored_between_tests(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_order=TESTS)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_workspace_fs_mounts_and_reads_back(pytester: pytest.Pytester) -> None:
    try:
        import pyfakefs  # noqa: F401
    except ImportError:
        need(False, "pyfakefs is not installed")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_fs=FS_TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
