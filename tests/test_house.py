"""The house rules hold on the whole project (no import circle at any level, no file over 700 lines, no function
over 120, services only in the one folder shape: SERVICE, its table handles and its start-data check in records.py,
the tools in tools.py, other files a helper kind or named in the folder's docstring), and the scan that checks them
finds what it should."""

from __future__ import annotations

from pathlib import Path

import house_scan

PKG = ("pkg",)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_project_has_no_circle_no_long_file_and_no_long_function() -> None:
    assert house_scan.circles() == []
    assert house_scan.long_files() == []
    assert house_scan.long_functions() == []


def test_services_holds_only_folders_of_the_one_shape() -> None:
    services = house_scan.ROOT / "workspace_sim" / "services"
    loose = sorted(p.name for p in services.iterdir() if p.suffix == ".py" and p.name != "__init__.py")
    assert loose == []
    folders = house_scan.service_folders(services)
    assert len(folders) >= 18
    assert [p for folder in folders for p in house_scan.service_folder_problems(folder)] == []


# A service folder of the one shape, as text: records.py declares the service, its handle and its start-data check;
# tools.py marks the tools; views.py is a helper kind; rank.py is named in the folder's docstring.
SHAPED = {
    "memo/__init__.py": '"""Memos.\n\n`rank.py` orders memos for the search tool."""\nfrom .records import SERVICE\n'
                        "from .tools import find_memo\nSERVICE.add_tools(find_memo)\n",
    "memo/records.py": "from workspace_sim.core.registry import Service\nfrom .rank import order\n"
                       "def _prepare(tables, config):\n    pass\n"
                       "SERVICE = Service('memo', {}, prepare=_prepare)\nMEMOS = SERVICE.table('memos')\n",
    "memo/tools.py": "from workspace_sim.core.registry import tool\nfrom .records import MEMOS\n"
                     "@tool(read_only=True)\ndef find_memo(ctx, text: str) -> dict:\n    return {}\n",
    "memo/views.py": "def line(m):\n    return str(m)\n",
    "memo/rank.py": "def order(ms):\n    return ms\n",
}


def test_a_service_folder_out_of_shape_is_told_why(tmp_path: Path) -> None:
    folder = _tree(tmp_path / "ok", SHAPED) / "memo"
    assert house_scan.service_folder_problems(folder) == []

    # SERVICE and its handle declared in tools.py (as 14 services once had it), records.py importing the tools,
    # and a helper file the docstring does not name.
    moved = {**SHAPED, "memo/records.py": "from .tools import find_memo\n",
             "memo/tools.py": "from workspace_sim.core.registry import Service, tool\n"
                              "SERVICE = Service('memo', {})\nMEMOS = SERVICE.table('memos')\n"
                              "@tool()\ndef find_memo(ctx, text: str) -> dict:\n    return {}\n",
             "memo/helpers.py": "X = 1\n"}
    problems = house_scan.service_folder_problems(_tree(tmp_path / "moved", moved) / "memo")
    assert problems == [
        "memo: records.py does not declare SERVICE (`SERVICE = Service(...)`)",
        "memo: tools.py declares `SERVICE = Service('memo', {})`; SERVICE, its table handles and its start-data "
        "check belong in records.py",
        "memo: records.py imports the tool module tools.py",
        "memo: helpers.py is not one of __init__.py, records.py, tools.py, views.py, syntax.py, and the folder's "
        "__init__ docstring does not say what it holds",
    ]
    # a handle taken in a second module, a tool module imported by records.py through the package's absolute name
    handle = {**SHAPED, "memo/views.py": "from .records import SERVICE\nNOTES = SERVICE.table('notes')\n",
              "memo/rank.py": "from workspace_sim.core.registry import tool\n@tool()\ndef rank(ctx) -> dict:\n"
                              "    return {}\n",
              "memo/records.py": SHAPED["memo/records.py"].replace("from .rank import order",
                                                                   "from workspace_sim.services.memo.rank import rank")}
    assert house_scan.service_folder_problems(_tree(tmp_path / "handle", handle) / "memo") == [
        "memo: views.py declares `NOTES = SERVICE.table('notes')`; SERVICE, its table handles and its start-data "
        "check belong in records.py",
        "memo: records.py imports the tool module rank.py",
    ]
    assert house_scan.service_folder_problems(_tree(tmp_path / "bare", {"memo/__init__.py": ""}) / "memo") == [
        "memo: the folder has no records.py", "memo: the folder has no tools.py"]


def test_a_lazy_import_that_closes_a_loop_is_a_circle(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from . import b\n",
                            "pkg/b.py": "def f():\n    from .a import x\n"})
    assert any(level == "modules" and sorted(c) == ["pkg.a", "pkg.b"] for level, c in house_scan.circles(root, PKG))


def test_a_type_checking_import_counts_and_subpackage_circles_show(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "pkg/__init__.py": "", "pkg/x/__init__.py": "", "pkg/y/__init__.py": "",
        "pkg/x/one.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..y.two import T\n",
        "pkg/y/two.py": "from ..x import three\n", "pkg/x/three.py": "T = 1\n"})
    found = house_scan.circles(root, PKG)
    assert ("pkg", ["pkg.x", "pkg.y"]) in found  # no two modules import each other, the subpackages do
    assert not any(level == "modules" for level, _ in found)


def test_one_way_imports_are_no_circle(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/__init__.py": "from .a import f\n", "pkg/a.py": "from .b import g\n",
                            "pkg/b.py": "import os\n"})
    assert house_scan.circles(root, PKG) == []


def test_long_files_and_functions_are_found_with_their_length(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(130))
    root = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/long.py": "def big():\n" + body + "\n" + "\n" * 600})
    assert house_scan.long_files(root) == [("pkg/long.py", 731)]
    assert house_scan.long_functions(root) == [("pkg/long.py:1", "big", 131)]
