"""The TRL adapter: our environments in TRL's GRPOTrainer via environment_factory, with registry tool schemas."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from support import need

need(all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl", "datasets")),
     "the train extra (torch, transformers, trl, datasets) is not installed")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
import torch  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402

from adapter_scripts import STAGE_REWARD, comparable, day_headers, scenario_reference, stage_verdicts  # noqa: E402

from trainers.episodes.prepared import PreparedSpec  # noqa: E402
from workspace_sim.record import read_records  # noqa: E402
from trainers.rewards import RewardConfig  # noqa: E402
from trainers.training.sft import train_sft  # noqa: E402
from trainers.models.tiny import build_tiny, load  # noqa: E402
from trainers.training.toy import archive_environments  # noqa: E402
from trainers.adapters.trl import TRLAdapter  # noqa: E402
from workspace_sim import all_tools  # noqa: E402

torch.set_num_threads(1)


def test_tool_methods_carry_the_registry_schema() -> None:
    adapter = TRLAdapter(archive_environments(2), tool_names=["move_file", "list_directory", "edit_file",
                                                              "read_text_file"])
    env = adapter.environment_factory()
    for name in adapter.tool_names:
        rendered = get_json_schema(getattr(env, name))["function"]
        registry = all_tools()[name]
        assert rendered["name"] == name and rendered["description"] == registry.description
        assert set(rendered["parameters"]["properties"]) == set(registry.input_schema["properties"])
        assert set(rendered["parameters"].get("required", [])) == set(registry.input_schema.get("required", []))
        for arg, prop in registry.input_schema["properties"].items():
            assert rendered["parameters"]["properties"][arg]["description"] == prop["description"]
    assert get_json_schema(env.edit_file)["function"]["parameters"]["properties"]["edits"]["type"] == "array"


def test_episode_through_the_adapter(tmp_path: Path) -> None:
    envs = archive_environments(2)
    adapter = TRLAdapter(envs, RewardConfig(terminal="partial"), records_path=tmp_path / "trl.jsonl")
    env = adapter.environment_factory()
    assert env.reset(env_id=envs[1].id, prompt=[]) is None
    assert "invalid arguments" in env.move_file(source="/inbox/x")  # errors come back as text for the model
    assert "moved: 1" in env.move_file(source=f"/inbox/{envs[1].name}", destination=f"/archive/{envs[1].name}")
    [reward] = adapter.reward_func([[{"role": "assistant", "content": "Archived."}]], [env])
    assert reward == 1.0
    [rec] = read_records(tmp_path / "trl.jsonl")
    assert rec.env_id == envs[1].id and rec.passed and rec.final.final_answer == "Archived."
    assert [e.tool for e in rec.events if e.kind == "call"] == ["move_file", "move_file"]
    with pytest.raises(ValueError, match="unknown env_id"):
        env.reset(env_id="nope")
    with pytest.raises(ValueError, match="not in the tool registry"):
        TRLAdapter(envs, tool_names=["teleport"])


def test_grpo_step_in_trl(tmp_path: Path) -> None:
    from trl import GRPOConfig, GRPOTrainer

    envs = archive_environments(2)
    adapter = TRLAdapter(envs, records_path=tmp_path / "rollouts.jsonl")
    # Prime the tiny model on a teacher turn for the first environment, rendered exactly as TRL will
    # prompt it (the adapter's tool schemas), so that its rollouts really call our tools.
    probe = adapter.environment_factory()
    prompt = adapter.dataset()[0]["prompt"]
    teacher = {"messages": prompt + [{"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": name, "arguments": args}} for name, args in envs[0].solution()]}],
        "tools": [get_json_schema(getattr(probe, n)) for n in adapter.tool_names]}
    base = build_tiny(tmp_path / "tiny", [teacher], vocab_size=600)
    train_sft(base, [teacher], tmp_path / "primed", max_steps=60, batch_size=1, learning_rate=3e-3)
    model, tok = load(tmp_path / "primed")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"), max_steps=1, per_device_train_batch_size=8, num_generations=4,
        max_completion_length=64, learning_rate=1e-2, report_to=[], use_cpu=True, logging_steps=1,
        save_strategy="no", max_tool_calling_iterations=2, disable_tqdm=True, temperature=1.0, seed=0,
    )
    trainer = GRPOTrainer(model=model, processing_class=tok, args=config, train_dataset=adapter.dataset(repeats=2),
                          environment_factory=adapter.environment_factory, reward_funcs=[adapter.reward_func])
    trainer.train()
    assert trainer.state.global_step == 1
    records = read_records(tmp_path / "rollouts.jsonl")
    assert len(records) == 8 and all(r.complete for r in records)
    calls = [e for r in records for e in r.events if e.kind == "call"]
    assert calls, "TRL ran no tool call of ours"
    assert any(r.passed for r in records)  # a primed rollout archived the file in a real workspace
    rewards = [r.final.reward for r in records]
    log = trainer.state.log_history[0]
    assert log["reward"] == pytest.approx(sum(rewards) / len(rewards))
    if len(set(rewards)) > 1:  # GRPO only moves weights when a group's rewards differ
        assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())


def mixed_environments() -> list:
    """Two archive tasks (file tools) and a scheduling spec (calendar and contacts tools): two tool sets."""
    from synth.spec import load_spec

    specs = Path(__file__).resolve().parents[2] / "examples/specs"
    scheduling = load_spec(specs / "generated-scheduling-earliest-common-slot-5.yaml")
    return [*archive_environments(2), scheduling]


def test_mixed_environments_each_offer_their_own_tools(tmp_path: Path) -> None:
    # issue 19 item 7: the tool list was the union over all environments and the first rollout of an
    # environment lacking one of them crashed ("tool(s) [...] are not enabled in its workspace")
    envs = mixed_environments()
    adapter = TRLAdapter(envs, records_path=tmp_path / "trl.jsonl")
    assert adapter.multi_environment and isinstance(adapter.environment_factory, dict)
    assert adapter.toolset_of == {"archive-0": "toolset-0", "archive-1": "toolset-0", envs[2].id: "toolset-1"}
    assert adapter.tool_names_of("archive-0") == ["list_directory", "move_file"]
    # a spec also offers the pager and the conversation's control tools (its turn semantics are the runner's)
    assert adapter.tool_names_of(envs[2].id) == sorted(envs[2].build_workspace().tools) + [
        "read_result_page", "ask_user", "submit_answer"]
    rows = adapter.dataset()
    assert [r["environment"] for r in rows] == ["toolset-0", "toolset-0", "toolset-1"]
    calendar = adapter.environment_factory["toolset-1"]()
    assert calendar.reset(env_id=envs[2].id) is None
    assert not hasattr(calendar, "move_file") and "find_free_slots" in dir(calendar)
    assert calendar.list_events()  # a real calendar call in the scheduling workspace
    [reward] = adapter.reward_func(["Nothing to do."], [calendar])
    assert isinstance(reward, float)
    [rec] = read_records(tmp_path / "trl.jsonl")
    assert rec.env_id == envs[2].id
    assert [t["function"]["name"] for t in rec.header.tools] == [t["function"]["name"] for t in
                                                                 PreparedSpec(envs[2]).tools]  # the runner's
    with pytest.raises(ValueError, match="has tool set 'toolset-1', not this class's 'toolset-0'"):
        adapter.environment_factory["toolset-0"]().reset(env_id=envs[2].id)
    with pytest.raises(ValueError, match="2 tool sets"):
        adapter.environment_class
    with pytest.raises(ValueError, match=r"\['find_free_slots'\] are enabled in none"):
        TRLAdapter(envs[:2], tool_names=["move_file", "find_free_slots"])


def test_grpo_step_over_mixed_environments(tmp_path: Path) -> None:
    # issue 19 item 7 through TRL itself: one GRPO step whose batch holds both tool sets
    from trl import GRPOConfig, GRPOTrainer

    envs = mixed_environments()[1:]  # one archive task, one scheduling task
    adapter = TRLAdapter(envs, records_path=tmp_path / "rollouts.jsonl")
    corpus = [{"messages": row["prompt"], "tools": [get_json_schema(getattr(adapter.environment_for(row["env_id"]), n))
                                                    for n in adapter.tool_names_of(row["env_id"])]}
              for row in adapter.dataset()]
    model, tok = load(build_tiny(tmp_path / "tiny", corpus, vocab_size=600))
    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"), max_steps=1, per_device_train_batch_size=4, num_generations=2,
        max_completion_length=24, learning_rate=1e-3, report_to=[], use_cpu=True, logging_steps=1,
        save_strategy="no", max_tool_calling_iterations=1, disable_tqdm=True, seed=0, shuffle_dataset=False,
    )
    trainer = GRPOTrainer(model=model, processing_class=tok, args=config, train_dataset=adapter.dataset(),
                          environment_factory=adapter.environment_factory, reward_funcs=[adapter.reward_func])
    trainer.train()
    assert trainer.state.global_step == 1
    records = read_records(tmp_path / "rollouts.jsonl")
    assert sorted(r.env_id for r in records) == sorted([envs[0].id] * 2 + [envs[1].id] * 2)
    for r in records:  # each rollout was offered its own environment's tools, and only those ran
        offered = [t["function"]["name"] for t in r.header.tools]
        assert set(offered) <= set(adapter.tool_names_of(r.env_id))
        assert all(e.tool in offered for e in r.events if e.kind == "call")


def test_a_three_day_scenario_is_played_to_the_end_through_the_trl_environment(tmp_path: Path) -> None:
    """TRL's loop ends a rollout at the first answer without a call, so the days go on through submit_answer:
    its result is the next day's instructions; the record is the runner's, per-day verdicts included."""
    spec, ref, turns = scenario_reference(seed=0)  # TRL's rollouts have no seed of their own
    adapter = TRLAdapter([spec], STAGE_REWARD, records_path=tmp_path / "trl.jsonl")
    [row] = adapter.dataset()
    assert row["prompt"] == [{"role": m.role, "content": m.content} for m in ref.final.messages[:2]]
    env = adapter.environment_factory()
    assert env.reset(**row) is None
    seen = []
    for turn in turns[:-1]:  # TRL's tool loop: every call, question and day report is a tool call
        if turn.calls:
            [call] = turn.calls
            seen.append(getattr(env, call.name)(**call.arguments))
        elif turn.expects_reply:
            seen.append(env.ask_user(question=turn.content))
        else:
            seen.append(env.submit_answer(answer=turn.content))
    assert day_headers(seen) == ["[Day 2 of 3, Tuesday 3 March]", "[Day 3 of 3, Wednesday 4 March]"]
    assert "Lee Park" in next(t for t in seen if "[Day 2 of 3" in t)
    # the last day's report is the completion's closing text, without a call
    [reward] = adapter.reward_func([[{"role": "assistant", "content": turns[-1].content}]], [env])
    [record] = read_records(tmp_path / "trl.jsonl")
    assert record.final.stop_reason == "answered" and stage_verdicts(record) == stage_verdicts(ref)
    assert comparable(record) == comparable(ref) and reward == pytest.approx(ref.final.reward)


def test_an_unfinished_scenario_and_control_tool_errors_through_trl(tmp_path: Path) -> None:
    spec, ref, turns = scenario_reference()
    adapter = TRLAdapter([spec], STAGE_REWARD)
    env = adapter.environment_factory()
    env.reset(env_id=spec.id)
    assert "ask_user needs a question" in env.ask_user(question="  ")
    assert env.submit_answer(answer="Done for today.").startswith("[Day 2 of 3")  # an early close: day 2 opens
    [reward] = adapter.reward_func([[{"role": "assistant", "content": "All done."}]], [env])  # closes day 2
    [record] = adapter.records
    assert record.final.stop_reason == "max_turns" and "TRL's rollout ended" in record.final.stop_detail
    verdicts = {s[0]: s[1:] for s in stage_verdicts(record)}
    assert verdicts["mon"][0] is False and verdicts["wed"][2] is True and verdicts["wed"][0] is False
    env.reset(env_id=spec.id)
    env.submit_answer(answer="")  # empty: the episode ends at once
    assert "episode has ended" in env.search_contacts(query="Dana")
