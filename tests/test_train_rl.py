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
from trainers.record import read_records  # noqa: E402
from trainers.training.grpo import GRPOSettings, grpo_step, token_logprobs, train_grpo  # noqa: E402
from trainers.training.rollout import (  # noqa: E402
    RolloutSettings,
    choice_rollout,
    generate_rollout,
    parse_tool_calls,
)
from trainers.training.tiny import build_tiny, load  # noqa: E402
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
    assert res.exit_code == 2 and "not a folder" in res.output


def test_spec_prompt_rollouts_see_the_runners_system_prompt(tiny: Path) -> None:
    """RL after SFT: a rollout in a spec sees the system message the SFT data was made with."""
    from synth.procedural import generate
    from trainers.episodes.runner import system_prompt
    from trainers.training.rollout import SPEC_PROMPT

    spec = generate("ticket_workflow", 0)
    model, tok = load(tiny)
    r = generate_rollout(model, tok, spec, RolloutSettings(max_turns=1, max_new_tokens=4, system_prompt=SPEC_PROMPT),
                         "spec-0")
    assert r.record.final.messages[0].role == "system"
    assert r.record.final.messages[0].content == system_prompt(spec) and "acting for" in system_prompt(spec)
    with pytest.raises(ValueError, match="needs an environment spec"):
        RolloutSettings(system_prompt=SPEC_PROMPT).prompt_for(archive_environments(1)[0])
