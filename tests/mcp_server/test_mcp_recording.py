"""Episode records: written per event, segments for reset/restore/fork, replay and judging, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from coworkenv.cli import app
from mcp_server import EnvironmentSource, Episode, judge_record
from mcp_server.demo import environment
from workspace_sim.record import RecordReadError, read_record_file
from mcp_server.replay import replay

SOURCE = EnvironmentSource.python("mcp_server.demo:environment")
WRITE = {"path": "/reports/summary.md", "content": "Total: 1234\n"}


def new_episode(tmp_path: Path, eid: str = "ep1") -> Episode:
    return Episode(environment(), eid, source=SOURCE, record_dir=tmp_path, transport="test")


def test_every_call_is_on_disk_as_soon_as_it_is_answered(tmp_path: Path) -> None:
    ep = new_episode(tmp_path)
    ep.call("read_text_file", {"path": "/reports/q1.csv"})
    ep.call("read_text_file", {"path": "/missing"})
    rec = read_record_file(tmp_path / "ep1.jsonl")  # read while the episode is still open
    (seg,) = rec.segments
    assert seg.final is None and rec.ends_cleanly
    assert [(e["tool"], e["ok"]) for e in seg.events] == [("read_text_file", True), ("read_text_file", False)]
    assert seg.events[1]["error"] == {"code": "not_found", "message": "file /missing not found"}
    assert seg.settings["source"] == SOURCE.to_json()
    ep.call("write_file", WRITE)
    evaluation = ep.end()
    seg = read_record_file(tmp_path / "ep1.jsonl").segments[0]
    assert seg.final is not None and seg.final["evaluation"] == evaluation
    assert seg.final["stop_reason"] == "user_ended" and seg.final["reward"] == 1.0
    assert seg.events[2]["diff"][0]["key"] == "/reports/summary.md"
    tool_msgs = [m for m in seg.final["messages"] if m["role"] == "tool"]
    assert tool_msgs[0]["content"].startswith("region,amount") and tool_msgs[1]["content"].startswith("Error (not_found)")


def test_records_follow_the_project_record_format(tmp_path: Path) -> None:
    record = pytest.importorskip("workspace_sim.record")
    ep = new_episode(tmp_path)
    ep.call("write_file", WRITE)
    sid = ep.snapshot()
    ep.call("delete_file", {"path": "/drafts/notes.md"})
    ep.restore(sid)
    ep.reset()
    ep.end("done")
    episodes = record.read_records(tmp_path)
    assert [e.episode_id for e in episodes] == ["ep1", "ep1.1", "ep1.2"]
    assert all(e.complete for e in episodes)
    assert episodes[2].final.stop_reason == "answered" and episodes[2].final.final_answer == "done"


def test_segments_replay_to_the_live_state(tmp_path: Path) -> None:
    ep = new_episode(tmp_path)
    ep.call("create_directory", {"path": "/reports/old"})
    sid = ep.snapshot()
    ep.call("move_file", {"source": "/reports/q1.csv", "destination": "/reports/old/q1.csv"})
    ep.restore(sid)  # segment ep1.1 begins with the history up to the snapshot
    ep.call("write_file", WRITE)
    child = ep.fork("ep2")
    child.call("delete_file", {"path": "/drafts/notes.md"})
    live = {"ep1.1": ep.workspace.content_hash, "ep2": child.workspace.content_hash}
    segs = {s.segment_id: s for f in ("ep1", "ep2") for s in read_record_file(tmp_path / f"{f}.jsonl").segments}
    assert segs["ep1.1"].settings["start"] == {"kind": "restore", "snapshot": sid}
    assert segs["ep2"].settings["start"] == {"kind": "fork", "from": "ep1.1"}
    for sid_, want in live.items():
        _, ws, warnings = replay(segs[sid_])
        assert ws.content_hash == want and warnings == []
    assert ep.end()["passed"] and not child.end()["passed"]  # the fork also deleted a draft


def test_eval_replays_an_unfinished_record_and_appends_its_result(tmp_path: Path) -> None:
    ep = new_episode(tmp_path)
    ep.call("write_file", WRITE)
    path = tmp_path / "ep1.jsonl"
    with path.open("a") as fh:  # a crash in the middle of writing a line
        fh.write('{"type":"event","episode_id":"ep1","ind')
    rec = read_record_file(path)
    assert rec.skipped and "incomplete last line" in rec.skipped[0]
    (v,) = judge_record(path)
    assert v.appended and not v.from_record and v.evaluation["passed"]
    rec = read_record_file(path)
    assert rec.ends_cleanly and not rec.skipped and rec.segments[0].final["evaluation"] == v.evaluation
    (again,) = judge_record(path)
    assert again.from_record and again.evaluation == v.evaluation
    (answered,) = judge_record(path, final_answer="The total is 1234.", append=False)  # re-judged, not written
    assert not answered.from_record and not answered.appended and not answered.stored
    assert answered.note == "not stored (--no-append)"
    assert len(read_record_file(path).segments[0].events) == 1
    assert read_record_file(path).segments[0].final["final_answer"] is None


def test_malformed_records_are_named_by_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"header","episode_id":"x"}\nnot json\n{"type":"final","episode_id":"x"}\n')
    with pytest.raises(RecordReadError, match=r"bad.jsonl:2: not valid JSON"):
        read_record_file(bad)
    orphan = tmp_path / "orphan.jsonl"
    orphan.write_text('{"type":"event","episode_id":"y","index":0,"kind":"call"}\n')
    with pytest.raises(RecordReadError, match=r"orphan.jsonl:1: event line for episode 'y' before its header"):
        read_record_file(orphan)


def test_cli_episodes_and_eval(tmp_path: Path) -> None:
    runner = CliRunner()
    done = new_episode(tmp_path, "done1")
    done.call("write_file", WRITE)
    done.end()
    open_ = new_episode(tmp_path, "open1")
    open_.call("delete_file", {"path": "/archive/2025/batch.log"})
    listing = runner.invoke(app, ["episodes", str(tmp_path)], env={"COLUMNS": "220"})
    assert listing.exit_code == 0, listing.output
    lines = {ln.split()[1]: ln for ln in listing.output.splitlines() if ln.startswith("│ ")}
    assert "passed" in lines["done1"] and "1.00" in lines["done1"]
    assert "open" in lines["open1"]
    judged = runner.invoke(app, ["eval", str(tmp_path / "open1.jsonl")], env={"COLUMNS": "220"})
    assert judged.exit_code == 0, judged.output
    assert "FAIL" in judged.output and "the archive is untouched" in judged.output and "appended" in judged.output
    final = read_record_file(tmp_path / "open1.jsonl").segments[0].final
    assert final is not None and final["evaluation"]["passed"] is False
    missing = runner.invoke(app, ["eval", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "no such record file" in missing.output
    assert "Traceback" not in missing.output
    empty = runner.invoke(app, ["episodes", str(tmp_path / "nothing")])
    assert empty.exit_code == 2 and "no such file or folder" in empty.output


def test_cli_claude_config_gives_absolute_paths(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["claude-config", "--python", "mcp_server.demo:environment",
                                      "--record-dir", str(tmp_path / "rec")])
    assert result.exit_code == 0, result.output
    entry = json.loads(result.output)["mcpServers"]["workspace"]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"][:3] == ["-m", "coworkenv", "serve"]
    assert Path(entry["args"][entry["args"].index("--record-dir") + 1]).is_absolute()
    for bad in (["claude-config"], ["claude-config", "--python", "no colon"],
                ["claude-config", "--python", "no_such_module_x:env"], ["claude-config", str(tmp_path / "x.yaml")]):
        r = CliRunner().invoke(app, bad)
        assert r.exit_code == 2 and "Traceback" not in r.output, (bad, r.output)


def _served_alone(path: Path) -> bool:
    """Whether a spec's reference is tool calls only (an MCP server plays no simulated user)."""
    from synth import load_spec

    spec = load_spec(path)
    return all(s.kind == "call" and "{{" not in json.dumps(s.args) for s in spec.reference.steps)


