"""Multi-day procedural scenarios: the builder's stages, every story template valid with both baselines failing,
the shape the long_horizon stories take, and `coworkenv stats` through the CLI.

Runtime: each story template is validated (with the stale and forgetful baselines run here too, by
synth.spec.run_steps) over a few seeds; 200 seeds of every story capability are validated by
test_synth_procedural.py's many-seeds test.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coworkenv.cli import app
from synth import validate_spec
from synth.spec import SpecDriver, run_steps
from synth.pipeline import distribution, profile
from synth.procedural import SpecBuilder, TemplateError, generate, templates_for
from synth.procedural.templates import registry
from synth.procedural.templates.scenarios import DAY_HEADS
from synth.procedural.world import WorldMaker
from synth.spec import CallStep, EndStageStep, EnvironmentSpec

STORIES = sorted((t.capability, t.name) for ts in registry().values() for t in ts.values()
                 if t.fn.__module__.endswith(".scenarios"))


def _baseline(spec: EnvironmentSpec, kind: str):  # type: ignore[no-untyped-def]
    """The stale (stale_args in place of args) or forgetful (no recalls steps) run of the reference, judged."""
    steps = []
    for s in spec.reference.steps:
        if isinstance(s, CallStep) and kind == "stale" and s.stale_args is not None:
            s = s.model_copy(update={"args": s.stale_args})
        if isinstance(s, CallStep) and kind == "forgetful" and s.recalls:
            continue
        steps.append(s)
    driver = SpecDriver(spec)
    driver.start()
    run = run_steps(driver, steps, spec.reference.final_answer)
    return spec.evaluate(run.workspace, run.final_answer)


def _check_story(spec: EnvironmentSpec) -> None:
    report = validate_spec(spec)
    assert report.ok, f"{spec.id}\n{report.text()}"
    assert len(spec.stages) >= 2
    assert sum(isinstance(s, EndStageStep) for s in spec.reference.steps) == len(spec.stages) - 1
    assert any(e.announce is None for e in spec.events), "every story has a silent change"
    assert any(isinstance(s, CallStep) and s.stale_args for s in spec.reference.steps)
    assert any(isinstance(s, CallStep) and s.recalls for s in spec.reference.steps)
    assert any(f.vague for f in spec.user_simulator.facts)
    assert any(p.get("stage") == spec.stages[0].id for p in spec.predicates)
    assert any(p.get("weight", 1) > 1 for p in spec.predicates)
    for kind in ("stale", "forgetful"):
        ev = _baseline(spec, kind)
        assert not ev.passed, f"{spec.id}: the {kind} baseline passes"
        assert ev.score < 1


@pytest.mark.parametrize("cap,name", STORIES)
def test_each_story_template_is_valid_and_both_baselines_fail(cap: str, name: str) -> None:
    for seed in range(2):
        spec = generate(cap, seed, template=name)
        assert spec.capabilities[0] == cap
        _check_story(spec)


def test_every_story_capability_is_validated_over_many_seeds_elsewhere() -> None:
    """The story capabilities' 200 seeds each are validated by tests/synth/test_synth_procedural.py's
    many-seeds test (the same `generate(cap, seed)`, the same validation), so they are not validated twice."""
    from test_synth_procedural import SEEDS_PER_CAPABILITY

    from synth.capabilities import CAPABILITIES

    assert {c for c, _ in STORIES} <= set(CAPABILITIES) and SEEDS_PER_CAPABILITY >= 200


def test_long_horizon_weeks_are_long_and_keep_one_world() -> None:
    specs = [generate("long_horizon", seed, template="working_week") for seed in range(6)]
    for spec in specs:
        assert 3 <= len(spec.stages) <= 5
        calls = len(spec.reference.calls())
        assert calls >= 40, (spec.id, calls)
        opens = [st.opens_at for st in spec.stages[1:]]
        assert all(o.weekday() < 5 and o.hour == 9 for o in opens)  # working mornings
        assert all(b - a >= timedelta(hours=12) for a, b in zip([spec.now, *opens], opens))
        people = {p.email for p in spec.world.people}
        for step in spec.reference.calls():  # every mail goes to someone of this one world
            for addr in step.args.get("to", []):
                assert addr in people or addr.startswith("{{fact:"), addr
        for i, st in enumerate(spec.stages[1:], 2):
            assert st.instructions.startswith(DAY_HEADS)  # a morning greeting, drawn from several
    assert len({s.dumps() for s in specs}) == len(specs)


def _builder(seed: int = 1) -> SpecBuilder:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    maker = WorldMaker(seed, "test")
    world = maker.world()
    b = SpecBuilder(maker, world, datetime(2026, 3, 2, 9, tzinfo=ZoneInfo(world.user.timezone)), seed)
    b.use("files")
    b.table("files", "files").append({"path": "/a.txt", "content": "one\n"})
    return b


def test_builder_stage_rules_are_enforced_with_clear_errors() -> None:
    b = _builder()
    with pytest.raises(TemplateError, match="no open stage"):
        b.end_stage("done")
    with pytest.raises(TemplateError, match="day one opens at `now`"):
        b.open_stage("mon", "Monday", b.now + timedelta(days=1), "x")
    b.open_stage("mon", "Monday")
    with pytest.raises(TemplateError, match="belongs to a later stage"):
        b.stage_change([{"op": "patch", "table": "files.files", "key": "/a.txt", "fields": {"content": "two\n"}}])
    with pytest.raises(TemplateError, match="close stage 'mon'"):
        b.open_stage("tue", "Tuesday", b.now + timedelta(days=1), "More.")
    b.call("write_file", path="/b.txt", content="Ticket OPS-1\n")
    b.check({"kind": "file", "path": "/b.txt", "content": {"contains": "OPS-1"}}, weight=2)
    b.end_stage("Monday done.")
    with pytest.raises(TemplateError, match="not after the clock"):
        b.open_stage("tue", "Tuesday", b.now, "More.")
    with pytest.raises(TemplateError, match="needs opens_at and the day's instructions"):
        b.open_stage("tue", "Tuesday", b.now + timedelta(days=1), " ")
    b.open_stage("tue", "Tuesday", b.now + timedelta(days=1), "Update b.txt with a.txt's content.")
    b.stage_change([{"op": "patch", "table": "files.files", "key": "/a.txt", "fields": {"content": "Ticket OPS-2\n"}}])
    b.call("read_text_file", path="/a.txt")
    b.call("write_file", _stale={"path": "/b.txt", "content": "Ticket OPS-1\n"}, _recalls=True, path="/b.txt",
           content="Ticket OPS-2\n")  # an id a blind agent cannot copy: first_pick writes the first OPS id it read
    b.check({"kind": "file", "path": "/b.txt", "content": {"contains": "OPS-2"}})
    b.ask("Copy a.txt into b.txt.", "Copy", "dynamic_world", "test")
    b.allow("files:/b.txt")
    spec = b.build("test-stages", "medium")
    assert [st.id for st in spec.stages] == ["mon", "tue"]
    assert spec.events[0].at_stage == "tue" and spec.events[0].announce is None
    assert spec.predicates[0]["stage"] == "mon" and spec.predicates[0]["weight"] == 2
    assert spec.predicates[1]["stage"] == "tue"
    marked = spec.reference.steps[-1]
    assert isinstance(marked, CallStep) and marked.recalls
    assert marked.stale_args == {"path": "/b.txt", "content": "Ticket OPS-1\n"}
    report = validate_spec(spec)
    assert report.ok, report.text()
    assert not _baseline(spec, "stale").passed and not _baseline(spec, "forgetful").passed


def test_weighted_draws_favour_stories_and_stay_deterministic() -> None:
    weights = {t.name: t.weight for t in templates_for("dynamic_world")}
    assert weights["two_day_update"] > 1 and weights["data_changed_before_mail"] == 1
    picks = [generate("dynamic_world", s).metadata["templates"][0] for s in range(30)]
    assert picks.count("two_day_update") > 15
    assert picks == [generate("dynamic_world", s).metadata["templates"][0] for s in range(30)]


def test_distribution_of_a_sampled_mix_meets_the_targets() -> None:
    from synth.pipeline import plan

    profiles = [profile(generate(c, s)) for c, s in plan(None, 140, 11)]
    dist = distribution(profiles)
    assert all(t["met"] for t in dist["targets"] if not t["target"].endswith("max calls")), dist["targets"]
    assert dist["overall"]["count"] == 140
    with pytest.raises(ValueError, match="no environments"):
        distribution([])


def test_stats_cli_prints_the_table_and_json_and_fails_clearly(tmp_path: Path) -> None:
    for cap, seed in (("long_horizon", 0), ("information_retrieval", 0), ("dynamic_world", 1)):
        generate(cap, seed).save(tmp_path / f"{cap}-{seed}.json")
    runner = CliRunner()
    res = runner.invoke(app, ["stats", str(tmp_path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "long_horizon" in res.output and "overall" in res.output and "targets" in res.output
    res = runner.invoke(app, ["stats", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["overall"]["count"] == 3
    lh = data["capabilities"]["long_horizon"]
    assert lh["stages"]["max"] >= 3 and lh["calls"]["max"] >= 40
    assert data["capabilities"]["information_retrieval"]["share"]["multi_day"] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(app, ["stats", str(empty)])
    assert res.exit_code == 1 and "no environments" in res.output
    res = runner.invoke(app, ["stats", str(tmp_path / "missing")])
    assert res.exit_code == 1 and "no such file" in res.output
    (tmp_path / "bad.json").write_text('{"id": 3}')
    res = runner.invoke(app, ["stats", str(tmp_path)])
    assert res.exit_code == 1 and "bad.json is not an environment spec" in res.output
