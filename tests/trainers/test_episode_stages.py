"""Multi-day scenarios through the episode runner: each day opens with its instructions and the world's changes,
each stage is judged on the state it closed on, stage scores become turn rewards, the stale and forgetful
baselines fail where the scenario says they must, and a record replays to the same states."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth import load_spec
from trainers.episodes.policies import make_policy
from workspace_sim.record import replay_record
from trainers.episodes.runner import run_episode
from trainers.episodes.turns import AgentTurn, EpisodeContext
from workspace_sim.record import PolicyInfo
from trainers.rewards import RewardConfig, turn_rewards

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "specs" / "handwritten-multiday-vendor-week.yaml"


@pytest.fixture(scope="module")
def spec():  # type: ignore[no-untyped-def]
    return load_spec(EXAMPLE)


def stages(record) -> dict[str, tuple[bool, float]]:  # type: ignore[no-untyped-def]
    return {s["id"]: (s["passed"], s["score"]) for s in record.final.evaluation["stages"]}


def test_the_teacher_passes_every_day_and_the_days_open_with_their_instructions(spec) -> None:  # type: ignore[no-untyped-def]
    rec = run_episode(spec, make_policy("teacher"))
    assert rec.final.evaluation["passed"] and rec.final.stop_reason == "answered"
    assert stages(rec) == {"mon": (True, 1.0), "tue": (True, 1.0), "wed": (True, 1.0)}
    users = [m.content for m in rec.final.messages if m.role == "user"]
    day2 = next(u for u in users if u.startswith("[Day 2 of 3, Tuesday 3 March]"))
    assert "Lee Park" in day2 and "Acme" not in day2  # the correction overnight is silent
    assert any(u.startswith("[Day 3 of 3, Wednesday 4 March]") for u in users)
    closed = [e for e in rec.events if e.kind == "stage"]
    assert [e.args["stage"] for e in closed] == ["mon", "tue"]
    assert [e.sim_time[:10] for e in closed] == ["2026-03-02", "2026-03-03"]
    world = [e for e in rec.events if e.kind == "world"]
    assert len(world) == 1 and world[0].sim_time.startswith("2026-03-03T09:00")
    # the vague answer came first, the precise one when pressed
    assert users[1].startswith("Dana, you know") and "dana.reyes@" in users[2]


def test_the_stale_agent_fails_the_days_after_the_silent_change(spec) -> None:  # type: ignore[no-untyped-def]
    rec = run_episode(spec, make_policy("stale"))
    by_stage = stages(rec)
    assert by_stage["mon"] == (True, 1.0)
    assert by_stage["tue"][0] is False and by_stage["wed"][0] is False
    assert not rec.final.evaluation["passed"] and 0 < rec.final.evaluation["score"] < 1


def test_the_forgetful_agent_fails_the_standing_rule(spec) -> None:  # type: ignore[no-untyped-def]
    rec = run_episode(spec, make_policy("forgetful"))
    failed = [r["description"] for r in rec.final.evaluation["results"] if not r["passed"]]
    assert failed and all("standing rule" in d for d in failed)
    assert stages(rec)["mon"] == (True, 1.0)


class OneDayAgent:
    """Plays the reference's first day, then reports 'done' every day after without doing anything."""

    def info(self) -> PolicyInfo:
        return PolicyInfo(name="one-day", settings={})

    def start(self, context: EpisodeContext) -> None:
        self.teacher = make_policy("teacher")
        self.teacher.start(context)
        self.days_done = 0

    def act(self, messages, tools) -> AgentTurn:  # type: ignore[no-untyped-def]
        if self.days_done:
            return AgentTurn(content="Nothing more to do today.", expects_reply=False)
        turn = self.teacher.act(messages, tools)
        if not turn.calls and turn.expects_reply is False:
            self.days_done += 1
        return turn


def test_a_day_is_judged_on_the_state_it_closed_on_and_pays_its_reward_in_that_turn(spec) -> None:  # type: ignore[no-untyped-def]
    rec = run_episode(spec, OneDayAgent())
    assert stages(rec)["mon"] == (True, 1.0) and stages(rec)["tue"][0] is False
    closing_turn = next(e.turn for e in rec.events if e.kind == "stage" and e.args["stage"] == "mon")
    outcome = turn_rewards(rec, RewardConfig(per_stage=True, violation_penalty=0, fault_penalty=0))
    assert outcome[closing_turn] == pytest.approx(1 / 3) and sum(outcome) == pytest.approx(1 / 3)
    partial = turn_rewards(rec, RewardConfig(per_stage=True, terminal="partial"))
    assert partial[closing_turn] == pytest.approx(1 / 3)
    assert sum(partial) == pytest.approx(sum(stages(rec)[s][1] for s in ("mon", "tue", "wed")) / 3)
    # without per_stage the outcome reward is one number at the end, and it is 0: the week failed
    assert turn_rewards(rec)[-1] == 0.0 and sum(turn_rewards(rec)) == 0.0


def test_the_teachers_per_stage_rewards_sum_to_its_outcome(spec) -> None:  # type: ignore[no-untyped-def]
    rec = run_episode(spec, make_policy("teacher"))
    rewards = turn_rewards(rec, RewardConfig(per_stage=True))
    assert sum(rewards) == pytest.approx(1.0) and sum(r > 0 for r in rewards) == 3


def test_a_multi_day_record_replays_to_the_same_states(spec) -> None:  # type: ignore[no-untyped-def]
    for name in ("teacher", "stale"):
        rec = run_episode(spec, make_policy(name))
        report = replay_record(rec, spec)
        assert report.ok, report.mismatches