SPECS = [p for p in sorted((Path(__file__).resolve().parents[2] / "examples" / "specs").glob("*.yaml")) if _served_alone(p)]


def test_example_specs_exist_to_serve() -> None:
    assert len(SPECS) >= 3, "examples/specs should hold single-turn specs for the MCP round trip"


@pytest.mark.parametrize("spec_path", SPECS, ids=[p.stem for p in SPECS])
def test_spec_environments_are_served_judged_and_replayed(spec_path: Path, tmp_path: Path) -> None:
    """A spec file (via synth.load_spec) runs its reference solution through MCP and passes; eval agrees."""
    import anyio
    from mcp import Client

    from mcp_server import build_server

    source = EnvironmentSource.spec(spec_path)
    spec = source.load()
    ep = Episode(spec, "spec-1", source=source, record_dir=tmp_path)
    visible = spec.task_text() + json.dumps(ep.workspace.export_data())
    hidden = [f.value for f in spec.user_simulator.facts] + [json.dumps(p) for p in spec.predicates]
    served: list[str] = []

    async def go() -> None:
        async with Client(build_server(ep)) as c:
            served.append((await c.read_resource("workspace://task")).contents[0].text)
            for step in spec.reference.calls():
                r = await c.call_tool(step.tool, step.args)
                assert r.is_error == (step.expect_error is not None), (step.tool, r.content[0].text)
                served.append(r.content[0].text)

    anyio.run(go)
    assert not [h for h in hidden if h not in visible and h in "\n".join(served)]
    verdict = ep.end(spec.reference.final_answer)
    assert verdict["passed"], verdict
    seg = read_record_file(tmp_path / "spec-1.jsonl").segments[0]
    assert seg.header["capabilities"] == spec.capabilities and seg.settings["source"] == source.to_json()
    (rejudged,) = judge_record(tmp_path / "spec-1.jsonl", rescore=True)
    assert rejudged.evaluation == verdict and rejudged.warnings == []


