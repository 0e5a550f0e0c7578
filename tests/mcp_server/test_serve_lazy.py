"""`coworkenv serve`'s first answer comes before the `mcp` SDK is loaded, and is the SDK's answer byte for byte.

The stdio server answers a plain `initialize` or `server/discover` itself (`mcp_server.first_answer`);
the HTTP server answers admin requests without the SDK, which it loads for the first MCP request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage
from mcp_types import version as sdk_version

from mcp_server import first_answer as fa
from mcp_server.control import ControlOptions
from mcp_server.environment import PythonEnvironment
from mcp_server.episode import Episode
from mcp_server.server import build_server
from trainers.episodes.harness_client import EpisodeClient, ServerConnection
from workspace_sim import Workspace, WorkspaceConfig

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"
SDK_PREFIXES = ("mcp", "mcp_types")
# What the first answer must not load either: the predicate kinds the served environment does not use (the demo's
# are file, unchanged and only_changed), the files service's media readers and libraries, yaml (tool output), and
# typer (an ordinary serve line is read by coworkenv.commands.serve_lean), any WebSocket library (uvicorn runs
# with ws="none"), and importlib.metadata (the version comes from the dist-info folder, pydantic's plugin lookup is
# skipped when none is installed: workspace_sim.core.pydantic_plugins), and uvicorn's command line and reload
# supervisors (mcp_server.uvicorn_lean), and RE2 (no pattern is compiled before a tool or a judge needs one).
LAZY = ("yaml", "typer", "websockets", "wsproto", "importlib.metadata", "click", "watchfiles", "uvicorn.main",
        "uvicorn.supervisors", "multiprocessing", "re2", "PIL", "openpyxl", "fpdf", "pypdf", "pypdfium2", "docx", "pptx",
        *(f"workspace_sim.predicates.{m}" for m in ("combinators", "evaluation", "judged", "mail", "calendar",
                                                    "records", "reads", "secrets", "calls")),
        *(f"workspace_sim.media.{m}" for m in ("images", "audio", "pdf", "documents")))

# The serve entry point in a fresh interpreter: it notes which SDK modules are loaded when it writes its first
# answer (stdio) or answers its first admin request (HTTP), then runs as usual.
PROBE = """
import sys
import coworkenv.cli

def sdk_loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in {prefixes!r})

def lazy_loaded():
    return sorted(m for m in sys.modules if m in {lazy!r} or m.split(".")[0] in {lazy!r})

import mcp_server.first_answer as fa
write = fa.write_answer
def noting(answer):
    print("SDK AT FIRST ANSWER:", sdk_loaded(), file=sys.stderr, flush=True)
    print("LAZY AT FIRST ANSWER:", lazy_loaded(), file=sys.stderr, flush=True)
    write(answer)
fa.write_answer = noting

import mcp_server.http as http
create = http.AdminApi.create
async def noting_create(self, request):
    print("SDK AT FIRST ANSWER:", sdk_loaded(), file=sys.stderr, flush=True)
    print("LAZY AT FIRST ANSWER:", lazy_loaded(), file=sys.stderr, flush=True)
    return await create(self, request)
http.AdminApi.create = noting_create

