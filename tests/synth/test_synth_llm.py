"""The LLM generator and repair loop, run over real HTTP against the scripted OpenAI-compatible server.

The real `openai` client, its retries, synth's EnvironmentSpec loader and synth's execution-based
validator are all exercised; only the model's answers are scripted.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings as hsettings, strategies as st

from scripted_openai import (
    Body, Disconnect, HTTPError, InvalidBody, Message, RecordedRequest, ScriptedOpenAI, ToolCall, ToolCalls,
)
from synth.capabilities import capability
from synth.llm import (
    AnswerRejected, ChatClient, LLMError, LLMSettings, SettingsError, generate_spec, generate_with_repair, synthesize_llm,
)
from synth.llm.parse import extract_json, json_path
from synth.spec import EnvironmentSpec, parse_spec, spec_json_schema
from synth.validate import validate_spec
from workspace_sim.services import all_services

REQUIREMENT = "Move the final Q1 report into /reports and leave the draft alone."

# A file_management spec that runs but whose only_changed guard is too broad: synth's validator
# finds collateral mutants it cannot catch. REPAIRED narrows the guard and passes every check.
BROKEN: dict[str, Any] = {
    "id": "llm-file-move", "title": "File the Q1 report", "capabilities": ["file_management"],
    "difficulty": "easy", "expected_horizon": 1,
    "world": {"organisation": {"name": "Acme", "domain": "acme.io"},
              "people": [{"name": "Dana Reyes", "email": "dana@acme.io", "role": "user"}]},
    "services": ["files"],
    "initial": {"files": {"files": [
        {"path": "/inbox/q1-report.csv", "content": "region,revenue\nnorth,120\nsouth,80\n"},
        {"path": "/inbox/q1-report-draft.csv", "content": "region,revenue\nnorth,0\n"},
        {"path": "/inbox/notes.txt", "content": "call Sam"}], "folders": [{"path": "/reports"}]}},
    "now": "2024-04-02T09:00:00+00:00", "user": "dana@acme.io",
    "request": "Move the final Q1 report from /inbox into /reports. Leave the draft where it is.",
    "predicates": [
        {"kind": "file", "path": "/reports/q1-report.csv", "content": {"contains": "north,120"}},
        {"kind": "file", "path": "/inbox/q1-report.csv", "exists": False},
        {"kind": "unchanged", "scope": "files:/inbox/q1-report-draft.csv"},
        {"kind": "only_changed", "scopes": ["files"]}],
    "reference": {"steps": [{"kind": "call", "tool": "move_file",
                             "args": {"source": "/inbox/q1-report.csv", "destination": "/reports/q1-report.csv"}}],
                  "final_answer": "Moved the Q1 report to /reports."},
}
REPAIRED = copy.deepcopy(BROKEN)
REPAIRED["predicates"][3] = {"kind": "only_changed",
                             "scopes": ["files:/inbox/q1-report.csv", "files:/reports/q1-report.csv"]}


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1)


def llm(server: ScriptedOpenAI, retries: int = 2, **kw: Any) -> LLMSettings:
    return LLMSettings(base_url=server.base_url, model="scripted-model", api_key="k", max_retries=retries,
                       timeout=10, **kw)


def fast(status: int, message: str = "") -> HTTPError:
    """An error the client retries after 5 ms (Retry-After-Ms) instead of its default backoff."""
    return HTTPError(status, message, retry_after_ms=5)


def test_fixture_documents_are_what_the_tests_assume() -> None:
    assert not validate_spec(parse_spec(BROKEN)).ok
    assert validate_spec(parse_spec(REPAIRED)).ok


def test_broken_spec_is_repaired_with_the_validators_feedback() -> None:
    feedback = validate_spec(parse_spec(BROKEN)).feedback
    with ScriptedOpenAI([Message(text(BROKEN)), Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("file_management", REQUIREMENT, llm(server), max_repairs=2)
        first, second = server.completion_requests
    assert isinstance(spec, EnvironmentSpec) and validate_spec(spec).ok
    assert stats.repaired and not stats.first_pass_valid and not stats.discarded and stats.rounds == 2
    assert [r.outcome for r in stats.history] == ["validation", "valid"]
    # the repair request carried every feedback item (check, path, problem, hint) back to the model
    repair = second.messages[-1]["content"]
    for item in feedback:
        assert item.problem in repair and item.hint in repair and f"[{item.check}] at {item.path}" in repair
    assert "repair round 1 of 2" in repair
    # ...after the model's own answer, and with the original task kept
    assert second.messages[-2] == {"role": "assistant", "content": text(BROKEN)}
    assert second.messages[:2] == first.messages
    assert spec.metadata["generator"] == "llm" and spec.metadata["model"] == "scripted-model"
    assert spec.metadata["rounds"] == 2 and spec.metadata["requirement"] == REQUIREMENT
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0


def test_first_request_asks_for_the_spec_schema_with_registry_tools_and_capability() -> None:
    with ScriptedOpenAI([Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("file_management", REQUIREMENT, llm(server, seed=7, temperature=0.2))
        req = server.completion_requests[0]
    assert spec is not None and stats.first_pass_valid and stats.rounds == 1
    fmt = req.response_format
    assert fmt is not None and fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "EnvironmentSpec" and fmt["json_schema"]["schema"] == spec_json_schema(typed=False)
    assert req.body["seed"] == 7 and req.body["temperature"] == 0.2 and req.body["model"] == "scripted-model"
    system, user = req.messages
    cap = capability("file_management")
    assert cap.title in user["content"] and cap.checked_by in user["content"] and REQUIREMENT in user["content"]
    # the tools come from the registry, verbatim in OpenAI format
    move = all_services()["files"].tools["move_file"].openai_schema()
    assert json.dumps(move, separators=(",", ":"), sort_keys=True) in user["content"]
    assert "files.files (key: path)" in user["content"]
    assert '"kind":{"const":"only_changed"' in user["content"]  # the predicate language
    assert '"expected_horizon"' in system["content"]


def test_truncated_json_is_sent_back_as_cut_off() -> None:
    body = text(REPAIRED)
    with ScriptedOpenAI([Message(body[: len(body) // 2], finish_reason="length"), Message(body)]) as server:
        spec, stats = generate_spec("file_management", REQUIREMENT, llm(server))
        repair = server.completion_requests[1].messages[-1]["content"]
    assert spec is not None and stats.repaired and stats.history[0].outcome == "invalid_json"
    assert "cut off" in repair and "at $" in repair


def test_invalid_json_names_line_and_column() -> None:
    bad = '{"id": "x", "title": "t",}'
    with ScriptedOpenAI([Message(bad), Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("file_management", None, llm(server))
        repair = server.completion_requests[1].messages[-1]["content"]
    assert spec is not None and stats.history[0].outcome == "invalid_json"
    assert "not valid JSON" in repair and "line 1 column" in repair


def test_wrong_types_become_field_path_feedback() -> None:
    wrong = copy.deepcopy(REPAIRED)
    wrong["expected_horizon"] = "two"
    wrong["world"]["people"][0]["email"] = 42
    wrong["reference"]["steps"][0]["args"] = "move it"
    with ScriptedOpenAI([Message(text(wrong)), Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("file_management", None, llm(server))
        repair = server.completion_requests[1].messages[-1]["content"]
    assert spec is not None and stats.repaired and stats.history[0].outcome == "schema"
    paths = {p["path"] for p in stats.history[0].problems}
    assert {"expected_horizon", "world.people[0].email", "reference.steps[0].args"} <= paths
    for path in paths:
        assert f"at {path}:" in repair


def test_refusal_is_answered_and_counted() -> None:
    with ScriptedOpenAI([Message(refusal="I can't create that."), Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("file_management", None, llm(server))
        second = server.completion_requests[1]
    assert spec is not None and stats.repaired and stats.history[0].outcome == "refusal"
    assert second.messages[-2] == {"role": "assistant", "content": "I can't create that."}
    assert "You declined: I can't create that." in second.messages[-1]["content"]


def test_refusals_until_the_end_discard_with_the_reason() -> None:
    with ScriptedOpenAI(default=Message(refusal="No.")) as server:
        spec, stats = generate_spec("file_management", None, llm(server), max_repairs=1)
    assert spec is None and stats.discarded and stats.rounds == 2
    assert stats.error is not None and "refusal" in stats.error and "the model refused: No." in stats.error


def test_server_error_then_success_is_retried_by_the_client() -> None:
    with ScriptedOpenAI([fast(500, "upstream hiccup"), fast(429), Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("file_management", None, llm(server, retries=2))
        assert len(server.completion_requests) == 3
    assert spec is not None and stats.first_pass_valid and stats.rounds == 1


def test_persistent_server_errors_end_the_generation_without_raising() -> None:
    with ScriptedOpenAI(default=fast(503, "overloaded")) as server:
        spec, stats = generate_spec("file_management", None, llm(server, retries=2))
        assert len(server.completion_requests) == 3  # one try and two bounded retries
    assert spec is None and stats.discarded and not stats.fatal and stats.rounds == 0
    assert stats.error == f"http: HTTP 503 from {server.base_url} after 2 retries: overloaded"


def test_discarded_after_k_repair_rounds() -> None:
    with ScriptedOpenAI(default=Message(text(BROKEN))) as server:
        spec, stats = generate_spec("file_management", None, llm(server), max_repairs=2)
        reqs = server.completion_requests
    assert spec is None and stats.discarded and stats.rounds == 3 and len(reqs) == 3
    assert not stats.first_pass_valid and not stats.repaired
    assert stats.error is not None and stats.error.startswith("still validation after 2 repair rounds: predicates:")
    # a repair request holds the task, the latest answer and its feedback only: it does not grow
    assert [len(r.messages) for r in reqs] == [2, 4, 4]
    assert "repair round 2 of 2" in reqs[2].messages[-1]["content"]


def test_zero_repairs_means_one_attempt() -> None:
    with ScriptedOpenAI(default=Message(text(BROKEN))) as server:
        spec, stats = generate_spec("file_management", None, llm(server), max_repairs=0)
        assert len(server.completion_requests) == 1
    assert spec is None and stats.error is not None and "after 0 repair rounds" in stats.error


def test_json_schema_refused_falls_back_to_json_object_and_remembers() -> None:
    with ScriptedOpenAI([Message(text(BROKEN)), Message(text(REPAIRED))],
                        reject_response_formats={"json_schema"}) as server:
        spec, stats = generate_spec("file_management", None, llm(server))
        formats = [(r.response_format or {}).get("type") for r in server.completion_requests]
    assert spec is not None and stats.response_format == "json_object"
    assert formats == ["json_schema", "json_object", "json_object"]


def test_no_response_format_support_falls_back_to_a_plain_request() -> None:
    fenced = "Here is the spec:\n```json\n" + text(REPAIRED) + "\n```"
    with ScriptedOpenAI([Message(fenced)], reject_response_formats={"json_schema", "json_object"}) as server:
        spec, stats = generate_spec("file_management", None, llm(server))
        assert server.completion_requests[-1].response_format is None
    assert spec is not None and stats.response_format == "none"


@pytest.mark.parametrize(("reply", "kind", "words"), [
    (InvalidBody(), "bad_response", "not a chat completion"),
    (Body({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}), "bad_response",
     "no choices"),
    (Message(None), "empty", "empty answer"),
    (ToolCalls([ToolCall("write_file", '{"path": ')]), "tool_calls", "called tools"),
])
def test_unusable_responses_end_with_a_clear_error(reply: Any, kind: str, words: str) -> None:
    with ScriptedOpenAI([reply]) as server:
        spec, stats = generate_spec("file_management", None, llm(server, retries=0))
    assert spec is None and stats.discarded
    assert stats.error is not None and stats.error.startswith(f"{kind}: ") and words in stats.error


def test_dropped_connection_is_retried_then_reported() -> None:
    with ScriptedOpenAI([Disconnect(), Message(text(REPAIRED))]) as server:
        spec, _ = generate_spec("file_management", None, llm(server, retries=1))
    assert spec is not None
    with ScriptedOpenAI([Disconnect()]) as server:
        spec, stats = generate_spec("file_management", None, llm(server, retries=0))
    assert spec is None and stats.fatal and stats.error is not None and stats.error.startswith("connection: cannot reach")


def test_unreachable_endpoint_is_fatal_and_clear() -> None:
    server = ScriptedOpenAI().start()
    url = server.base_url
    server.close()
    settings = LLMSettings(base_url=url, model="m", max_retries=0, timeout=5)
    spec, stats = generate_spec("file_management", None, settings)
    assert spec is None and stats.fatal and stats.error is not None and url in stats.error


def test_wrong_tag_is_fed_back_as_a_capability_problem() -> None:
    with ScriptedOpenAI([Message(text(REPAIRED)), Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("document_from_data", None, llm(server), max_repairs=1)
        repair = server.completion_requests[1].messages[-1]["content"]
    assert spec is None and stats.discarded
    assert "[capability] at capabilities: the spec is not tagged with the requested capability 'document_from_data'" \
        in repair


def test_unknown_capability_is_refused_before_any_request() -> None:
    with ScriptedOpenAI() as server:
        with pytest.raises(ValueError, match="unknown capability 'nope'"):
            generate_spec("nope", None, llm(server))
        assert server.requests == []


def test_batch_tallies_dedupes_ids_and_shares_the_client() -> None:
    with ScriptedOpenAI([Message(text(REPAIRED)), Message(text(BROKEN)), Message(text(REPAIRED)),
                         Message(text(BROKEN)), Message(text(BROKEN))],
                        reject_response_formats={"json_schema"}) as server:
        seen: list[bool] = []
        result = synthesize_llm(["file_management"], 3, llm(server), max_repairs=1, seed=100,
                                on_result=lambda spec, stats: seen.append(spec is not None))
        reqs = server.completion_requests
    assert seen == [True, True, False]
    assert [s.id for s in result.specs] == ["llm-file-move", "llm-file-move-1"]
    t = result.by_capability["file_management"]
    assert (t.generated, t.valid, t.first_pass_valid, t.repaired, t.discarded, t.rounds) == (3, 2, 1, 1, 1, 5)
    assert result.total().prompt_tokens == sum(s.prompt_tokens for s in result.stats) > 0
    # json_schema was refused once, then the shared client kept json_object for the whole batch
    assert [(r.response_format or {}).get("type") for r in reqs] == ["json_schema"] + ["json_object"] * 5
    assert [r.body["seed"] for r in reqs if r.response_format["type"] == "json_object"] == [100, 101, 101, 102, 102]
    assert "variation #1" in reqs[2].messages[1]["content"]
    assert json.loads(json.dumps(result.to_json()))["total"]["valid"] == 2


def test_batch_stops_at_a_rejected_key() -> None:
    with ScriptedOpenAI([Message(text(REPAIRED))], api_key="right") as server:
        settings = LLMSettings(base_url=server.base_url, model="m", api_key="wrong", max_retries=3, timeout=5)
        result = synthesize_llm(None, 5, settings)
        assert len(server.requests) == 1  # 401 is not retried, and the batch stopped
    assert result.specs == [] and result.stopped is not None
    assert result.stopped.startswith("stopped after 1 of 5: auth:") and "COWORKENV_OPENAI_API_KEY" in result.stopped


def test_generic_loop_with_another_model_and_validator() -> None:
    """generate_with_repair is spec-agnostic: any pydantic model and any feedback-returning validator."""
    from pydantic import BaseModel

    class Point(BaseModel):
        x: int
        y: int

    def validator(p: Point) -> list[Any]:
        from synth.llm import Problem
        return [] if p.x < p.y else [Problem("x", f"x={p.x} must be below y={p.y}", "swap them")]

    with ScriptedOpenAI([Message('{"x": 3, "y": 1}'), Message('{"x": 1, "y": 3}')]) as server:
        point, stats = generate_with_repair("file_management", "a point", llm(server), validator, 1, spec_model=Point)
        repair = server.completion_requests[1].messages[-1]["content"]
        schema = server.completion_requests[0].response_format["json_schema"]["schema"]
    assert point == Point(x=1, y=3) and stats.repaired
    assert "1. at x: x=3 must be below y=1 Hint: swap them" in repair and schema == Point.model_json_schema()


def test_validator_crash_discards_instead_of_raising() -> None:
    def broken_validator(spec: Any) -> list[Any]:
        raise KeyError("boom")

    with ScriptedOpenAI([Message(text(REPAIRED))]) as server:
        spec, stats = generate_spec("file_management", None, llm(server), validator=broken_validator)
    assert spec is None and stats.discarded and stats.error == "the validator failed on this spec: KeyError: 'boom'"


def test_settings_from_explicit_values_and_environment() -> None:
    env = {"COWORKENV_OPENAI_BASE_URL": "http://localhost:8000/v1/", "COWORKENV_OPENAI_MODEL": "env-model",
           "OPENAI_API_KEY": "from-openai", "COWORKENV_OPENAI_MAX_RETRIES": "5"}
    s = LLMSettings.from_env(env)
    assert (s.base_url, s.model, s.api_key.get_secret_value(), s.max_retries) == (
        "http://localhost:8000/v1", "env-model", "from-openai", 5)
    s = LLMSettings.from_env({**env, "COWORKENV_OPENAI_API_KEY": "ours"}, model="cli-model", api_key=None)
    assert (s.model, s.api_key.get_secret_value()) == ("cli-model", "ours")
    assert "ours" not in repr(s) and "ours" not in s.describe()
    with pytest.raises(SettingsError, match="no model given: pass --model or set COWORKENV_OPENAI_MODEL"):
        LLMSettings.from_env({})
    with pytest.raises(SettingsError, match=r"base_url \(from --base-url\): .*http://"):
        LLMSettings.from_env({}, model="m", base_url="localhost:8000")
    with pytest.raises(SettingsError, match=r"max_retries \(from COWORKENV_OPENAI_MAX_RETRIES\)"):
        LLMSettings.from_env({"COWORKENV_OPENAI_MAX_RETRIES": "lots"}, model="m")


def test_client_is_usable_directly(tmp_path: Any) -> None:
    with ScriptedOpenAI([Message('{"a": 1}')]) as server, ChatClient(llm(server)) as client:
        c = client.complete_json([{"role": "user", "content": "x"}], {"type": "object"}, "Thing", seed=3)
        req: RecordedRequest = server.completion_requests[0]
    assert c.text == '{"a": 1}' and c.response_format == "json_schema" and c.usage.completion_tokens > 0
    assert req.body["seed"] == 3


# --- parsing invariants ---------------------------------------------------------------------

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                           max_leaves=12)
objects = st.dictionaries(st.text(max_size=6), json_values, max_size=4)


@hsettings(max_examples=150, deadline=None)
@given(obj=objects, prose=st.sampled_from(["", "Sure! ", "Here it is:\n"]), fence=st.booleans())
def test_any_object_is_extracted_from_prose_and_fences(obj: dict[str, Any], prose: str, fence: bool) -> None:
    body = json.dumps(obj, indent=1)
    answer = prose + (f"```json\n{body}\n```" if fence else body)
    assert extract_json(answer) == obj


@hsettings(max_examples=150, deadline=None)
@given(obj=objects, data=st.data())
def test_every_truncation_is_rejected_cleanly(obj: dict[str, Any], data: st.DataObject) -> None:
    body = json.dumps(obj)
    cut = data.draw(st.integers(0, len(body) - 1))
    with pytest.raises(AnswerRejected) as info:
        extract_json(body[:cut])
    assert info.value.stage == "json" and info.value.problems[0].path == "$"


@hsettings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_gives_an_object_or_a_rejection(answer: str) -> None:
    try:
        assert isinstance(extract_json(answer), dict)
    except AnswerRejected as exc:
        assert exc.problems and exc.problems[0].problem


@given(st.lists(st.one_of(st.integers(0, 5), st.text("abc", min_size=1, max_size=3)), max_size=5))
def test_json_path_renders_pydantic_locations(loc: list[Any]) -> None:
    path = json_path(loc)
    assert path == "$" if not loc else all(f"[{p}]" in path for p in loc if isinstance(p, int))


def test_long_feedback_is_capped_in_the_repair_prompt() -> None:
    from synth.llm import Problem
    from synth.llm.prompt import MAX_PROBLEMS_SHOWN, repair_message

    problems = [Problem(f"initial.files.files[{i}]", f"problem {i}", "fix") for i in range(MAX_PROBLEMS_SHOWN + 10)]
    content = repair_message(problems, 1, 3)["content"]
    assert content.startswith(f"Checking your spec found {MAX_PROBLEMS_SHOWN + 10} problems (repair round 1 of 3)")
    assert f"problem {MAX_PROBLEMS_SHOWN - 1}" in content and f"problem {MAX_PROBLEMS_SHOWN}\n" not in content
    assert content.endswith("... and 10 more; fix these first.")


def test_a_400_for_another_reason_does_not_downgrade_later_requests() -> None:
    too_long = HTTPError(400, "context length exceeded")
    with ScriptedOpenAI([too_long, too_long, too_long, Message('{"a": 1}')]) as server:
        client = ChatClient(llm(server))
        with pytest.raises(LLMError) as info:
            client.complete_json([{"role": "user", "content": "x"}], {"type": "object"}, "Thing")
        assert info.value.kind == "http" and info.value.status == 400 and "context length exceeded" in str(info.value)
        assert "response formats refused first: json_schema: context length exceeded" in str(info.value)
        assert client.response_format == "json_schema"
        assert client.complete_json([{"role": "user", "content": "x"}], {"type": "object"}, "T").response_format \
            == "json_schema"
        client.close()


def test_cli_synth_with_the_llm_generator(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app
    from synth.spec import load_spec

    script = [Message(text(BROKEN)), Message(text(REPAIRED)), Message(text(REPAIRED))]
    with ScriptedOpenAI(script, api_key="cli-key") as server:
        args = ["synth", "--generator", "llm", "--base-url", server.base_url, "--model", "m", "-c", "file_management",
                "-n", "2", "--out", str(tmp_path), "--max-repairs", "1"]
        result = CliRunner().invoke(app, args, env={"COWORKENV_OPENAI_API_KEY": "cli-key"})
        repair = server.completion_requests[1].messages[-1]["content"]
    assert result.exit_code == 0, result.output
    assert "[mutants] at predicates" in repair
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["llm-file-move-1.json", "llm-file-move.json"]
    for name in written:
        spec = load_spec(tmp_path / name)
        assert validate_spec(spec).ok and spec.metadata["generator"] == "llm"
    assert "file_management" in result.stdout and "wrote 2 valid environment(s)" in result.stdout


def test_cli_synth_llm_without_a_model_is_a_clear_error(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    result = CliRunner().invoke(app, ["synth", "--generator", "llm", "--out", str(tmp_path)],
                                env={"COWORKENV_OPENAI_MODEL": ""})
    assert result.exit_code == 2
    assert "no model given: pass --model or set COWORKENV_OPENAI_MODEL" in result.output
    assert "Traceback" not in result.output


# --- multi-day scenarios ----------------------------------------------------------------------------------

MULTIDAY_PATH = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"


def _multiday() -> dict[str, Any]:
    return json.loads(json.dumps(yaml.safe_load(MULTIDAY_PATH.read_text()), default=str))


def test_a_flawed_multi_day_scenario_is_repaired_from_the_baselines_feedback() -> None:
    good = _multiday()
    flawed = copy.deepcopy(good)
    for step in flawed["reference"]["steps"]:  # the model forgot both baselines' marks
        step.pop("stale_args", None)
        step.pop("recalls", None)
    feedback = validate_spec(parse_spec(flawed)).feedback
    assert {f.check for f in feedback} == {"stale", "forgetful"}
    with ScriptedOpenAI([Message(text(flawed)), Message(text(good))]) as server:
        spec, stats = generate_spec("long_horizon", "Track vendor spend over a week", llm(server), max_repairs=2)
        first, second = server.completion_requests
    assert [r.outcome for r in stats.history] == ["validation", "valid"] and stats.repaired
    assert isinstance(spec, EnvironmentSpec) and len(spec.stages) == 3
    report = validate_spec(spec)
    assert report.ok and report.stats["stale_score"] < 1 and report.stats["forgetful_score"] < 1
    repair = second.messages[-1]["content"]
    assert "[stale] at events[0]" in repair and "[forgetful] at reference.steps" in repair
    for item in feedback:
        assert item.problem in repair and item.hint in repair
    # the model was taught how to write a scenario in the first place
    system = first.messages[0]["content"]
    for word in ("stages", "end_stage", "at_stage", '"stage"', "weight", "vague", "stale_args", "recalls"):
        assert word in system, word


def test_the_prompts_scenario_example_is_written_in_the_spec_language() -> None:
    """Every fragment of the prompt's example parses with the spec's own models, so the prompt cannot drift."""
    from synth.llm.prompt import SCENARIOS
    from synth.spec import ReferenceSolution, Stage, WorldEvent
    from workspace_sim.predicates import parse_predicates

    fragments = json.loads("{" + SCENARIOS.split("Example (fragments of one spec):\n", 1)[1] + "}")
    assert len([Stage.model_validate(s) for s in fragments["stages"]]) == 2
    assert all(WorldEvent.model_validate(e).at_stage == "tue" for e in fragments["events"])
    assert [p.stage for p in parse_predicates(fragments["predicates"])] == ["mon", "tue", None]
    solution = ReferenceSolution.model_validate(fragments["reference"])
    assert solution.stage_ends() == 1 and any(s.recalls for s in solution.calls())
    assert any(s.stale_args for s in solution.calls())
