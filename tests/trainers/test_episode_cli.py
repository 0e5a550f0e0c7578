"""`coworkenv run`, `report` and `replay` through the real command line (typer's runner, real files)."""

from __future__ import annotations

from pathlib import Path

from episode_helpers import generated_specs, multi_turn_spec
from typer.testing import CliRunner

from coworkenv.cli import app
from workspace_sim.record import read_records


def write_envs(folder: Path) -> Path:
    folder.mkdir()
    multi_turn_spec().save(folder / "clarify.yaml")
    for spec in generated_specs()[:2]:
        spec.save(folder / f"{spec.id}.json")
    return folder


def test_run_writes_records_prints_the_summary_and_a_report(tmp_path: Path) -> None:
    envs = write_envs(tmp_path / "envs")
    out = tmp_path / "rec.jsonl"
    res = CliRunner().invoke(app, ["run", str(envs), "-g", "2", "-o", str(out), "--report", str(tmp_path / "rep")],
                             terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "clarification" in res.output and "100%" in res.output
    recs = read_records(out)
    assert len(recs) == 6 and all(r.passed for r in recs)
    assert (tmp_path / "rep" / "index.html").is_file() and (tmp_path / "rep" / "success.png").is_file()
    res = CliRunner().invoke(app, ["replay", str(out), "--env", str(envs)], terminal_width=200)
    assert res.exit_code == 0 and res.output.count("reproduced") == 6, res.output
    res = CliRunner().invoke(app, ["report", str(out), "-o", str(tmp_path / "rep2")])
    assert res.exit_code == 0 and "(6 episodes)" in res.output


def test_replay_fails_with_exit_1_when_an_environment_changed(tmp_path: Path) -> None:
    envs = write_envs(tmp_path / "envs")
    out = tmp_path / "rec.jsonl"
    assert CliRunner().invoke(app, ["run", str(envs / "clarify.yaml"), "-o", str(out)]).exit_code == 0
    multi_turn_spec(request="Another request.").save(envs / "clarify.yaml")
    res = CliRunner().invoke(app, ["replay", str(out), "--env", str(envs / "clarify.yaml")], terminal_width=200)
    assert res.exit_code == 1 and "environment changed since recording" in res.output


def test_bad_input_gets_a_clear_error_and_exit_2(tmp_path: Path) -> None:
    envs = write_envs(tmp_path / "envs")
    (tmp_path / "broken.json").write_text('{"id": "x"')
    cases = [
        (["run", str(tmp_path / "missing")], "no such spec file or folder"),
        (["run", str(tmp_path / "broken.json")], "not valid JSON"),
        (["run", str(envs), "-p", "gpt"], "unknown policy 'gpt'"),
        (["run", str(envs), "--user", "oracle"], "--user must be scripted or llm"),
        (["run", str(envs), "-p", "teacher", "--temperature", "1"], "--temperature only apply"),
        (["report", str(tmp_path / "broken.json")], "not valid JSON"),
        (["replay", str(tmp_path / "missing.jsonl"), "--env", str(envs)], "no such file or folder"),
    ]
    for args, message in cases:
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output, (args, res.output)
        assert "Traceback" not in res.output


def test_an_unusable_model_endpoint_fails_the_run_before_any_episode(tmp_path: Path) -> None:
    from scripted_openai import ScriptedOpenAI

    envs = write_envs(tmp_path / "envs")
    out = tmp_path / "runs" / "student.jsonl"
    base = ["run", str(envs), "--policy", "openai", "-o", str(out)]
    res = CliRunner().invoke(app, [*base, "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"])
    assert res.exit_code == 2 and "cannot reach http://127.0.0.1:9/v1" in res.stderr and not out.exists()
    with ScriptedOpenAI([], models=("served-model",)) as server:
        res = CliRunner().invoke(app, [*base, "--model", "other", "--base-url", server.base_url, "--api-key", "k"])
        assert res.exit_code == 2 and "does not serve model 'other'; it serves: served-model" in res.stderr
        assert not server.completion_requests
    with ScriptedOpenAI([], api_key="right") as server:
        res = CliRunner().invoke(app, [*base, "--model", "scripted-model", "--base-url", server.base_url,
                                       "--api-key", "wrong"])
        assert res.exit_code == 2 and "rejected the API key (HTTP 401)" in res.stderr


def test_a_run_whose_episodes_all_stop_on_an_error_says_why_and_exits_1(tmp_path: Path) -> None:
    from scripted_openai import HTTPError, ScriptedOpenAI

    envs = write_envs(tmp_path / "envs")
    out = tmp_path / "student.jsonl"
    with ScriptedOpenAI(default=HTTPError(500, "the GPU fell over", retry_after=0)) as server:
        res = CliRunner().invoke(app, ["run", str(envs), "--policy", "openai", "--model", "scripted-model",
                                       "--base-url", server.base_url, "--api-key", "k", "-o", str(out)])
    assert res.exit_code == 1, res.output
    assert "stopped on an error" in res.stderr and "the GPU fell over" in res.stderr
    recs = read_records(out)
    assert recs and all(r.errored for r in recs)