# --- the writer's short cut: a line written as dumped when the blob store would leave it alone ------------

_LONG = st.builds(lambda piece, n: piece * n, st.text(min_size=1, max_size=8), st.integers(600, 1200))
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30),
                    st.sampled_from(['"quoted"', "back\\slash", "$blob", "$esc", "line\nbreak"]), _LONG)
_KEY = st.one_of(st.text(max_size=10), st.sampled_from(["$blob", "$esc"]))
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(_KEY, inner, max_size=4)), max_leaves=12)


def _reference_write(lines: list[dict]) -> str:
    """What every write did before the short cut: round trip, externalize everything, dump."""
    from workspace_sim.record.encoding import dump_line as _dump
    from workspace_sim.core.blobs import BlobStore

    store, out = BlobStore(), []
    for line in lines:
        obj, new = store.externalize(json.loads(_dump(line)))
        out.append("".join(_dump(b) + "\n" for b in new) + _dump(obj) + "\n")
    return "".join(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(_KEY, _JSON, max_size=5), min_size=1, max_size=4))
def test_record_lines_are_the_blob_stores_whatever_the_short_cut_skips(tmp_path: Path, lines: list[dict]) -> None:
    from workspace_sim.record import RecordWriter

    path = tmp_path / "r.jsonl"
    path.unlink(missing_ok=True)  # hypothesis runs every example in the same folder
    writer = RecordWriter(path, exclusive=True)
    for line in lines:
        writer.write(line)
    writer.close()
    assert path.read_text(encoding="utf-8") == _reference_write(lines)


ANSWERED = Path(__file__).resolve().parents[2] / "examples" / "specs" / \
    "generated-injection-resistance-contact-note-injection-1.yaml"


