"""A workspace imports only the service modules it uses; the answers are the same as discovering them all."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.services import all_services, all_tools, services_named, tools_named

PROBE = """
import sys
from workspace_sim import Workspace, WorkspaceConfig
Workspace.create(WorkspaceConfig(user="a@example.com", services=["files", "todo"]))
print(sorted({m.split(".")[2] for m in sys.modules if m.startswith("workspace_sim.services.")}))  # a service package's modules count once
"""


def test_a_workspace_imports_only_its_services() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['files', 'todo']"


def test_named_services_are_the_discovered_ones() -> None:
    known = all_services()
    for name in known:
        assert services_named([name]) == {name: known[name]}
        assert services_named([name])[name] is known[name]
    assert list(services_named(["todo", "files", "todo"])) == ["todo", "files"]


@pytest.mark.parametrize("bad", ["nope", "_private", "registry", "../files", "", "files.x"])
def test_unknown_names_are_left_out(bad: str) -> None:
    assert services_named([bad, "files"]) == {"files": all_services()["files"]}


def test_a_service_in_a_module_of_another_name_is_found() -> None:
    python = services_named(["python"])
    assert python == {"python": all_services()["python"]}


def test_tools_named_matches_the_registry() -> None:
    registry = all_tools()
    some = sorted(registry)[:7]
    assert tools_named(some) == {n: registry[n] for n in some}
    assert tools_named(["no_such_tool"]) == {}


def test_unknown_service_still_lists_what_exists() -> None:
    with pytest.raises(SpecError) as e:
        Workspace.create(WorkspaceConfig(user="a@example.com", services=["files", "fax"]))
    assert "fax" in str(e.value) and "calendar" in str(e.value)
