"""A newcomer adds a service by copying one folder: the notes folder, copied outside the package under a new name
with its service and tools renamed, is discovered through `add_services_path` (or COWORKENV_SERVICES_PATH), meets
the service contract, and serves tool calls in a Workspace like any built-in service."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import test_service_contract as contract

import workspace_sim.services as services
from workspace_sim import Workspace, WorkspaceConfig

ROOT = Path(__file__).resolve().parents[3]
NOTES = Path(services.__file__).parent / "notes"
ME = "me@acme.com"


def copy_notes_as_memos(into: Path) -> Path:
    """`into`/memos: the notes service folder copied, every note/Note/NOTE renamed memo/Memo/MEMO (the service,
    its tables, records and tools), as a newcomer starting from it would."""
    folder = into / "memos"
    shutil.copytree(NOTES, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for old, new in (("note", "memo"), ("Note", "Memo"), ("NOTE", "MEMO")):
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    return folder


@pytest.fixture()
def memos(tmp_path: Path):
    copy_notes_as_memos(tmp_path)
    services.add_services_path(tmp_path)
    try:
        yield tmp_path
    finally:
        services.remove_services_path(tmp_path)


def test_a_copied_folder_is_a_service(memos: Path) -> None:
    found = services.all_services()
    assert {"memos", "notes"} <= set(found)
    memo = found["memos"]
    assert memo.name == "memos" and set(memo.tables) == {"memobooks", "memos"}
    assert memo.table("memos").name == "memos.memos"
    assert set(memo.tools) == {re.sub("note", "memo", t) for t in found["notes"].tools}
    assert services.services_named(["memos"]) == {"memos": memo}
    for meets_the_contract in (contract.test_a_service_is_one_folder_of_the_one_shape,
                               contract.test_every_record_field_has_a_description,
                               contract.test_every_tool_has_a_docstring_and_typed_documented_arguments,
                               contract.test_every_declared_table_has_a_checked_handle):
        meets_the_contract(memo)

    ws = Workspace.create(WorkspaceConfig(services=["memos"], user=ME))
    made = ws.call("create_memo", {"title": "Standup", "body": "Ship the copy", "tags": ["team"]})
    assert made.ok, made.error
    key = made.data["memo"]["id"]
    stored = ws.state.table("memos.memos")[key]
    assert key.startswith("memo-") and (stored.title, stored.body, stored.tags, type(stored).__module__) == (
        "Standup", "Ship the copy", ["team"], "workspace_sim.services.memos.records")
    found_again = ws.call("search_memos", {"query": "ship"})
    assert found_again.ok and [m["id"] for m in found_again.data["memos"]] == [key]
    bad = ws.call("create_memo", {"title": "x\ny"})
    assert not bad.ok and "title" in bad.error.message


def test_removing_the_path_forgets_the_service(memos: Path) -> None:
    assert "memos" in services.all_services()
    services.remove_services_path(memos)
    assert "memos" not in services.all_services()
    assert not any(m.startswith("workspace_sim.services.memos") for m in sys.modules)
    with pytest.raises(NotADirectoryError, match="is not a folder"):
        services.add_services_path(memos / "nowhere")


PROBE = """
import json
from workspace_sim import Workspace, WorkspaceConfig
ws = Workspace.create(WorkspaceConfig(services=["memos"], user="me@acme.com"))
r = ws.call("create_memo", {"title": "From the environment"})
print(json.dumps([r.ok, sorted(ws.state.table("memos.memos"))]))
"""


def test_the_services_path_variable_adds_folders(tmp_path: Path) -> None:
    copy_notes_as_memos(tmp_path)
    env = {**os.environ, services.SERVICES_PATH_VARIABLE: str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True).stdout
    ok, keys = json.loads(out)
    assert ok and len(keys) == 1 and keys[0].startswith("memo-")
