"""run_python: snippets in a bubblewrap sandbox; files round trip, limits, and no way to the host."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from support import need

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.errors import SpecError
from workspace_sim.predicates import evaluate, parse_predicates
from workspace_sim.sandboxes.bwrap import layout
from workspace_sim.sandboxes.python_sandbox import isolation_status
from workspace_sim.sandboxes.settings import SandboxSettings

ROOT = Path(__file__).resolve().parents[2]


def need_sandbox(settings: SandboxSettings) -> None:
    """Skip (fail under COWORKENV_NO_SKIP=1) when run_python's sandbox cannot run with `settings`."""
    ok, reason = isolation_status(settings)
    need(ok, f"{reason} (.ci/setup_bwrap.sh installs it)")


@pytest.fixture(autouse=True)
def isolated(request: pytest.FixtureRequest) -> None:
    """Every test here but those marked `no_bwrap` needs a working bubblewrap sandbox."""
    if request.node.get_closest_marker("no_bwrap") is None:
        need_sandbox(SandboxSettings())


@pytest.mark.no_bwrap
def test_a_missing_sandbox_skips_or_fails_as_coworkenv_no_skip_says(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    missing = SandboxSettings(bwrap=str(tmp_path / "no-bwrap"))
    monkeypatch.setenv("COWORKENV_NO_SKIP", "1")
    with pytest.raises(pytest.fail.Exception, match="required in CI: run_python needs an isolated sandbox"):
        need_sandbox(missing)
    monkeypatch.delenv("COWORKENV_NO_SKIP")
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        need_sandbox(missing)

FILES = {"files": {"files": [
    {"path": "/data/sales.csv", "content": "region,amount\nnorth,10\nsouth,5\nnorth,7\n"},
    {"path": "/notes/old.txt", "content": "obsolete\n"},
    {"path": "/config.json", "content": '{"threshold": 8}'},
]}}


def make(**sandbox: object) -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox=dict(sandbox)), FILES)


def test_file_round_trip_becomes_a_diff_that_predicates_check() -> None:
    ws = make()
    code = """
import csv, json, os, pathlib
rows = list(csv.DictReader(open("/data/sales.csv")))
limit = json.loads(pathlib.Path("/config.json").read_text())["threshold"]
totals = {}
for r in rows:
    totals[r["region"]] = totals.get(r["region"], 0) + int(r["amount"])
os.makedirs("/reports", exist_ok=True)
with open("/reports/totals.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "total", "over"])
    for k in sorted(totals):
        w.writerow([k, totals[k], totals[k] > limit])
os.remove("/notes/old.txt")
pathlib.Path("/config.json").write_text(json.dumps({"threshold": limit, "done": True}))
print("regions:", len(totals))
"""
    r = ws.call("run_python", {"code": code})
    assert r.ok, r.text
    assert r.data["status"] == "ok" and r.data["exit_code"] == 0
    assert r.data["stdout"] == "regions: 2\n"
    assert r.data["files"] == {"written": ["/config.json", "/reports/totals.csv"], "deleted": ["/notes/old.txt"],
                               "folders_created": ["/reports"], "folders_deleted": []}
    assert r.diff.summary() == {"files.files": {"added": 1, "changed": 1, "removed": 1},
                                "files.folders": {"added": 1}}
    preds = parse_predicates([
        {"kind": "file", "path": "/reports/totals.csv", "csv_rows": 2,
         "csv_cell": {"row": {"region": "north"}, "column": "total", "value": "17"}},
        {"kind": "file", "path": "/config.json", "json_field": {"path": "done", "value": True}},
        {"kind": "file", "path": "/notes/old.txt", "exists": False},
        {"kind": "only_changed", "scopes": ["files"]},
    ])
    ev = evaluate(preds, ws)
    assert ev.passed, ev.to_json()
    assert "written: /config.json, /reports/totals.csv" in r.text