def _listed(tmp_path: Path) -> dict[str, dict]:
    out = CliRunner().invoke(app, ["episodes", str(tmp_path), "--json"])
    assert out.exit_code == 0, out.output
    return {row["episode"]: row for row in map(json.loads, out.stdout.splitlines())}


def test_eval_answer_is_stored_for_a_plain_served_episode_and_listed(tmp_path: Path) -> None:
    """Issue 19 item 10: over plain stdio the agent's reply never reaches the server, so the answer checks fail
    ('no final answer'); `eval --answer` judged with the answer but `episodes` kept listing the failure."""
    from synth import load_spec

    spec = load_spec(ANSWERED)
    ep = Episode(spec, "plain", source=EnvironmentSource.spec(ANSWERED), record_dir=tmp_path, transport="stdio")
    for step in spec.reference.steps:
        ep.call(step.tool, step.args)
    ended = ep.end()
    missing = [r for r in ended["results"] if not r["passed"]]
    assert [r["kind"] for r in missing] == ["answer"] and "no final answer" in missing[0]["observed"]
    assert _listed(tmp_path)["plain"]["passed"] is False
    before = (tmp_path / "plain.jsonl").read_bytes()

    runner = CliRunner()
    given = runner.invoke(app, ["eval", str(tmp_path / "plain.jsonl"), "--answer", spec.reference.final_answer],
                          env={"COLUMNS": "220"})
    assert given.exit_code == 0, given.output
    assert "answer stored" in given.output and "passed" in given.output
    row = _listed(tmp_path)["plain"]
    assert row["passed"] is True and row["score"] == 1.0
    (seg,) = read_record_file(tmp_path / "plain.jsonl").segments
    assert seg.final["final_answer"] == spec.reference.final_answer and seg.final["stop_reason"] == "user_ended"
    last = {k: v for k, v in seg.final["messages"][-1].items() if v is not None}  # the one format writes every field
    assert last == {"role": "assistant", "content": spec.reference.final_answer}
    after = (tmp_path / "plain.jsonl").read_bytes()  # only the final line changed
    assert after.splitlines()[:-1] == before.splitlines()[:-1]
    record = pytest.importorskip("workspace_sim.record")
    (strict,) = record.read_records(tmp_path / "plain.jsonl")  # still the project's record format
    assert strict.final.evaluation["passed"] is True

    # a record that has its answer keeps it: another one is judged and printed, never stored
    other = runner.invoke(app, ["eval", str(tmp_path / "plain.jsonl"), "--answer", "I did nothing.", "--json"])
    assert other.exit_code == 0, other.output
    verdict = json.loads(other.stdout)
    assert verdict["stored"] is False and "has its own final answer" in verdict["note"]
    assert verdict["evaluation"]["passed"] is False and _listed(tmp_path)["plain"]["passed"] is True


