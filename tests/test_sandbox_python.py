"""run_python: snippets over pyfakefs in a separate process; files round trip, limits, no real disk."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.predicates import evaluate, parse_predicates

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
    assert 'File "<run_python>", line 2' in r.data["stderr"] and "python_zygote" not in r.data["stderr"]
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


def test_output_is_truncated_with_a_note() -> None:
    ws = make(output_bytes=1000)
    r = ws.call("run_python", {"code": "print('A' * 5000 + 'END')"})
    assert r.data["stdout"].startswith("A" * 400) and r.data["stdout"].rstrip().endswith("END")
    assert "bytes of output left out" in r.data["stdout"] and len(r.data["stdout"]) < 1200
    assert any("truncated" in n for n in r.data["notes"])


def test_writes_to_host_paths_never_reach_the_real_disk(tmp_path: Path) -> None:
    ws = make()
    here = Path("/opt") / f"coworkenv-probe-{uuid.uuid4().hex}"  # a real host folder, never /tmp scratch (clones may live in /tmp)
    tmp_probe = tmp_path / "probe.txt"
    code = f"""
import os, io, pathlib
os.makedirs({str(here)!r}, exist_ok=True)
open({str(here / 'a.txt')!r}, "w").write("fake")
pathlib.Path({str(tmp_probe)!r}).parent.mkdir(parents=True, exist_ok=True)
pathlib.Path({str(tmp_probe)!r}).write_text("scratch")
try:
    io.FileIO({str(here) + '-real.txt'!r}, "w")   # the real file API, not patched by pyfakefs
except PermissionError as e:
    print("refused:", e)
try:
    import subprocess; subprocess.run(["touch", {str(here) + '-proc'!r}])
except PermissionError as e:
    print("refused:", e)
try:
    import socket; socket.create_connection(("127.0.0.1", 9), timeout=1)
except PermissionError as e:
    print("refused:", e)
"""
    r = ws.call("run_python", {"code": code})
    assert r.ok and r.data["status"] == "ok", r.text
    assert r.data["stdout"].count("refused:") == 3
    assert "change the real disk" in r.data["stdout"] or "write to the real disk" in r.data["stdout"]
    for p in (here, Path(str(here) + "-real.txt"), Path(str(here) + "-proc"), tmp_probe):
        assert not os.path.exists(p), p
    # the write landed in the workspace instead (the snippet's whole file system is the workspace),
    # while /tmp stayed scratch
    assert ws.table("files.files")[str(here / "a.txt")].content == "fake"
    assert not any(k.startswith("/tmp") for k in ws.table("files.files"))


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