sys.argv = ["coworkenv", *sys.argv[1:]]
coworkenv.cli.main()
""".format(prefixes=SDK_PREFIXES, lazy=LAZY)


def init_line(rid: Any = 1, version: str = "2025-06-18", **params: Any) -> bytes:
    body = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}, **params}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": body}).encode() + b"\n"


def discover_line(rid: Any = 1, version: str = "2026-07-28") -> bytes:
    meta = {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "server/discover", "params": {"_meta": meta}}).encode() + b"\n"


def serve(tmp_path: Path, lines: list[bytes], *extra: str, early: bool = True, probe: bool = False) -> tuple[bytes, str]:
    """stdout and stderr of `coworkenv serve` (stdio) fed these lines."""
    args = ["-c", PROBE] if probe else ["-m", "coworkenv"]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", fa.FIRST_ANSWER_ENV: "1" if early else "0"}
    proc = subprocess.run([sys.executable, *args, "serve", *extra, "--record-dir", str(tmp_path)], input=b"".join(lines),
                          capture_output=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return proc.stdout, proc.stderr.decode()


def sdk_at_first_answer(stderr: str, what: str = "SDK") -> list[str]:
    (line,) = [x for x in stderr.splitlines() if x.startswith(f"{what} AT FIRST ANSWER:")][:1]
    return json.loads(line.split(":", 1)[1].strip().replace("'", '"'))


DEMO = ("--python", "mcp_server.demo:environment")


def test_the_stdio_first_answer_loads_no_sdk_module(tmp_path: Path) -> None:
    call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/reports/q1.csv"}}}\n'
    out, err = serve(tmp_path, [init_line(), b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n', call],
                     *DEMO, probe=True)
    assert sdk_at_first_answer(err) == []
    assert sdk_at_first_answer(err, "LAZY") == []
    first, second = [json.loads(x) for x in out.splitlines()]  # the SDK, loaded after, answered the call
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "coworkenv"
    assert second["id"] == 2 and "north,400" in second["result"]["content"][0]["text"]


def test_the_http_first_create_loads_no_sdk_module(tmp_path: Path) -> None:
    token = "lazy-test-admin-token-0123"
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "COWORKENV_ADMIN_TOKEN": token}
    proc = subprocess.Popen([sys.executable, "-c", PROBE, "serve", *DEMO, "--http", "--port", "0", "--record-dir",
                             str(tmp_path)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
                            cwd=ROOT)
    assert proc.stderr is not None
    try:
        url = None
        for line in proc.stderr:
            if "listening on " in line:
                url = line.split("listening on ", 1)[1].split()[0]
                break
        assert url is not None
        conn = ServerConnection(url, token)
        try:
            for _ in range(500):
                try:
                    made = conn.admin("POST", "/admin/episodes", {})
                    break
                except httpx2.ConnectError:
                    time.sleep(0.01)
            assert made.status_code == 201, made.text
            assert sdk_at_first_answer(proc.stderr.readline()) == []
            assert sdk_at_first_answer(proc.stderr.readline(), "LAZY") == []
            result = EpisodeClient(conn, made.json()["mcp_path"]).call_tool("read_text_file", {"path": "/reports/q1.csv"})
            assert "north,400" in result["content"][0]["text"]  # the SDK, loaded now, checked and answered it
        finally:
            conn.close()
    finally:
        proc.terminate()
        proc.wait(30)


CASES = [
    ("initialize", [init_line()], DEMO),
    ("initialize, oldest version, string id", [init_line("a-1", "2024-11-05")], DEMO),
    ("initialize, unknown version (the latest handshake one is offered)", [init_line(3, "1999-01-01")], DEMO),
    ("initialize with client capabilities", [init_line(4, capabilities={"roots": {"listChanged": True},
                                                                        "sampling": {}, "elicitation": {}})], DEMO),
    ("server/discover", [discover_line()], DEMO),
    ("MCP-only, scored", [init_line()], (*DEMO, "--mcp-only", "--reveal-score")),
    ("MCP-only discover, a multi-day spec", [discover_line(9)], (str(SPEC), "--mcp-only")),
    ("a spec", [init_line(5, "2025-11-25")], (str(SPEC),)),
    ("left to the SDK: discover of a handshake version", [discover_line(6, "2025-06-18")], DEMO),
    ("left to the SDK: bad client info", [init_line(8, clientInfo={"name": 3})], DEMO),
]


@pytest.mark.parametrize("name,lines,extra", CASES, ids=[c[0] for c in CASES])
def test_the_first_answer_is_the_sdks_byte_for_byte(tmp_path: Path, name: str, lines: list[bytes],
                                                    extra: tuple[str, ...]) -> None:
    then = [b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n']  # the session goes on as before
    early, err = serve(tmp_path / "early", lines + then, *extra)
    sdk, _ = serve(tmp_path / "sdk", lines + then, *extra, early=False)
    assert early == sdk and len(early.splitlines()) == 2
    assert "differs" not in err


def test_the_mirrored_constants_are_the_sdks() -> None:
    assert fa.HANDSHAKE_VERSIONS == sdk_version.HANDSHAKE_PROTOCOL_VERSIONS
    assert fa.LATEST_HANDSHAKE == sdk_version.LATEST_HANDSHAKE_VERSION
    assert fa.MODERN_VERSIONS == sdk_version.MODERN_PROTOCOL_VERSIONS


def _env(title: str, user: str) -> PythonEnvironment:
    return PythonEnvironment(id="lazy-probe", title=title, task="Say hello.",
                             workspace_factory=lambda: Workspace.create(WorkspaceConfig(user=user, services=["files"])))


async def _sdk_answer(episode: Episode, line: bytes) -> bytes:
    """The SDK's stdio answer to one line: its lowlevel server over memory streams, dumped as its writer does."""
    server = build_server(episode)
    lowlevel = server._lowlevel_server
    send_in, read_in = anyio.create_memory_object_stream[Any](4)
    send_out, read_out = anyio.create_memory_object_stream[Any](4)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lowlevel.run, read_in, send_out, lowlevel.create_initialization_options())
        await send_in.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False)))
        with anyio.fail_after(20):
            out = await read_out.receive()
        tg.cancel_scope.cancel()
    return out.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
