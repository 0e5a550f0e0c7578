"""`coworkenv synth`, `schema` and `validate` through the real command line (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from synth import load_spec
from synth.procedural import generate

ROOT = Path(__file__).resolve().parents[1]
COWORKENV = Path(sys.executable).parent / "coworkenv"  # the installed console script


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COWORKENV), *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_synth_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "envs"
    run = cli("synth", "--capability", "scheduling", "--capability", "clarification", "--count", "4", "--seed", "9",
              "--out", str(out), "--format", "yaml")
    assert run.returncode == 0, run.stderr
    assert "synthesis summary" in run.stderr and "discarded" in run.stderr
    written = json.loads(run.stdout.strip().splitlines()[-1])["written"]
    files = sorted(out.glob("*.yaml"))
    assert len(files) == 4 and sorted(written) == [f.name for f in files]
    for f in files:
        spec = load_spec(f)
        cap, seed = spec.capabilities[0], int(spec.id.rsplit("-", 1)[1])
        assert spec.dumps("yaml") == generate(cap, seed).dumps("yaml")  # same seed, same bytes
    check = cli("validate", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("valid ") == 4


def test_balanced_mix_without_capability(tmp_path: Path) -> None:
    run = cli("synth", "--count", "12", "--seed", "1", "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    caps = {load_spec(p).capabilities[0] for p in tmp_path.glob("*.json")}
    assert len(caps) == 12


def test_schema_command_prints_the_json_schema() -> None:
    run = cli("schema")
    assert run.returncode == 0
    schema = json.loads(run.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(generate("policy_compliance", 0).to_document(), schema)


def test_validate_reports_problems_without_a_traceback(tmp_path: Path) -> None:
    bad = generate("file_management", 1).to_document()
    bad["predicates"] = [p for p in bad["predicates"] if p["kind"] != "only_changed"]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n")
    (tmp_path / "wrong.json").write_text(json.dumps({"id": "x"}))
    run = cli("validate", str(tmp_path))
    assert run.returncode == 1
    assert "Traceback" not in run.stdout + run.stderr
    assert "INVALID" in run.stdout and "[mutants]" in run.stdout and "not valid YAML" in run.stdout
    assert "world: Field required" in run.stdout
    as_json = cli("validate", "--json", str(tmp_path / "bad.json"))
    report = json.loads(as_json.stdout)
    assert report["ok"] is False and report["feedback"][0]["check"] == "mutants"


def test_bad_options_are_clear_errors(tmp_path: Path) -> None:
    for args, words in [
        (("synth", "--capability", "juggling", "--out", str(tmp_path)), "unknown capability"),
        (("synth", "--format", "xml", "--out", str(tmp_path)), "--format"),
        (("synth", "--generator", "magic", "--out", str(tmp_path)), "--generator"),
        (("validate", str(tmp_path / "missing.json")), "file not found"),
    ]:
        run = cli(*args)
        assert run.returncode != 0
        assert words in run.stdout + run.stderr and "Traceback" not in run.stderr
