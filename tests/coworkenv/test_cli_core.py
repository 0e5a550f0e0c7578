"""The core CLI commands: version, tools (and the generated tools reference staying current)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from coworkenv.cli import app
from workspace_sim import all_tools

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_help_and_version() -> None:
    out = subprocess.run([sys.executable, "-m", "coworkenv", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and "version" in out.stdout
    r = runner.invoke(app, ["version"])
    assert r.exit_code == 0 and r.output.startswith("coworkenv ")


def test_tools_json_comes_from_the_registry() -> None:
    r = runner.invoke(app, ["tools", "--format", "json"])
    assert r.exit_code == 0
    listed = {t["name"]: t for t in json.loads(r.output)}
    assert set(listed) == set(all_tools())
    for name, tool in all_tools().items():
        assert listed[name]["inputSchema"] == tool.input_schema


def test_tools_errors_are_clear() -> None:
    r = runner.invoke(app, ["tools", "--service", "fax"])
    assert r.exit_code != 0 and "unknown service" in r.output
    r = runner.invoke(app, ["tools", "--format", "xml"])
    assert r.exit_code != 0 and "markdown" in r.output


def test_docs_tools_reference_is_current() -> None:
    r = runner.invoke(app, ["tools", "--format", "markdown"])
    committed = (ROOT / "docs" / "tools.md").read_text()
    assert r.output.strip() == committed.strip(), "regenerate: coworkenv tools --format markdown > docs/tools.md"


def test_ray_option_value_may_be_left_out() -> None:
    from coworkenv.cli import fill_optional_values

    assert fill_optional_values(["run", "envs", "--ray"]) == ["run", "envs", "--ray", "local"]
    assert fill_optional_values(["run", "envs", "--ray", "--workers", "2"]) == ["run", "envs", "--ray", "local", "--workers", "2"]
    assert fill_optional_values(["run", "envs", "--ray", "head-node:6379"]) == ["run", "envs", "--ray", "head-node:6379"]


def test_public_api_is_reexported() -> None:
    import coworkenv

    for name in coworkenv.__all__:
        assert getattr(coworkenv, name) is not None, name
    spec = coworkenv.generate("file_management", 0)
    assert coworkenv.run_episode(spec, coworkenv.make_policy("teacher")).passed