def test_eval_spec_judges_a_record_from_coworkenv_run(tmp_path: Path) -> None:
    """`eval --rescore/--answer` on a `coworkenv run` record said "pass --spec or --python"; eval had neither."""
    runner = CliRunner()
    out = tmp_path / "runs.jsonl"
    ran = runner.invoke(app, ["run", str(ANSWERED), "--policy", "teacher", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    recorded = read_record_file(out).segments[0].final["evaluation"]
    bare = runner.invoke(app, ["eval", str(out), "--rescore"])
    assert bare.exit_code == 2 and "--spec or --python" in bare.output
    rescored = runner.invoke(app, ["eval", str(out), "--rescore", "--spec", str(ANSWERED), "--json"])
    assert rescored.exit_code == 0, rescored.output
    assert json.loads(rescored.stdout)["evaluation"] == recorded
    answered = runner.invoke(app, ["eval", str(out), "--answer", "Nothing.", "--spec", str(ANSWERED), "--json"])
    assert answered.exit_code == 0, answered.output
    verdict = json.loads(answered.stdout)
    assert verdict["stored"] is False and verdict["evaluation"]["passed"] is False
    assert read_record_file(out).segments[0].final["evaluation"] == recorded  # the runner's record is untouched
    other = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-archive-invoices.yaml"
    wrong = runner.invoke(app, ["eval", str(out), "--rescore", "--spec", str(other)])
    assert wrong.exit_code == 2 and "not 'handwritten-archive-invoices'" in " ".join(wrong.output.split())
    both = runner.invoke(app, ["eval", str(out), "--spec", str(ANSWERED), "--python", "mcp_server.demo:environment"])
    assert both.exit_code == 2 and "not both" in both.output


def test_a_reset_judges_the_segment_it_leaves_after_the_answer_with_the_same_evaluation(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Nobody reads the evaluation of the segment a reset leaves but its record: with deferred records the reset
    answers without judging, and the final line, written after the answer, judges the old state all the same."""
    from workspace_sim.record import DeferredRecords

    env = environment()
    judged: list[str] = []
    real = type(env).evaluate

    def counting(self, workspace, final_answer=None):  # noqa: ANN001, ANN202
        judged.append(workspace.content_hash)
        return real(self, workspace, final_answer)

    monkeypatch.setattr(type(env), "evaluate", counting)
    later = DeferredRecords()
    ep = Episode(env, "ep1", source=SOURCE, record_dir=tmp_path, transport="test", record_later=later)
    ep.call("write_file", WRITE)
    left = ep.workspace
    want = real(env, left, None).to_json()

    async def answered_on_the_loop() -> None:  # lines queued on an event loop wait for its flush, as a server's do
        ep.reset()
        assert judged == []  # not before the answer
        later.flush_due()
        assert judged == [left.content_hash]

    anyio.run(answered_on_the_loop)
    ep.call("write_file", {**WRITE, "content": "Total: 1\n"})
    ep.end()
    later.close()
    first, second = read_record_file(tmp_path / "ep1.jsonl").segments
    assert first.final["evaluation"] == want and first.final["evaluation"]["passed"]
    assert first.final["stop_reason"] == "user_ended" and not second.final["evaluation"]["passed"]
    assert second.settings["start"] == {"kind": "reset"}
    # without deferred records the final line is written (and judged) by the reset itself, the same bytes
    plain = Episode(env, "ep2", source=SOURCE, record_dir=tmp_path, transport="test")
    plain.call("write_file", WRITE)
    plain.reset()
    assert len(judged) == 3
    plain.end()
    assert read_record_file(tmp_path / "ep2.jsonl").segments[0].final["evaluation"] == want


def test_a_reset_whose_final_line_fails_still_ends_its_segment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_server.episode as episode_mod

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise ValueError("render broke")

    ep = new_episode(tmp_path)
    ep.call("write_file", WRITE)
    monkeypatch.setattr(episode_mod, "_final", broken)
    ep.reset()  # no deferred records here: the line is built at once, and must not fail the reset
    monkeypatch.undo()
    ep.end()
    first, second = read_record_file(tmp_path / "ep1.jsonl").segments
    assert first.final is not None and "final line failed: ValueError: render broke" in first.final["evaluation"]["error"]
    assert first.final["evaluation"]["passed"] and second.final is not None


def test_claude_config_server_name_is_neutral_by_default(tmp_path: Path) -> None:
    """The default server name tells the model nothing about the environment (clients put it in every tool name)."""
    specs = Path(__file__).resolve().parents[2] / "examples" / "specs"
    spec = specs / "generated-injection-resistance-contact-note-injection-1.yaml"
    result = CliRunner().invoke(app, ["claude-config", str(spec), "--record-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert list(json.loads(result.output)["mcpServers"]) == ["workspace"] and "injection" not in result.output.split(
        '"args"')[0]
    named = CliRunner().invoke(app, ["claude-config", str(spec), "--name", "my desk", "--record-dir", str(tmp_path)])
    assert list(json.loads(named.output)["mcpServers"]) == ["my-desk"]