def test_shutil_glob_and_pathlib_work_on_the_workspace() -> None:
    ws = make()
    code = """
import glob, pathlib, shutil
shutil.copytree("/data", "/backup")
shutil.copy("/config.json", "/backup/config.json")
print(sorted(glob.glob("/**/*.csv", recursive=True)))
shutil.rmtree("/notes")
shutil.move("/backup", "/archive")
print(sorted(p.name for p in pathlib.Path("/archive").iterdir()))
"""
    r = ws.call("run_python", {"code": code})
    assert r.data["status"] == "ok", r.text
    assert r.data["stdout"].splitlines() == ["['/backup/sales.csv', '/data/sales.csv']", "['config.json', 'sales.csv']"]
    assert r.data["files"] == {"written": ["/archive/config.json", "/archive/sales.csv"],
                               "deleted": ["/notes/old.txt"], "folders_created": ["/archive"],
                               "folders_deleted": ["/notes"]}


def test_snippets_are_isolated_and_deterministic() -> None:
    ws = make()
    code = "import random\nprint(random.random(), sorted({'b', 'a'}), list({'x', 'y', 'z'}))\nX = 1"
    a = ws.fork().call("run_python", {"code": code})
    b = ws.fork().call("run_python", {"code": code})
    assert a.ok and a.data == b.data  # same seed, same hash seed: same bytes
    c = ws.call("run_python", {"code": "print('X' in globals())"})
    assert c.data["stdout"] == "False\n"  # nothing carries over between calls


def test_errors_are_results_with_a_clean_traceback_and_keep_earlier_writes() -> None:
    ws = make()
    r = ws.call("run_python", {"code": "open('/partial.txt', 'w').write('half')\n1/0\n"})
    assert r.ok and r.data["status"] == "error" and r.data["exit_code"] == 1
    assert r.data["error"] == "ZeroDivisionError: division by zero"
    assert 'File "<run_python>", line 2' in r.data["stderr"] and "<string>" not in r.data["stderr"]
    assert ws.table("files.files")["/partial.txt"].content == "half"  # like a real script that crashed
    s = ws.call("run_python", {"code": "def f(:\n  pass"})
    assert s.data["status"] == "error" and s.data["error"].startswith("SyntaxError")
    e = ws.call("run_python", {"code": "import sys; print('bye'); sys.exit(3)"})
    assert e.data["status"] == "ok" and e.data["exit_code"] == 3 and e.data["stdout"] == "bye\n"


def test_bad_arguments_are_refused_clearly() -> None:
    ws = make()
    for args, needle in [({"code": "  "}, "code is empty"), ({"code": "x" * 100_001}, "longer than"),
                         ({}, "code"), ({"code": 5}, "code"), ({"code": "a\x00b"}, "NUL")]:
        r = ws.call("run_python", args)
        assert not r.ok and r.error.code == "invalid_argument" and needle in r.error.message, r.text


def test_wall_time_limit_stops_the_code_and_keeps_what_it_wrote() -> None:
    ws = make(python_timeout_s=1)
    t0 = time.monotonic()
    r = ws.call("run_python", {"code": "open('/started.txt','w').write('yes')\nwhile True:\n    pass\n"})
    assert time.monotonic() - t0 < 8
    assert r.ok and r.data["status"] == "timeout"
    assert any("time limit" in n for n in r.data["notes"])
    assert "/started.txt" in ws.table("files.files")
    # code that defeats the soft stop is killed hard; then nothing it wrote is kept
    r = ws.call("run_python", {"code": "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                        "open('/x.txt','w').write('x')\nwhile True:\n    pass\n"})
    assert r.data["status"] == "timeout" and "/x.txt" not in ws.table("files.files")
    assert any("not saved" in n for n in r.data["notes"])
    assert ws.call("run_python", {"code": "print(2)"}).data["stdout"] == "2\n"  # the worker is fine


def test_memory_limit() -> None:
    ws = make(python_memory_mb=128)
    r = ws.call("run_python", {"code": "x = bytearray(512 * 1024 * 1024)"})
    assert r.data["status"] == "error" and r.data["error"].startswith("MemoryError")
    assert "128 MB" in r.data["error"]


def test_disk_limit_and_a_workspace_larger_than_it() -> None:
    big = {"files": {"files": [{"path": "/big.txt", "content": "x" * (3 << 20)}]}}
    code = "import os\nprint(os.path.getsize('/big.txt'))\nopen('/more.bin', 'wb').write(b'y' * (4 << 20))"
    # Under the default workspace limits the partly written 2 MB file is itself too large a record:
    # the call is refused whole, naming the limit, and nothing changes.
    ws = Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox={"work_mb": 1}), big)
    r = ws.call("run_python", {"code": code})
    assert r.error is not None and r.error.code == "limit_exceeded" and "max_record_chars" in r.error.message
    ws = Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox={"work_mb": 1},
                                          limits={"max_record_chars": 20_000_000}), big)
    r = ws.call("run_python", {"code": code})
    assert r.data["stdout"] == f"{3 << 20}\n" and r.data["status"] == "error", r.text  # the whole workspace is there
    assert "No space left on device" in r.data["error"]
    r = ws.call("run_python", {"code": "open('/tmp/scratch', 'wb').write(b'z' * (2 << 20))"})
    assert "No space left on device" in r.data["error"]  # /tmp has work_mb too