def test_the_mcp_path_gives_the_same_record_as_the_direct_one(spec) -> None:  # type: ignore[no-untyped-def]
    direct = run_episode(spec, make_policy("teacher"), episode_id="e")
    mcp = run_episode(spec, make_policy("teacher"), episode_id="e", transport="mcp")
    assert [e.model_dump() for e in direct.events] == [e.model_dump() for e in mcp.events]
    assert direct.final.evaluation == mcp.final.evaluation


def test_sft_export_keeps_the_week_as_one_conversation_with_its_days_marked(spec) -> None:  # type: ignore[no-untyped-def]
    from trainers.export.sft import to_hf, to_openai

    example = to_hf(run_episode(spec, make_policy("teacher")))
    messages = example["messages"]
    assert len(example["days"]) == 3 and messages[example["days"][0]]["content"] == spec.request
    assert [messages[i]["content"].split("]")[0] for i in example["days"][1:]] == [
        "[Day 2 of 3, Tuesday 3 March", "[Day 3 of 3, Wednesday 4 March"]
    assert example["days"] == sorted(example["days"]) and messages[-1]["role"] == "assistant"
    assert "days" not in to_openai(run_episode(spec, make_policy("teacher")))  # OpenAI's format has no such key
    single = to_hf(run_episode(load_spec(EXAMPLE.with_name("handwritten-clarify-recipient.yaml")), make_policy("teacher")))
    assert "days" not in single


class PlainReporter:
    """The teacher's calls, but every message as a learned policy sends it: no expects_reply hint, so the
    simulated user decides whether it asks something (the day goes on) or closes the day."""

    def info(self) -> PolicyInfo:
        return PolicyInfo(name="plain", settings={})

    def start(self, context: EpisodeContext) -> None:
        self.teacher = make_policy("teacher")
        self.teacher.start(context)

    def act(self, messages, tools) -> AgentTurn:  # type: ignore[no-untyped-def]
        turn = self.teacher.act(messages, tools)
        return AgentTurn(content=turn.content, calls=turn.calls)


def test_a_day_report_closes_the_day_though_a_later_follow_up_is_scheduled(spec) -> None:  # type: ignore[no-untyped-def]
    doc = spec.to_document()
    doc["user_simulator"]["followups"] = [{"turn": 4, "text": "Also: keep it short on Wednesday."}]
    later = type(spec).model_validate(doc)
    rec = run_episode(later, PlainReporter())
    assert rec.final.evaluation["passed"], [r for r in rec.final.evaluation["results"] if not r["passed"]]
    assert [e.args["stage"] for e in rec.events if e.kind == "stage"] == ["mon", "tue"]
    users = [m.content for m in rec.final.messages if m.role == "user"]
    assert any(u.startswith("[Day 3 of 3") and u.endswith("keep it short on Wednesday.") for u in users)


def test_limits_scale_to_a_long_scenario_unless_given() -> None:
    from synth.procedural import generate
    from trainers.episodes.prepared import EpisodeLimits

    week = max((generate("long_horizon", s) for s in range(4)), key=lambda s: len(s.reference.steps))
    scaled = EpisodeLimits().for_spec(week)
    assert scaled.max_turns >= 3 * len(week.reference.steps) and scaled.max_tool_calls >= 3 * len(week.reference.calls())
    rec = run_episode(week, make_policy("teacher"))
    assert rec.passed and rec.final.stop_reason == "answered"
    assert rec.header.policy.settings["limits"]["max_turns"] == scaled.max_turns
    assert EpisodeLimits(max_turns=5).for_spec(week).max_turns == 5
    cut = run_episode(week, make_policy("teacher"), limits=EpisodeLimits(max_turns=5))
    assert cut.final.stop_reason == "max_turns"


def test_run_episodes_and_eval_show_each_day(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from typer.testing import CliRunner

    from coworkenv.cli import app

    out = tmp_path / "stale.jsonl"
    res = CliRunner().invoke(app, ["run", str(EXAMPLE), "-p", "stale", "-o", str(out)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "days" in res.output and "1/3" in res.output  # Monday passed, the days after the silent change did not
    res = CliRunner().invoke(app, ["episodes", str(out), "--json"])
    [row] = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert [(s["id"], s["passed"]) for s in row["stages"]] == [("mon", True), ("tue", False), ("wed", False)]
    res = CliRunner().invoke(app, ["eval", str(out), "--spec", str(EXAMPLE)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "days: mon ✓1.00  tue ✗0.00" in res.output


def test_the_report_shows_the_days_and_what_changed_between_them(spec, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import xml.etree.ElementTree as ET

    from trainers.report.html import episode_pages, write_report

    recs = [run_episode(spec, make_policy("teacher")), run_episode(spec, make_policy("stale"))]
    write_report(recs, tmp_path)
    stale_page = tmp_path / "episodes" / episode_pages(recs)[1]
    html = stale_page.read_text(encoding="utf-8")
    ET.fromstring(html)  # still well-formed XHTML
    days = html[html.index("<h2>Days</h2>"):html.index("<h2>Predicates</h2>")]
    assert days.count("<tr><td>") == 3 and "files.files /data/vendors.csv changed" in days
    assert days.index("<td>tue</td>") < days.index("/data/vendors.csv changed") < days.index("<td>wed</td>")
    assert html.count('<h3 class="day">') == 3 and "Day 2 of 3, Tuesday 3 March" in html
    assert ">day<" in html  # the predicates table names each one's day
