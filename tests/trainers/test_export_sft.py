"""SFT and RL export from real recorded episodes, checked against the documented shapes of each format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from coworkenv.cli import app
from trainers.export.rl import export_rl
from trainers.export.sft import (
    ExportError,
    export_sft,
    select_sft_episodes,
    split_by_environment,
    to_hf,
    to_openai,
)
from workspace_sim.record import EpisodeRecord, PolicyInfo, ViolationInfo, write_records
from trainers.training.episode import EpisodeRecorder
from trainers.training.toy import ArchiveEnvironment, archive_environments
from workspace_sim import all_tools


def teacher(env: ArchiveEnvironment, eid: str, say: str = "Done: archived.") -> EpisodeRecord:
    rec = EpisodeRecorder(env, eid, PolicyInfo(name="teacher"), system_prompt="You manage files.")
    rec.turn("Looking first.", [("list_directory", {"path": "/inbox"})])
    rec.turn(None, env.solution())
    rec.turn(say)
    return rec.finish("answered")


def wrong(env: ArchiveEnvironment, eid: str) -> EpisodeRecord:
    rec = EpisodeRecorder(env, eid, PolicyInfo(name="student"))
    rec.turn(None, [("move_file", {"source": f"/inbox/{env.others[0]}", "destination": f"/archive/{env.others[0]}"})])
    return rec.finish("max_turns")


def corpus() -> list[EpisodeRecord]:
    envs = archive_environments(6)
    recs = [teacher(e, f"t-{e.id}") for e in envs]
    recs.append(teacher(envs[0], "t-dup"))  # same transcript as t-archive-0: a duplicate
    recs.append(teacher(envs[1], "t-other-words", say="All done."))  # same env, different transcript: kept
    recs.append(wrong(envs[2], "w-2"))
    unfinished = teacher(envs[3], "u-3")
    unfinished.final = None
    recs.append(unfinished)
    violator = teacher(envs[4], "v-4")
    assert violator.final is not None
    violator.final.policy_violations = [ViolationInfo(event_index=1, tool="move_file", policy="p", message="no")]
    recs.append(violator)
    return recs


# --- documented shapes -------------------------------------------------------------------------------


def check_tools(tools: Any, strict: bool = False) -> set[str]:
    """Both formats: `tools` is a list of {"type": "function", "function": {name, description, parameters}}
    (the openai format's in strict form, with `strict: true`)."""
    assert isinstance(tools, list) and tools
    names = set()
    for t in tools:
        assert set(t) == {"type", "function"} and t["type"] == "function"
        fn = t["function"]
        assert set(fn) == {"name", "description", "parameters"} | ({"strict"} if strict else set())
        assert fn["parameters"]["type"] == "object"
        # taken from the registry, not copied by hand
        assert t == all_tools()[fn["name"]].openai_schema(strict)
        names.add(fn["name"])
    return names


def check_hf(example: dict[str, Any]) -> None:
    """HF chat format: messages with roles; assistant tool_calls {type, function: {name, arguments: dict}}."""
    assert set(example) == {"messages", "tools"}
    names = check_tools(example["tools"])
    for m in example["messages"]:
        assert m["role"] in {"system", "user", "assistant", "tool"}
        for call in m.get("tool_calls", []):
            assert call["type"] == "function"
            assert isinstance(call["function"]["arguments"], dict)
            assert call["function"]["name"] in names
        if m["role"] == "tool":
            assert isinstance(m["content"], str) and m["name"] in names


def check_openai(example: dict[str, Any]) -> None:
    """OpenAI fine-tuning: string arguments; each call has an id; each tool message a matching tool_call_id."""
    assert set(example) == {"messages", "tools"}
    names = check_tools(example["tools"], strict=True)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in example["tools"]}
    open_ids: list[str] = []
    for m in example["messages"]:
        assert m["role"] in {"system", "user", "assistant", "tool"}
        if m["role"] == "assistant" and "tool_calls" in m:
            for call in m["tool_calls"]:
                assert set(call) == {"id", "type", "function"} and call["type"] == "function"
                assert isinstance(call["function"]["arguments"], str)
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
                assert call["function"]["name"] in names
                # as a strict caller sends them: valid against the strict schema, every argument there
                jsonschema.validate(json.loads(call["function"]["arguments"]), schemas[call["function"]["name"]])
                open_ids.append(call["id"])
        elif m["role"] == "tool":
            assert set(m) == {"role", "tool_call_id", "content"}
            assert m["tool_call_id"] in open_ids
            open_ids.remove(m["tool_call_id"])
        else:
            assert isinstance(m["content"], str) and "tool_call_id" not in m
    assert open_ids == []  # every call answered
    assert example["messages"][-1]["role"] == "assistant"