def test_concurrent_calls_do_not_mix() -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> str:
        ws = make()
        code = f"open('/mine.txt', 'w').write('{i}')\nimport os\nprint(os.listdir('/data'))"
        r = ws.call("run_python", {"code": code})
        assert r.data["stdout"] == "['sales.csv']\n", r.text
        return ws.table("files.files")["/mine.txt"].content

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(one, range(8))) == [str(i) for i in range(8)]


def test_output_is_truncated_with_a_note() -> None:
    ws = make(output_bytes=1000)
    r = ws.call("run_python", {"code": "print('A' * 5000 + 'END')"})
    assert r.data["stdout"].startswith("A" * 400) and r.data["stdout"].rstrip().endswith("END")
    assert "bytes of output left out" in r.data["stdout"] and len(r.data["stdout"]) < 1200
    assert any("truncated" in n for n in r.data["notes"])


def test_writes_to_other_paths_land_in_the_workspace_and_never_on_the_host(tmp_path: Path) -> None:
    ws = make()
    here = Path("/opt") / f"coworkenv-probe-{uuid.uuid4().hex}"  # a real host folder, never /tmp scratch
    tmp_probe = tmp_path / "probe.txt"
    code = f"""
import os, io, pathlib
os.makedirs({str(here)!r}, exist_ok=True)
open({str(here / 'a.txt')!r}, "w").write("sandboxed")
io.FileIO({str(here) + '-real.txt'!r}, "w").write(b"raw")
pathlib.Path({str(tmp_probe)!r}).parent.mkdir(parents=True, exist_ok=True)
pathlib.Path({str(tmp_probe)!r}).write_text("scratch")
try:
    import subprocess; subprocess.run(["touch", {str(here) + '-proc'!r}])
except PermissionError as e:
    print("refused:", e)
"""
    r = ws.call("run_python", {"code": code})
    assert r.ok and r.data["status"] == "ok", r.text
    assert r.data["stdout"].startswith("refused:")
    for p in (here, Path(str(here) + "-real.txt"), Path(str(here) + "-proc"), tmp_probe):
        assert not os.path.exists(p), p
    # the writes landed in the workspace (the snippet's whole file system is the workspace), /tmp stayed scratch
    files = ws.table("files.files")
    assert files[str(here / "a.txt")].content == "sandboxed" and files[str(here) + "-real.txt"].content == "raw"
    assert not any(k.startswith("/tmp") for k in files)


def test_workspace_paths_under_the_sandboxs_own_mounts_are_left_alone() -> None:
    ws = Workspace.create(WorkspaceConfig(services=["files", "python"]), {"files": {"files": [
        {"path": "/dev/notes.txt", "content": "kept"}, {"path": "/a.txt", "content": "a"}]}})
    r = ws.call("run_python", {"code": "import os\nprint(os.path.exists('/dev/notes.txt'))\nos.remove('/a.txt')"})
    assert r.data["stdout"] == "False\n" and r.data["files"]["deleted"] == ["/a.txt"], r.text
    assert any("/dev/notes.txt" in n and "not visible" in n for n in r.data["notes"])
    assert ws.table("files.files")["/dev/notes.txt"].content == "kept"


def test_a_forged_answer_is_refused_and_changes_nothing() -> None:
    ws = make()
    before = ws.content_hash
    for forged in ({"removed": ["/etc/passwd"]}, {"put": {"/../x": ""}}, {"put": {"/x": "!!"}}, {"status": "won"}):
        doc = {"status": "ok", "exit_code": 0, "error": None, "ignored": [], "vm": None, "put": {}, "removed": [],
               "new_dirs": [], "removed_dirs": [], **forged}
        code = f"import os, sys\nos.write(int(sys.argv[1]), {json.dumps(doc).encode()!r})\nos._exit(0)"
        r = ws.call("run_python", {"code": code})
        assert r.ok and r.data["status"] == "killed" and "answer was refused" in r.data["error"], r.text
    assert ws.content_hash == before


