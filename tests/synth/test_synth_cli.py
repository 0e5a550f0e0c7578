"""`coworkenv synth`, `schema` and `validate` through the real command line (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from synth import load_spec
from synth.generate import generate_mixed
from synth.procedural import generate

ROOT = Path(__file__).resolve().parents[2]
COWORKENV = Path(sys.executable).parent / "coworkenv"  # the installed console script


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COWORKENV), *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_synth_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "envs"
    run = cli("synth", "--capability", "scheduling", "--capability", "clarification", "--count", "4", "--seed", "9",
              "--out", str(out), "--format", "yaml")
    assert run.returncode == 0, run.stderr
    assert "synthesis summary" in run.stdout and "discarded" in run.stdout and "wrote 4 valid" in run.stdout
    assert "{" not in run.stdout  # the human summary, never JSON mixed in
    files = sorted(out.glob("*.yaml"))
    again = cli("synth", "--capability", "scheduling", "--capability", "clarification", "--count", "4", "--seed", "9",
                "--out", str(tmp_path / "again"), "--format", "yaml", "--json")
    written = json.loads(again.stdout)["written"]
    assert len(files) == 4 and sorted(written) == [f.name for f in files]
    for f in files:
        spec = load_spec(f)
        cap, seed = spec.capabilities[0], int(spec.id.rsplit("-", 1)[1])
        assert spec.dumps("yaml") == generate_mixed(cap, seed).dumps("yaml")  # same seed, same bytes (the mix)
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


def test_llm_generator_over_real_http_repairs_and_writes(tmp_path: Path) -> None:
    from scripted_openai import Message, ScriptedOpenAI

    good = generate("file_management", 5)
    broken = good.to_document()
    broken["predicates"] = [p for p in broken["predicates"] if p["kind"] != "only_changed"]  # collateral slips by
    with ScriptedOpenAI([Message(json.dumps(broken)), Message(good.dumps())]) as server:
        run = cli("synth", "--generator", "llm", "--capability", "file_management", "--count", "1",
                  "--base-url", server.base_url, "--model", "scripted-model", "--api-key", "test",
                  "--max-repairs", "2", "--out", str(tmp_path))
        repair_prompt = server.completion_requests[-1].messages[-1]["content"]
    assert run.returncode == 0, run.stderr
    assert "collateral" in repair_prompt  # the validator's feedback reached the model
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1 and load_spec(files[0]).predicates == good.predicates
    row = next(line for line in run.stdout.splitlines() if "file_management" in line and "│" in line)
    assert [c.strip() for c in row.split("│")[2:6]] == ["1", "1", "1", "0"]  # generated, valid, repaired, discarded


def test_llm_generator_without_model_is_a_clear_error(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("COWORKENV_OPENAI_", "OPENAI_"))}
    run = subprocess.run([str(COWORKENV), "synth", "--generator", "llm", "--out", str(tmp_path)], capture_output=True,
                         text=True, cwd=ROOT, timeout=120, env=env)
    assert run.returncode == 2 and "no model given" in run.stderr and "Traceback" not in run.stderr
