"""A cold start without importlib.metadata: the server's version read from its dist-info folder, and pydantic's
plugin lookup skipped when no pydantic plugin is installed; each gives what the library's own lookup gives."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_server import identity
from mcp_server.identity import dist_info_version

ROOT = Path(__file__).resolve().parents[2]


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
    from workspace_sim.core.pydantic_plugins import LOADER
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


# --- the stdio server's first answer before its episode opens, tool models built on first use -------------------

INIT = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}\n')
SESSION = [INIT, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
           b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n',
           b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":'
           b'{"path":"/reports/q1.csv"}}}\n',
           b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":'
           b'{"path":"/reports/summary.md","content":"Total: 1234\\n","bogus":1}}}\n']
DEMO = ["serve", "--python", "mcp_server.demo:environment", "--episode-id", "cold-1"]

# the serve entry point, after (eager) importing and building everything a cold start leaves for later
EAGER = textwrap.dedent("""
    import sys
    import mcp_server.server, mcp_server.stdio, mcp, mcp_types  # the SDK and the server, loaded up front
    from workspace_sim.services import all_services
    for service in all_services().values():
        for tool in service.tools.values():
            tool.input_schema, tool.strict_input_schema  # every tool's model and schemas built before serving
    import coworkenv.cli
    sys.argv = ["coworkenv", *sys.argv[1:]]
    coworkenv.cli.main()
""")

# what a stdio server loads only after its first answer: the event loop and the HTTP side
STDIO_LATER = ("asyncio", "socket", "uvicorn", "starlette", "h11", "importlib.metadata", "email")
# notes, at the first answer, which of the files service's tools have built their arguments model (and which of
# STDIO_LATER are loaded)
LAZY_PROBE = textwrap.dedent("""
    import sys
    import mcp_server.first_answer as fa
    write = fa.write_answer
    def noting(answer):
        from workspace_sim.services.files import SERVICE
        built = sorted(n for n, t in SERVICE.tools.items() if "args_model" in vars(t))
        print("BUILT AT FIRST ANSWER:", built, file=sys.stderr, flush=True)
        print("LOADED AT FIRST ANSWER:", sorted(m for m in sys.modules if m in {loaded!r}), file=sys.stderr, flush=True)
        write(answer)
    fa.write_answer = noting
    import coworkenv.cli
    sys.argv = ["coworkenv", *sys.argv[1:]]
    coworkenv.cli.main()
""").replace("{loaded!r}", repr(STDIO_LATER))


def _stdio(args: list[str], record_dir: Path, lines: list[bytes], **env: str) -> tuple[bytes, str]:
    done = subprocess.run([sys.executable, *args, *DEMO, "--record-dir", str(record_dir)], input=b"".join(lines),
                          capture_output=True, timeout=120, cwd=ROOT, env={**os.environ, "PYTHONWARNINGS": "ignore", **env})
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout, done.stderr.decode()


def test_the_lazy_start_answers_as_a_fully_imported_process(tmp_path: Path) -> None:
    """initialize, tools/list, a read and a refused write: the same bytes whether the first answer came early
    with every tool model still unbuilt, or from a process that had loaded the SDK and built every tool first."""
    lazy, _ = _stdio(["-m", "coworkenv"], tmp_path / "lazy", SESSION)
    eager, _ = _stdio(["-c", EAGER], tmp_path / "eager", SESSION)
    sdk_only, _ = _stdio(["-c", EAGER], tmp_path / "sdk", SESSION, COWORKENV_STDIO_FIRST_ANSWER="0")
    assert lazy.count(b"\n") == 4 and b'north,400' in lazy and b"bogus" in lazy
    assert lazy == eager == sdk_only
    from workspace_sim.record import read_record_file

    records = [read_record_file(tmp_path / d / "cold-1.jsonl").segments[0] for d in ("lazy", "eager")]
    assert [r.header["tools"] for r in records][0] == [r.header["tools"] for r in records][1]


def test_the_first_answer_builds_no_tool_model_and_loads_no_event_loop(tmp_path: Path) -> None:
    _, err = _stdio(["-c", LAZY_PROBE], tmp_path, SESSION[:1])
    (line,) = [x for x in err.splitlines() if x.startswith("BUILT AT FIRST ANSWER:")]
    assert line == "BUILT AT FIRST ANSWER: []"
    (line,) = [x for x in err.splitlines() if x.startswith("LOADED AT FIRST ANSWER:")]
    assert line == "LOADED AT FIRST ANSWER: []"


def test_a_stop_signal_before_the_first_line_still_records_the_episode(tmp_path: Path) -> None:
    """The episode opens after the first answer; a SIGTERM while the server waits for that line opens and ends
    it, judged and recorded, as before."""
    import signal

    from workspace_sim.record import read_record_file

    proc = subprocess.Popen([sys.executable, "-m", "coworkenv", *DEMO, "--record-dir", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while "pipe_read" not in Path(f"/proc/{proc.pid}/wchan").read_text():  # blocked reading its first line
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        proc.kill()
    assert proc.stdout is not None and proc.stdout.read() == b""
    (seg,) = read_record_file(tmp_path / "cold-1.jsonl").segments
    assert seg.final is not None and seg.final["stop_reason"] == "user_ended" and seg.header["tools"]


def test_every_tool_model_builds_and_a_bad_one_is_named_at_first_use() -> None:
    """Tool models are built on first use, so their definition checks run then: every registered tool passes
    them (this suite is where a bad definition shows), and a bad one raises TypeError naming tool and argument."""
    from workspace_sim.core.registry import ToolHints, make_tool
    from workspace_sim.services import all_services

    for service in all_services().values():
        for tool in service.tools.values():
            assert tool.args_model.model_fields.keys() == tool.input_schema.get("properties", {}).keys()

    def bad(ctx: object, limit: int | None = 5) -> None:
        """A tool whose optional argument accepts None but defaults to something else.

        Args:
            limit: how many.
        """

    tool = make_tool(bad, "probe", ToolHints())
    with pytest.raises(TypeError, match="tool bad: argument limit accepts None, so its default must be None"):
        tool.args_model


UVICORN_PROBE = textwrap.dedent("""
    import importlib.metadata, sys
    from mcp_server.uvicorn_lean import config_and_server, is_lean
    Config, Server = config_and_server()
    import uvicorn
    lean = is_lean(uvicorn) and not any(m in sys.modules for m in ("click", "uvicorn.main", "watchfiles"))
    from uvicorn.lifespan.on import LifespanOn  # what config.load() imports for lifespan="on": `from uvicorn import Config`
    assert uvicorn.Config is Config and uvicorn.__version__ == importlib.metadata.version("uvicorn")
    run = uvicorn.run  # any other name: the real __init__ runs, and the package is what `import uvicorn` makes
    main = sys.modules["uvicorn.main"]
    assert run is main.run and uvicorn.main is main.main and uvicorn.Server is Server is main.Server
    assert not is_lean(uvicorn)
    assert set(uvicorn.__all__) <= set(vars(uvicorn))
    print("lean", lean)
""")


def test_uvicorn_without_its_command_line_then_whole_on_demand() -> None:
    done = subprocess.run([sys.executable, "-c", UVICORN_PROBE], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "lean True"


def test_uvicorn_already_imported_is_used_as_it_is() -> None:
    probe = "import sys, uvicorn\nfrom mcp_server.uvicorn_lean import config_and_server\n" \
            "assert config_and_server() == (uvicorn.Config, uvicorn.Server) and 'click' in sys.modules\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
