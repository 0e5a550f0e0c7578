"""GRPO with environment rollouts: rollouts run in real workspaces, a step changes the weights the right way."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from support import need
from typer.testing import CliRunner

need(all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl")),
     "the train extra (torch, transformers, trl) is not installed")
os.environ["HF_HUB_OFFLINE"] = "1"
import torch  # noqa: E402
from test_train_sft import teacher_examples  # noqa: E402

from coworkenv.cli import app  # noqa: E402
from trainers.credit import CreditConfig  # noqa: E402
from workspace_sim.record import read_records  # noqa: E402
from trainers.training.grpo import GRPOSettings, grpo_step, token_logprobs, train_grpo  # noqa: E402
from trainers.training.rollout import (  # noqa: E402
    RolloutSettings,
    choice_rollout,
    generate_rollout,
    parse_tool_calls,
)
from trainers.models.tiny import build_tiny, load  # noqa: E402
from trainers.training.toy import archive_environments  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(tmp_path_factory.mktemp("tiny"), teacher_examples(4), vocab_size=600)


def test_parse_tool_calls() -> None:
    text = 'ok <tool_call>\n{"name": "move_file", "arguments": {"source": "/a"}}\n</tool_call><|im_end|>'
    assert parse_tool_calls(text) == ("ok", [("move_file", {"source": "/a"})], None)
    assert parse_tool_calls("<tool_call>{nope}</tool_call>")[2].startswith("tool call is not valid JSON")
    assert parse_tool_calls('<tool_call>{"name": 3}</tool_call>')[2].startswith("tool call needs")
    assert parse_tool_calls("<tool_call>{")[2] == "unterminated <tool_call> block"
    assert parse_tool_calls("Done.<|im_end|>") == ("Done.", [], None)


def test_generate_rollout_records_a_real_episode(tiny: Path) -> None:
    model, tok = load(tiny)
    env = archive_environments(1)[0]
    torch.manual_seed(0)
    r = generate_rollout(model, tok, env, RolloutSettings(max_turns=2, max_new_tokens=16), "g-0")
    assert r.record.complete and r.record.env_id == env.id and r.reward == 0.0  # an untrained model fails
    assert r.segments and r.segments[0].prompt_ids == r.record.final.tokens[0].prompt_ids
    assert tok.decode(r.segments[0].prompt_ids).count("Please archive") == 1


def test_grpo_step_changes_weights_toward_rewarded_turns(tiny: Path) -> None:
    model, tok = load(tiny)
    envs = archive_environments(2)
    settings = GRPOSettings(group_size=6, credit=CreditConfig(method="drgrpo", level="gigpo"),
                            rollout=RolloutSettings(max_turns=3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    stats, rollouts = grpo_step(model, tok, opt, envs, choice_rollout, settings, step=0)
    assert 0.0 < stats.pass_rate < 1.0 and stats.nonzero_advantages > 0  # a learning signal from predicates
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())
    # turns of passing rollouts became more likely, turns of failing ones less likely
    from trainers.credit import compute_advantages

    credit = compute_advantages([r.record for r in rollouts], settings.rollout.rewards, settings.credit)
    shift = {+1: [], -1: []}
    with torch.no_grad():
        for r in rollouts:
            adv = credit[r.record.episode_id].turn_advantages
            for seg in r.segments:
                a = adv[min(seg.turn, len(adv) - 1)]
                if a != 0:
                    delta = float(token_logprobs(model, seg).sum()) - sum(seg.old_logprobs or [])
                    shift[1 if a > 0 else -1].append(delta)
    assert sum(shift[1]) / len(shift[1]) > sum(shift[-1]) / len(shift[-1])


def test_train_grpo_writes_model_history_and_records(tiny: Path, tmp_path: Path) -> None:
    settings = GRPOSettings(steps=2, group_size=2, envs_per_step=1, learning_rate=1e-3,
                            credit=CreditConfig(method="rloo", level="turn"), rollout=RolloutSettings(max_turns=2))
    history = train_grpo(tiny, archive_environments(3), tmp_path / "rl", settings, choice_rollout,
                         tmp_path / "rollouts.jsonl")
    assert [h.step for h in history] == [0, 1]
    assert len(json.loads((tmp_path / "rl" / "grpo_history.json").read_text())) == 2
    recs = read_records(tmp_path / "rollouts.jsonl")
    assert len(recs) == 4 and all(r.complete and r.final.tokens for r in recs)
    load(tmp_path / "rl")


def test_cli_train_rl(tiny: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["train", "rl", "--model", str(tiny), "--envs", "toy:2", "--out", str(tmp_path / "o"),
                              "--group-size", "2", "--envs-per-step", "1", "--max-turns", "1", "--max-new-tokens",
                              "8", "--method", "drgrpo", "--level", "gigpo", "--threads", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[0])["step"] == 0
    res = runner.invoke(app, ["train", "rl", "--model", str(tiny), "--envs", "toy:2", "--out", str(tmp_path / "o2"),
                              "--group-size", "2", "--envs-per-step", "1", "--max-turns", "1", "--max-new-tokens",
                              "4", "--threads", "1"], terminal_width=200)
    assert res.exit_code == 0 and "GRPO: 1 step(s), grpo, episode level" in res.stdout and "{" not in res.stdout
    res = runner.invoke(app, ["train", "rl", "--model", str(tiny), "--envs", "toy:2", "--level", "token"])
    assert res.exit_code == 2 and "level" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["train", "rl", "--model", str(tiny), "--envs", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "no such file or folder" in res.output


def test_spec_prompt_rollouts_see_the_runners_system_prompt(tiny: Path) -> None:
    """RL after SFT: a rollout in a spec sees the system message the SFT data was made with."""
    from synth.procedural import generate
    from trainers.episodes.prepared import system_prompt
    from trainers.training.rollout import SPEC_PROMPT

    spec = generate("ticket_workflow", 0)
    model, tok = load(tiny)
    r = generate_rollout(model, tok, spec, RolloutSettings(max_turns=1, max_new_tokens=4, system_prompt=SPEC_PROMPT),
                         "spec-0")
    assert r.record.final.messages[0].role == "system"
    assert r.record.final.messages[0].content == system_prompt(spec) and "acting for" in system_prompt(spec)
    with pytest.raises(ValueError, match="needs an environment spec"):
        RolloutSettings(system_prompt=SPEC_PROMPT).prompt_for(archive_environments(1)[0])


# --- multi-day scenarios: the rollouts play the spec's turn semantics ----------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "specs"


def teacher_through_recorder(spec, seed: int = 3):  # type: ignore[no-untyped-def]
    """The teacher's turns handed to an EpisodeRecorder one by one, as a rollout hands in the student's."""
    from trainers.episodes.policies import make_policy
    from trainers.episodes.turns import EpisodeContext
    from trainers.training.episode import EpisodeRecorder

    teacher = make_policy("teacher")
    rec = EpisodeRecorder(spec, "e", teacher.info(), seed=seed)
    teacher.start(EpisodeContext("e", seed, spec, rec.tools, rec.session.driver.fill))
    while not rec.done:
        turn = teacher.act(rec.messages, rec.tools)
        rec.turn(turn.content, [(c.name, c.arguments) for c in turn.calls], expects_reply=turn.expects_reply)
    return rec.finish("error")  # the episode stopped itself ("answered"); this reason is not used


@pytest.mark.parametrize("name", ["handwritten-multiday-vendor-week", "handwritten-clarify-recipient"])
def test_the_recorder_plays_a_spec_exactly_as_the_runner(name: str) -> None:
    from synth import load_spec
    from trainers.episodes.policies import make_policy
    from trainers.episodes.runner import run_episode

    spec = load_spec(EXAMPLES / f"{name}.yaml")
    ref = run_episode(spec, make_policy("teacher"), episode_id="e", seed=3)
    got = teacher_through_recorder(spec)
    a, b = ref.model_dump(mode="json"), got.model_dump(mode="json")
    a["final"].pop("timings"), b["final"].pop("timings")
    assert a == b and got.final.stop_reason == "answered" and got.passed
    users = [m.content for m in got.final.messages if m.role == "user"]
    if spec.stages:
        assert sum(u.startswith("[Day ") for u in users) == 2  # days 2 and 3 opened as the user's messages
    else:
        assert len(users) >= 2  # the user answered the question


def test_scenario_candidates_offer_the_step_its_stale_call_and_an_early_done() -> None:
    from synth import load_spec
    from synth.spec import CallStep, EndStageStep
    from trainers.training.rollout import _after_day, scenario_candidates

    spec = load_spec(EXAMPLES / "handwritten-multiday-vendor-week.yaml")
    steps = spec.reference.steps
    stale = next(i for i, s in enumerate(steps) if isinstance(s, CallStep) and s.stale_args is not None)
    cands = scenario_candidates(spec, stale, lambda v: v)
    assert [c.calls[0][1] for c in cands[:2]] == [dict(steps[stale].args), dict(steps[stale].stale_args)]
    assert cands[-1].content == "Done." and cands[-1].step is None and cands[-1].expects_reply is None
    day_end = next(i for i, s in enumerate(steps) if isinstance(s, EndStageStep))
    assert scenario_candidates(spec, day_end, lambda v: v)[0].expects_reply is False
    assert _after_day(spec, 0) == day_end + 1 and _after_day(spec, 5) == len(steps)
    [final, done] = scenario_candidates(spec, len(steps), lambda v: v)
    assert final.content == spec.reference.final_answer and final.expects_reply is False


@pytest.mark.slow
def test_choice_rollouts_in_a_three_day_scenario_pay_each_day_where_it_closed(tiny: Path) -> None:
    from synth import load_spec
    from trainers.rewards import RewardConfig, turn_rewards
    from trainers.training.rollout import SPEC_PROMPT, candidate_logprobs, sequence_logprob

    spec = load_spec(EXAMPLES / "handwritten-multiday-vendor-week.yaml")
    model, tok = load(tiny)
    rewards = RewardConfig(terminal="partial", per_stage=True)
    settings = GRPOSettings(group_size=2, envs_per_step=1, credit=CreditConfig(level="turn"),
                            rollout=RolloutSettings(max_turns=10, rewards=rewards, system_prompt=SPEC_PROMPT))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    stats, rollouts = grpo_step(model, tok, opt, [spec], choice_rollout, settings, step=0)
    for r in rollouts:
        rec = r.record
        assert rec.complete and len(r.segments) == len(rec.final.tokens) == len({s.turn for s in rec.steps})
        assert [s["id"] for s in rec.final.evaluation["stages"]] == ["mon", "tue", "wed"]
        assert r.reward == pytest.approx(sum(turn_rewards(rec, rewards)))
        closed = {e.args["stage"]: e.turn for e in rec.events if e.kind == "stage"}
        opened = [m.content for m in rec.final.messages if m.role == "user" and (m.content or "").startswith("[Day ")]
        assert len(opened) == len(closed)  # each day closed opened the next as the user's message
        per_turn = turn_rewards(rec, rewards)
        for stage, turn in closed.items():  # a closed day's reward is paid in the turn that closed it
            verdict = next(s for s in rec.final.evaluation["stages"] if s["id"] == stage)
            assert per_turn[turn] == pytest.approx(verdict["score"] / 3)
    assert stats.tokens > 0
    # the cached scoring equals the plain sequence log-probability
    prompt = rollouts[0].segments[0].prompt_ids
    cands = [tok(t, add_special_tokens=False)["input_ids"] for t in ("Done.<|im_end|>", "x", "a longer answer")]
    with torch.no_grad():
        plain = [float(sequence_logprob(model, prompt, c)) / len(c) for c in cands]
    assert candidate_logprobs(model, prompt, cands) == pytest.approx(plain, abs=1e-4)


def test_generate_rollout_in_a_scenario_talks_to_the_user(tiny: Path) -> None:
    from synth import load_spec
    from trainers.episodes.prepared import system_prompt

    spec = load_spec(EXAMPLES / "handwritten-multiday-vendor-week.yaml")
    model, tok = load(tiny)
    torch.manual_seed(0)
    r = generate_rollout(model, tok, spec, RolloutSettings(max_turns=2, max_new_tokens=8), "g-days")
    rec = r.record
    assert rec.complete and rec.final.messages[1].content == spec.request
    assert rec.final.stop_reason in ("max_turns", "max_tokens", "answered")
    assert rec.final.evaluation["stages"] and len(r.segments) == len(rec.final.tokens)
    assert rec.final.messages[0].content != system_prompt(spec)  # the settings' own system prompt was used


def test_cli_train_rl_per_stage_on_a_folder_with_the_three_day_example(tiny: Path, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "envs"
    folder.mkdir()
    shutil.copy(EXAMPLES / "handwritten-multiday-vendor-week.yaml", folder)
    res = CliRunner().invoke(app, ["train", "rl", "--model", str(tiny), "--envs", str(folder), "--out",
                                   str(tmp_path / "o"), "--group-size", "2", "--envs-per-step", "1", "--max-turns", "3",
                                   "--rollout", "choice", "--terminal", "partial", "--per-stage", "--level", "turn",
                                   "--threads", "1", "--records", str(tmp_path / "r.jsonl"), "--json"])
    assert res.exit_code == 0, res.output
    recs = read_records(tmp_path / "r.jsonl")
    assert len(recs) == 2 and all(r.final.evaluation["stages"] for r in recs)
    assert all(r.header.policy.settings["rewards"]["per_stage"] for r in recs)
