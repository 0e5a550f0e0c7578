"""The house rules hold on the whole project (no import circle at any level, no file over 700 lines, no function
over 120, services only in the one folder shape), and the scan that checks them finds what it should."""

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
    folders = [p for p in services.iterdir() if p.is_dir() and not p.name.startswith("__")]
    assert len(folders) >= 18
    for folder in folders:
        assert (folder / "__init__.py").is_file() and (folder / "records.py").is_file(), folder.name


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