# --- tests ---------------------------------------------------------------------------------------------


def test_selection_filters_and_dedupes() -> None:
    kept, skipped = select_sft_episodes(corpus())
    assert [r.episode_id for r in kept] == [f"t-archive-{i}" for i in range(6)] + ["t-other-words"]
    assert skipped == {"duplicate": 1, "failed predicates": 1, "unfinished": 1, "policy violation": 1}


@pytest.mark.parametrize("fmt, check", [("hf", check_hf), ("openai", check_openai)])
def test_export_writes_documented_shape_split_by_env(tmp_path: Path, fmt: str, check) -> None:  # type: ignore[no-untyped-def]
    write_records(corpus(), tmp_path / "records.jsonl")
    report = export_sft(tmp_path / "records.jsonl", tmp_path / "out", fmt, validation_fraction=0.34, seed=1)  # type: ignore[arg-type]
    assert report.train + report.validation == 7 and report.validation >= 1
    assert not set(report.train_envs) & set(report.validation_envs)
    envs_seen: dict[str, set[str]] = {"train": set(), "validation": set()}
    for split in ("train", "validation"):
        for line in (tmp_path / "out" / f"{split}.jsonl").read_text().splitlines():
            ex = json.loads(line)
            check(ex)
            envs_seen[split].add(next(m["content"] for m in ex["messages"] if m["role"] == "user"))
    assert envs_seen["train"] and envs_seen["validation"]
    assert not envs_seen["train"] & envs_seen["validation"]  # no environment's task in both splits
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["format"] == fmt and manifest["skipped"]["duplicate"] == 1


def test_hf_and_openai_carry_the_same_calls() -> None:
    rec = teacher(archive_environments(1)[0], "x")
    hf, oa = to_hf(rec), to_openai(rec)
    hf_calls = [c["function"] for m in hf["messages"] for c in m.get("tool_calls", [])]
    oa_calls = [c["function"] for m in oa["messages"] for c in m.get("tool_calls", [])]
    assert [c["name"] for c in hf_calls] == [c["name"] for c in oa_calls] == ["list_directory", "move_file"]
    # the same calls, the openai format's with every optional argument there as null
    strict = [json.loads(c["arguments"]) for c in oa_calls]
    assert [{k: v for k, v in a.items() if k in h["arguments"]} for a, h in zip(strict, hf_calls)] \
        == [c["arguments"] for c in hf_calls]
    assert all(v is None for a, h in zip(strict, hf_calls) for k, v in a.items() if k not in h["arguments"])
    assert all(set(a) == set(all_tools()[c["name"]].strict_input_schema["properties"]) for a, c in zip(strict, oa_calls))


def test_openai_fills_missing_ids_by_order() -> None:
    rec = teacher(archive_environments(1)[0], "x")
    assert rec.final is not None
    for m in rec.final.messages:
        for c in m.tool_calls or []:
            c.id = None
        m.tool_call_id = None
    check_openai(to_openai(rec))
    rec.final.messages.insert(1, rec.final.messages[3])  # a tool result before any call
    with pytest.raises(ExportError, match=r"messages\[1\] is a tool result"):
        to_openai(rec)


def test_unknown_tool_is_an_error() -> None:
    rec = teacher(archive_environments(1)[0], "x")
    rec.header.tools[0]["function"]["name"] = "teleport"
    with pytest.raises(ExportError, match="teleport"):
        to_hf(rec)


@settings(max_examples=50, deadline=None)
@given(envs=st.sets(st.text("abcdefgh-", min_size=1, max_size=6), max_size=20),
       frac=st.floats(0, 0.9), seed=st.integers(0, 5))
def test_split_is_a_partition(envs: set[str], frac: float, seed: int) -> None:
    train, val = split_by_environment(envs, frac, seed)
    assert train | val == envs and not train & val
    assert (train, val) == split_by_environment(sorted(envs, reverse=True), frac, seed)  # order does not matter
    if len(envs) >= 2 and frac > 0:
        assert val and train