client_info = st.fixed_dictionaries({"name": texts, "version": texts}, optional={"title": texts})
capabilities = st.fixed_dictionaries({}, optional={
    "roots": st.fixed_dictionaries({}, optional={"listChanged": st.booleans()}),
    "sampling": st.just({}), "elicitation": st.just({})})
versions = st.sampled_from([*sdk_version.KNOWN_PROTOCOL_VERSIONS, "2099-01-01", ""]) | texts
ids = st.integers(-(1 << 52), 1 << 52) | texts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=texts, rid=ids, version=versions, info=client_info, caps=capabilities, discover=st.booleans(),
       mcp_only=st.booleans())
def test_every_early_answer_is_the_sdks(title: str, rid: Any, version: str, info: dict[str, str],
                                        caps: dict[str, Any], discover: bool, mcp_only: bool) -> None:
    episode = Episode(_env(title, "ana@example.com"), control=ControlOptions(True, False) if mcp_only else None)
    if discover:
        meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientInfo": info,
                "io.modelcontextprotocol/clientCapabilities": caps}
        msg = {"jsonrpc": "2.0", "id": rid, "method": "server/discover", "params": {"_meta": meta}}
    else:
        msg = {"jsonrpc": "2.0", "id": rid, "method": "initialize",
               "params": {"protocolVersion": version, "capabilities": caps, "clientInfo": info}}
    line = json.dumps(msg, ensure_ascii=bool(rid == 0)).encode() + b"\n"
    early = fa.first_answer(line, episode)
    if discover and version not in fa.MODERN_VERSIONS:
        assert early is None  # refused by the SDK (unsupported version): its error, not ours
        return
    assert early is not None and early[0] == rid
    assert early[1] == anyio.run(_sdk_answer, episode, line)


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
    b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
    b'"clientInfo":{"name":"x","version":"0"},"_meta":{"progressToken":1}}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{"experimental":{"x":{}}},"clientInfo":{"name":"x","version":"0"}}}\n',
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{"roots":{"listChanged":1}},"clientInfo":{"name":"x","version":"0"}}}\n',
    b'{bad json\n',
], ids=["ping", "bool id", "meta", "experimental", "non-bool flag", "not JSON"])
def test_anything_unusual_is_left_to_the_sdk(line: bytes) -> None:
    assert fa.first_answer(line, Episode(_env("t", "ana@example.com"))) is None


def test_preread_hands_out_the_first_line_then_the_stream(tmp_path: Path) -> None:
    path = tmp_path / "in"
    path.write_bytes(b"rest of line\nsecond\n")
    with open(path, "rb") as source:
        stream = fa.PreRead(b"first, cut ", source)
        assert stream.readline(8) == b"first, c"
        assert stream.readline() == b"ut rest of line\n"
        assert stream.readline() == b"second\n" and stream.readline() == b""
