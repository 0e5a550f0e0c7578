"""A cold start without importlib.metadata: the server's version read from its dist-info folder, and pydantic's
plugin lookup skipped when no pydantic plugin is installed; each gives what the library's own lookup gives."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_server import identity
from mcp_server.identity import dist_info_version

ROOT = Path(__file__).resolve().parent.parent


def test_the_server_version_is_importlib_metadatas() -> None:
    identity.server_version.cache_clear()
    assert identity.server_version() == importlib.metadata.version("coworkenv")
    for name in ("coworkenv", "pydantic", "pydantic_core", "starlette", "uvicorn", "typing-extensions", "PyYAML"):
        try:
            expected = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            expected = None
        assert dist_info_version(name) in (expected, None), name
    assert dist_info_version("pydantic") == importlib.metadata.version("pydantic")
    assert dist_info_version("no-such-distribution-here") is None


names = st.sampled_from(["probe_pkg", "Probe-Pkg", "probe.pkg", "probe__pkg", "PROBE_PKG", "other_pkg"])
versions = st.from_regex(r"\A[0-9]{1,3}(\.[0-9]{1,3}){0,2}(rc[0-9])?\Z")
folders = st.lists(st.tuples(names, versions, st.sampled_from(["dist-info", "egg-info"]),
                             st.sampled_from(["METADATA", "PKG-INFO", "both", "none"]), st.booleans()),
                   min_size=0, max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=folders, second=folders, asked=names)
def test_a_version_found_is_the_one_importlib_metadata_finds(monkeypatch: pytest.MonkeyPatch, first: list,
                                                             second: list, asked: str) -> None:
    """Distributions in two folders at the front of sys.path (names spelled every way, dist-info and egg-info,
    METADATA or PKG-INFO or neither, a Version header or none): where the fast lookup answers, it answers what
    importlib.metadata.version does."""
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        for root, made in ((a, first), (b, second)):
            for name, version, kind, meta, with_version in made:
                folder = Path(root) / f"{name}-{version}.{kind}"
                folder.mkdir(exist_ok=True)
                text = f"Metadata-Version: 2.1\nName: {name}\n" + (f"Version: {version}\n" if with_version else "") \
                       + "\nA description with\nVersion: 9.9.9 in it\n"
                for file in {"METADATA": ["METADATA"], "PKG-INFO": ["PKG-INFO"], "both": ["METADATA", "PKG-INFO"],
                             "none": []}[meta]:
                    (folder / file).write_text(text)
        monkeypatch.setattr(sys, "path", [a, b, *sys.path])
        try:
            expected = importlib.metadata.version(asked)
        except importlib.metadata.PackageNotFoundError:
            expected = "absent"
        fast = dist_info_version(asked)
        if fast is not None:
            assert fast == expected


PLUGIN_PROBE = textwrap.dedent("""
    import sys
    import workspace_sim  # puts the stand-in in place before its models, when no plugin is installed
    from workspace_sim.pydantic_plugins import LOADER
    skipped = (sys.modules[LOADER].__doc__ or "").startswith("Stand-in")
    import pydantic

    class M(pydantic.BaseModel):
        x: int

    assert M(x="3").x == 3
    from pydantic.plugin import _loader
    print("skipped", skipped, "metadata", "importlib.metadata" in sys.modules, "plugins", len(list(_loader.get_plugins())),
          "group", _loader.PYDANTIC_ENTRY_POINT_GROUP)
    import probe_plugin_calls
    print("plugin calls", probe_plugin_calls.CALLS)
""")


def _probe(tmp_path: Path, plugin: bool) -> str:
    (tmp_path / "probe_plugin_calls.py").write_text("CALLS = []\n")
    if plugin:
        (tmp_path / "probe_plugin.py").write_text(textwrap.dedent("""
            import probe_plugin_calls

            class Plugin:
                def new_schema_validator(self, schema, schema_type, schema_type_path, schema_kind, config, settings):
                    probe_plugin_calls.CALLS.append(schema_type_path.name)
                    return None, None, None

            plugin = Plugin()
        """))
        info = tmp_path / "probe_plugin-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: probe_plugin\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text("[pydantic]\nprobe = probe_plugin:plugin\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    done = subprocess.run([sys.executable, "-c", PLUGIN_PROBE], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_without_a_pydantic_plugin_its_lookup_is_skipped(tmp_path: Path) -> None:
    out = _probe(tmp_path, plugin=False)
    assert "skipped True metadata False plugins 0 group pydantic" in out  # the stand-in reads other names for real
    assert "plugin calls []" in out


def test_an_installed_pydantic_plugin_is_still_loaded(tmp_path: Path) -> None:
    out = _probe(tmp_path, plugin=True)
    assert "skipped False metadata True plugins 1" in out
    assert "'M'" in out and "'WorkspaceConfig'" in out