# --- the sandbox against a hostile snippet -------------------------------------------------------

_ATTACKS = {
    "fileio": """
import _io
for p in PATHS:
    try:
        print(_io.FileIO(p).read()[:300])
    except OSError as e:
        print(type(e).__name__)
""",
    "posix_open": """
import posix
for p in PATHS:
    try:
        fd = posix.open(p, posix.O_RDONLY)
        print(posix.read(fd, 300))
    except OSError as e:
        print(type(e).__name__)
""",
    "mmap": """
import mmap, posix
for p in PATHS:
    try:
        fd = posix.open(p, posix.O_RDONLY)
        print(mmap.mmap(fd, 0, prot=mmap.PROT_READ)[:300])
    except OSError as e:
        print(type(e).__name__)
""",
    "proc": """
import os
try:
    pids = os.listdir('/proc')
except OSError as e:
    print('no /proc:', type(e).__name__)
    pids = []
for pid in pids:
    for name in ('cmdline', 'environ'):
        try:
            print(pid, name, open(f'/proc/{pid}/{name}', 'rb').read())
        except OSError as e:
            pass
""",
    "dump": """
import gc, os, sys
seen = [repr(sys.argv), repr(dict(os.environ)), repr(sys.path)]
for o in gc.get_objects():
    for r in gc.get_referents(o):
        if isinstance(r, (str, bytes)):
            seen.append(repr(r))
open('/dump.txt', 'w').write('\\n'.join(seen))
print('objects', len(seen) > 1000, 'environ', sorted(os.environ))
""",
    "listdir": "import os\nprint(json.dumps(sorted(os.listdir('/'))))\n",
    "ctypes": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print('fork', libc.fork(), ctypes.get_errno())
print('open', libc.open(b'/etc/passwd', 0), ctypes.get_errno())
""",
    "network": """
import socket
for addr in [('127.0.0.1', PORT), ('1.1.1.1', 53), ('8.8.8.8', 443)]:
    try:
        socket.create_connection(addr, timeout=1)
        print('connected', addr)
    except OSError as e:
        print('refused', type(e).__name__)
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect('/var/run/docker.sock')
    print('connected unix')
except OSError as e:
    print('refused', type(e).__name__)
""",
    "fork_bomb": """
import os, subprocess, threading
n = 0
try:
    while True:
        os.fork()
        n += 1
except OSError as e:
    print('forks', n, type(e).__name__)
try:
    subprocess.run(['/bin/sh', '-c', 'true'])
except OSError as e:
    print('subprocess', type(e).__name__)
ts = [threading.Thread(target=sum, args=([1, 2],)) for _ in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
print('threads ok')
""",
}

_DRIVER = """
import json, sys
from workspace_sim import Workspace, WorkspaceConfig
attacks, paths, port = json.loads(sys.stdin.read())
ws = Workspace.create(WorkspaceConfig(services=["files", "python"]),
                      {"files": {"files": [{"path": "/data/a.txt", "content": "hello"}]}})
out = {}
for name, code in attacks.items():
    prelude = f"import json\\nPATHS = {paths!r}\\nPORT = {port}\\n"
    out[name] = ws.call("run_python", {"code": prelude + code}).data
out["files"] = {p: f.content for p, f in ws.table("files.files").items()}
print(json.dumps(out))
"""


def test_hostile_snippets_find_neither_the_spec_the_token_nor_host_files(tmp_path: Path) -> None:
    token = "tok-" + uuid.uuid4().hex
    spec_marker = "reference-answer-" + uuid.uuid4().hex
    spec = tmp_path / "episode-spec.yaml"
    spec.write_text(f"predicates:\n  - kind: file\n    path: /answer.txt\n    equals: {spec_marker}\n")
    host_marker = "host-file-" + uuid.uuid4().hex
    host_file = tmp_path / "host.txt"
    host_file.write_text(host_marker)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    paths = ["/etc/passwd", "/etc/hostname", str(spec), str(host_file), "/proc/1/environ", "/proc/self/environ"]
    # the spec path is in the parent's argv and environment, the token in its environment
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COWORKENV_ADMIN_TOKEN": token, "COWORKENV_SPEC": str(spec)}
    proc = subprocess.run([sys.executable, "-c", _DRIVER, str(spec)], input=json.dumps([_ATTACKS, paths, port]),
                          capture_output=True, text=True, env=env, timeout=120, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    everything = proc.stdout
    for secret in (token, spec_marker, host_marker, "root:x:0:0", "COWORKENV"):
        assert secret not in everything, secret
    for name in ("fileio", "posix_open", "mmap"):
        assert results[name]["stdout"].split() == ["FileNotFoundError"] * len(paths), results[name]
    assert results["proc"]["stdout"] == "no /proc: FileNotFoundError\n"
    dump = results["files"]["/dump.txt"]
    argv, environ = dump.split("\n")[:2]  # the path is in the snippets' own code, never in what they were given
    assert str(spec) not in argv + environ and str(tmp_path) not in argv + environ, (argv, environ)
    assert len(dump) > 10_000 and "environ ['HOME', 'LANG', 'PWD', 'PYTHONDONTWRITEBYTECODE', 'PYTHONHASHSEED', " \
        "'PYTHONUTF8']" in results["dump"]["stdout"]
    top = set(json.loads(results["listdir"]["stdout"]))
    system = {m.split("/")[1] for m in layout("bwrap").mounts} - {"proc"}
    # only the workspace, scratch, /dev and the interpreter's paths
    assert top - system == {"data", "dump.txt", "dev", "tmp"} - system, top
    assert not top & {"etc", "home", "var", "opt", "srv", "work", "proc", "sys", "run"}
    assert results["ctypes"]["stdout"] == "fork -1 1\nopen -1 2\n"  # EPERM, ENOENT
    net = results["network"]["stdout"].splitlines()
    assert len(net) == 4 and all(line.startswith("refused") for line in net), net
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing reached the host's port
    listener.close()
    assert results["fork_bomb"]["stdout"] == "forks 0 PermissionError\nsubprocess PermissionError\nthreads ok\n"


@pytest.mark.no_bwrap
def test_not_offered_without_bubblewrap(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    missing = str(tmp_path / "no-such-bwrap")
    with caplog.at_level("WARNING"):
        ws = Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox={"bwrap": missing}), FILES)
    assert "run_python" not in ws.tools
    assert "isolated sandbox" in ws.unavailable["python"] and "not installed" in ws.unavailable["python"]
    assert "python offers no tools" in caplog.text
    r = ws.call("run_python", {"code": "print(1)"})
    assert not r.ok
    # a bubblewrap that cannot build the sandbox is as good as none
    ws = Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox={"bwrap": "/bin/false"}), FILES)
    assert "run_python" not in ws.tools and "probe" in ws.unavailable["python"]


@pytest.mark.no_bwrap
def test_bad_bwrap_setting_fails_creation() -> None:
    for bad in ("bin/bwrap", "bw rap", ""):
        with pytest.raises(SpecError, match="bwrap"):
            Workspace.create(WorkspaceConfig(services=["files", "python"], sandbox={"bwrap": bad}), FILES)


@pytest.mark.no_bwrap
def test_sandbox_status_says_whether_run_python_is_offered(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    r = CliRunner().invoke(app, ["sandbox", "status", "--bwrap", str(tmp_path / "none")])
    assert r.exit_code == 1 and "run_python: not offered" in r.output and "not installed" in r.output
    if isolation_status(SandboxSettings())[0]:
        r = CliRunner().invoke(app, ["sandbox", "status"])
        assert "run_python: available" in r.output


@pytest.mark.no_bwrap
def test_not_offered_without_the_files_service(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        ws = Workspace.create(WorkspaceConfig(services=["mail", "python"]))
    assert "run_python" not in ws.tools and "files service" in ws.unavailable["python"]
    assert "python offers no tools" in caplog.text
    assert not ws.call("run_python", {"code": "print(1)"}).ok


def test_schema_is_derived_and_annotated() -> None:
    tool = make().tools["run_python"]
    assert tool.input_schema["required"] == ["code"]
    assert tool.mcp_annotations()["destructiveHint"] is True
    assert "workspace" in tool.description