def test_rl_export_groups_and_advantages(tmp_path: Path) -> None:
    env = archive_environments(1)[0]
    recs = [teacher(env, "good"), wrong(env, "bad"), teacher(archive_environments(2)[1], "alone")]
    assert export_rl(recs, tmp_path / "rl.jsonl")["skipped"] == {"in groups below the minimum size": 1}
    summary = export_rl(recs, tmp_path / "rl.jsonl", min_group_size=1)
    assert summary["groups"] == 2 and summary["rollouts"] == 3 and summary["skipped"] == {}
    groups = [json.loads(line) for line in (tmp_path / "rl.jsonl").read_text().splitlines()]
    g0 = {r["episode_id"]: r for r in groups[0]["rollouts"]}
    assert groups[0]["group"] == "archive-0" and groups[0]["credit"]["method"] == "grpo"
    assert g0["good"]["reward"] == 1.0 and g0["bad"]["reward"] == 0.0
    assert g0["good"]["advantage"] == pytest.approx(0.7071, abs=1e-3)  # (1 - .5) / sample std .7071
    assert len(g0["good"]["turn_advantages"]) == 3 and len(g0["bad"]["turn_advantages"]) == 1
    assert groups[1]["rollouts"][0]["advantage"] == 0.0


def test_rl_export_skips_error_episodes_unless_kept(tmp_path: Path) -> None:
    env = archive_environments(1)[0]
    broken = wrong(env, "broken")
    assert broken.final is not None
    broken.final.stop_reason, broken.final.stop_detail = "policy_error", "cannot reach http://localhost:9/v1"
    recs = [teacher(env, "good"), wrong(env, "bad"), broken]
    assert broken.errored and not recs[0].errored
    summary = export_rl(recs, tmp_path / "rl.jsonl")
    assert summary["rollouts"] == 2 and summary["skipped"] == {"stopped on an error": 1}
    assert export_rl(recs, tmp_path / "rl.jsonl", keep_errors=True)["rollouts"] == 3
    write_records(recs[2:], tmp_path / "only-errors.jsonl")
    res = CliRunner().invoke(app, ["export", "rl", str(tmp_path / "only-errors.jsonl"), "--out",
                                   str(tmp_path / "none.jsonl")])
    assert res.exit_code == 1 and "no group left" in res.stderr and "stopped on an error" in res.stderr


def test_cli_export(tmp_path: Path) -> None:
    write_records(corpus(), tmp_path / "r.jsonl")
    runner = CliRunner()
    res = runner.invoke(app, ["export", "sft", str(tmp_path / "r.jsonl"), "--format", "openai", "--out",
                              str(tmp_path / "sft")])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "sft" / "manifest.json").read_text())
    assert f"wrote {manifest['train']} train and {manifest['validation']} validation" in res.output
    assert manifest["train"] + manifest["validation"] == 7
    for line in (tmp_path / "sft" / "train.jsonl").read_text().splitlines():
        check_openai(json.loads(line))
    res = runner.invoke(app, ["export", "rl", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "rl.jsonl"),
                              "--method", "rloo", "--level", "gigpo", "--shaping", "--min-group-size", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["credit"]["level"] == "gigpo"
    res = runner.invoke(app, ["export", "rl", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "rl.jsonl")])
    assert res.exit_code == 0 and res.stdout.startswith("wrote 4 groups (8 rollouts") and "{" not in res.stdout
    assert "skipped 2 episode(s) in groups below the minimum size" in res.stderr
    assert "skipped 1 episode(s) unfinished" in res.stderr
    res = runner.invoke(app, ["export", "rl", str(tmp_path / "r.jsonl"), "--method", "ppo"])
    assert res.exit_code == 2 and "--method" in res.output and "Traceback" not in res.output
    (tmp_path / "bad.jsonl").write_text('{"type": "event"}\n')
    res = runner.invoke(app, ["export", "sft", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "bad.jsonl:1" in res.output
    res = runner.invoke(app, ["export", "sft", str(tmp_path / "r.jsonl"), "--format", "csv"])
    assert res.exit_code == 2 and "--format" in res.output
