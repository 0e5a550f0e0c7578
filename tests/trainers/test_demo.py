"""`coworkenv demo --quick` end to end through the real CLI, and the demo's settings and pieces."""

from __future__ import annotations

import importlib.util
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from support import need
from typer.testing import CliRunner

from coworkenv.cli import app
from trainers.demo.index import write_index
from trainers.demo.metrics import CapabilityScore, StudentScore
from trainers.demo.pipeline import DemoError, DemoSummary, prepare_out
from trainers.demo.progress import PlainReporter, budget_callback
from trainers.demo.render import RichReporter, final_tables
from trainers.demo.settings import DemoSettings

HAS_TRAIN = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "trl", "datasets", "tokenizers"))
XHTML = "{http://www.w3.org/1999/xhtml}"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    need(HAS_TRAIN, "the train extra (torch, transformers, trl, datasets, tokenizers) is not installed")
    out = tmp_path_factory.mktemp("demo") / "out"
    result = CliRunner().invoke(app, ["demo", "--quick", "--rl", "--rebuild-base", "--out", str(out), "--threads", "1"])
    return out, result


def test_quick_demo_writes_every_output(quick_run: tuple[Path, Any]) -> None:
    out, result = quick_run
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    # environments: train and held-out sets are disjoint, saved as specs
    train = sorted(p.stem for p in (out / "envs" / "train").glob("*.json"))
    heldout = sorted(p.stem for p in (out / "envs" / "heldout").glob("*.json"))
    assert len(train) == summary["environments"]["train"] == 2 and len(heldout) == 2 and not set(train) & set(heldout)
    # the teacher passed everything and its records are complete episode records
    teacher = _lines(out / "records" / "teacher.jsonl")
    finals = [x for x in teacher if x.get("type") == "final"]
    assert len(finals) == 4 and all(f["evaluation"]["passed"] for f in finals)
    assert summary["teacher"] == {"episodes": 4, "passed": 4, "pass_rate": 1.0}
    # SFT data in the HF format: dict arguments, tools, assistant turns; only training environments
    sft = _lines(out / "sft" / "train.jsonl")
    assert len(sft) == 2 and all(ex["tools"] and any(m["role"] == "assistant" for m in ex["messages"]) for ex in sft)
    calls = [c for ex in sft for m in ex["messages"] for c in m.get("tool_calls") or []]
    assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
    assert json.loads((out / "sft" / "manifest.json").read_text())["train_envs"] == train
    assert len(_lines(out / "sft" / "heldout.jsonl")) == 2
    # both model folders load as transformers models
    for name in ("base", "student"):
        assert (out / "model" / name / "config.json").is_file() and (out / "model" / name / "tokenizer.json").is_file()
    # student records before and after, each on the held-out environments
    for name in ("before", "after"):
        headers = [x for x in _lines(out / "records" / f"{name}.jsonl") if x.get("type") == "header"]
        assert sorted(h["env_id"] for h in headers) == heldout
        assert all(h["policy"]["name"].startswith("hf:") for h in headers)
    # the summary has before/after figures and a verdict that quotes them
    for name in ("before", "after"):
        fig = summary[name]
        assert 0.0 <= fig["success_rate"] <= 1.0 and fig["heldout_loss"] > 0
        assert fig["per_capability"][-1]["capability"] == "all" and fig["per_capability"][-1]["episodes"] == 2
    assert summary["training"]["steps"] == 3 and summary["training"]["stopped_by"] == "steps"
    assert len(summary["training"]["losses"]) == 3
    assert f"{summary['after']['heldout_loss']:.3f}" in summary["verdict"]
    assert set(summary["timings"]) == {"synthesize", "teacher", "export", "student", "before", "train", "after",
                                       "rl", "report"}
    # steps, tokens and threads are in the summary; the learning figures carry their counts
    assert summary["training"]["tokens"] > 0 and summary["training"]["threads"] == 1
    # --rebuild-base: the base was copy-pretrained here, its figures in the summary
    assert summary["student"]["base"] == "rebuild" and summary["student"]["copy_pretraining"]["steps"] == 3
    assert json.loads((out / "model" / "base" / "manifest.json").read_text())["steps"] == 3
    for name in ("before", "after"):
        parts = summary[name]["parts"]
        assert set(parts) >= {"tool_name", "constant", "copied_seen", "copied_unseen"}
        assert parts["tool_name"]["n"] > 0 and 0 <= parts["tool_name"]["right"] <= parts["tool_name"]["n"]
        assert 0 <= summary[name]["valid_json_calls"] <= summary[name]["tool_calls"]
    assert "copied values never seen in training right (teacher-forced)" in result.output
    # --rl: every credit assignment over the quick preset's 2 seeds, on the same held-out set
    rl = summary["rl"]
    assert [r["credit"] for r in rl["rows"]] == ["outcome", "partial", "MT-GRPO turn", "GiGPO step groups"]
    assert all(r["seeds"] == 2 and r["success_sd"] >= 0 for r in rl["rows"]) and len(rl["runs"]) == 8
    assert rl["heldout"] == 2 and "RL after SFT" in result.output
    assert summary["verdict"] in result.output and "student on held-out envs" in result.output
    # the output is not a terminal here: plain progress lines, the bar's count the real one
    assert "[train] started (3 steps)" in result.output and "[train] done 3/3 steps" in result.output
    assert summary["training"]["planned_steps"] == 3 and "WARNING" not in result.output
    # model/train.log: one JSON line per step with its loss, then how training ended
    log = _lines(out / "model" / "train.log")
    steps = [x for x in log if "loss" in x]
    assert [x["step"] for x in steps] == [1, 2, 3] and [x["loss"] for x in steps] == summary["training"]["losses"]
    assert log[-1]["end"] == "reached its step bound" and log[-1]["step"] == 3


def test_quick_demo_report_pages_parse(quick_run: tuple[Path, Any]) -> None:
    out, result = quick_run
    assert result.exit_code == 0, result.output
    index = ET.parse(out / "report" / "index.html").getroot()
    links = [a.get("href") for a in index.iter(f"{XHTML}a")]
    assert links == ["teacher/index.html", "before/index.html", "after/index.html"]
    for link in links:
        page = ET.parse(out / "report" / link).getroot()
        assert page.find(f".//{XHTML}table") is not None
    text = "".join(index.itertext())
    assert "held-out teacher-token loss" in text and "teacher pass rate" in text
    summary = json.loads((out / "summary.json").read_text())
    # the learning figures and the RL table are on the page, with the summary's counts
    assert "What the student learned (held-out)" in text and "tool names right (teacher-forced)" in text
    unseen = summary["after"]["parts"]["copied_unseen"]
    assert f"{unseen['right']}/{unseen['n']}" in text
    assert "RL after SFT" in text and "GiGPO step groups" in text
    # the chart's counts are in words beside it ("k of n"), so a chart of zero-height bars still says them
    b, a = summary["before"]["per_capability"][-1], summary["after"]["per_capability"][-1]
    assert f"{b['passed']} of {b['episodes']} passed before training, {a['passed']} of {a['episodes']} after" in text
    assert (out / "report" / "before_after.png").stat().st_size > 0


def test_rerun_reuses_the_folder_and_reproduces(quick_run: tuple[Path, Any]) -> None:
    out, result = quick_run
    assert result.exit_code == 0, result.output
    first = json.loads((out / "summary.json").read_text())
    again = CliRunner().invoke(app, ["demo", "--quick", "--rl", "--rebuild-base", "--out", str(out), "--threads", "1"])
    assert again.exit_code == 0, again.output
    second = json.loads((out / "summary.json").read_text())
    # same seed, one thread, step-bounded: the same environments, losses and scores
    assert second["training"]["losses"] == first["training"]["losses"]
    for name in ("before", "after", "rl"):
        assert second[name] == first[name]
    assert second["environments"] == first["environments"]


def test_foreign_out_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    result = CliRunner().invoke(app, ["demo", "--quick", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "not empty" in result.output
    assert (tmp_path / "mine.txt").read_text() == "keep me"
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(DemoError, match="not a folder"):
        prepare_out(f)


@pytest.mark.parametrize("args, message", [
    (["--capability", "juggling"], "unknown capability 'juggling'"),
    (["--minutes", "0", "--steps", "0"], "training needs a bound"),
    (["--train-envs", "0"], "--train-envs"),
])
def test_bad_options_are_clear_errors(args: list[str], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()


@given(seed=st.integers(0, 10_000), minutes=st.floats(0.1, 30), threads=st.integers(0, 64),
       cpus=st.one_of(st.none(), st.integers(1, 256)))
@settings(max_examples=50, deadline=None)
def test_settings_invariants(seed: int, minutes: float, threads: int, cpus: int | None) -> None:
    s = DemoSettings(seed=seed, minutes=minutes, threads=threads)
    assert s.heldout_seed() - s.seed >= 100_000  # held-out seeds never meet training seeds of the same plan
    n = s.torch_threads(cpus)
    assert n >= 1 and (n == threads if threads else n <= 4)
    if not threads and cpus is not None and cpus <= 2:
        assert n == 1  # two threads on two busy cores run about ten times slower than one
    assert DemoSettings.model_validate(s.model_dump()) == s


def _score(success: float, loss: float | None, calls: int = 0) -> StudentScore:
    return StudentScore(success, success, 0.0, calls, calls, loss)


@pytest.mark.parametrize("before, after, head", [
    (_score(0.0, 5.0), _score(0.5, 3.0), "The student improved"),
    (_score(0.5, 3.0), _score(0.0, 2.0), "The student got worse"),
    (_score(0.0, 5.0), _score(0.0, 4.0), "The student did not pass more held-out environments; it moved closer"),
    (_score(0.0, 4.0), _score(0.0, 5.0), "The student did not improve"),
])
def test_verdict_says_what_was_measured(before: StudentScore, after: StudentScore, head: str) -> None:
    s = DemoSummary(settings={}, out="x", environments={"heldout": 2}, before=before, after=after)
    assert s.verdict().startswith(head)
    assert f"{before.success_rate:.0%} -> {after.success_rate:.0%}" in s.verdict()


class _Clock:
    """A settable clock for PlainReporter."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_reporter_prints_periodic_lines_and_the_real_count() -> None:
    stream, clock = io.StringIO(), _Clock()
    r = PlainReporter(stream, interval=10.0, clock=clock)
    r.start("train", 1500, "steps")
    for step in range(1, 1266):
        clock.now = step * 0.1  # 126.5 s in all: a line every 10 s, not one per step
        r.update(step, f"step {step}")
    r.finish("stopped by the guard")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[train] started (1500 steps)"
    assert 10 <= len(lines) - 2 <= 13 and all(line.startswith("[train] ") for line in lines)
    assert lines[1] == "[train] 100/1500 steps (7%) 10 s: step 100"
    assert lines[-1] == "[train] done 1265/1500 steps (84%) in 126.5 s: stopped by the guard"


def test_rich_bar_keeps_the_count_it_reached() -> None:
    reporter = RichReporter(Console(file=io.StringIO(), force_terminal=False))
    reporter.start("train", 1500, "steps")
    reporter.update(1265, "step 1265")
    task = reporter._task
    assert task is not None
    reporter.finish("stopped by the guard")
    assert reporter.progress.tasks[task].completed == 1265  # not 1500/1500
    reporter.start("export", 1)  # a stage that reports no count is filled when it ends
    other = reporter._task
    assert other is not None
    reporter.finish()
    assert reporter.progress.tasks[other].completed == 1


def test_time_guard_stops_training_and_logs_why(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr("trainers.demo.progress.time.perf_counter", clock)
    log, seen = io.StringIO(), []
    cb = budget_callback(60.0, lambda step, loss, elapsed: seen.append((step, loss, elapsed)), log=log)
    state, control = SimpleNamespace(global_step=0, max_steps=1500), SimpleNamespace(should_training_stop=False)
    cb.on_train_begin(None, state, control)
    clock.now, state.global_step = 30.0, 1
    cb.on_log(None, state, control, logs={"loss": 2.5, "learning_rate": 1e-3})
    cb.on_step_end(None, state, control)
    assert not cb.stopped_by_time and not control.should_training_stop  # 30 s of a 60 s guard
    clock.now, state.global_step = 61.0, 2
    cb.on_step_end(None, state, control)
    assert cb.stopped_by_time and control.should_training_stop and seen == [(1, 2.5, 30.0), (2, 2.5, 61.0)]
    cb.on_train_end(None, state, control)
    lines = [json.loads(x) for x in log.getvalue().splitlines()]
    assert lines[0] == {"step": 1, "seconds": 30.0, "loss": 2.5, "learning_rate": 1e-3}
    assert lines[-1] == {"end": "stopped by the 1-minute guard", "step": 2, "max_steps": 1500, "seconds": 61.0}


def test_a_guard_stopped_run_says_so_everywhere(tmp_path: Path) -> None:
    caps = [CapabilityScore("clarification", 4, 0, 0.0, 0.0), CapabilityScore("all", 4, 0, 0.0, 0.0)]
    b = StudentScore(0.0, 0.0, 0.0, 0, 0, 6.8, per_capability=caps, episodes=4)
    a = StudentScore(0.0, 0.0, 0.0, 3, 1, 0.5, per_capability=caps, episodes=4)
    training = {"steps": 1265, "planned_steps": 1500, "guard_minutes": 15.0, "stopped_by": "time", "seconds": 900.0}
    s = DemoSummary(settings={}, out="x", environments={"heldout": 4}, training=training, before=b, after=a,
                    timings={"train": 900.0})
    warning = ("WARNING: training was stopped by the 15-minute time guard after 1,265 of the 1,500 planned steps")
    assert s.verdict().startswith(warning)
    console = Console(file=io.StringIO(), width=200)
    console.print(final_tables(s))
    assert "1265 of 1500 steps, STOPPED BY THE 15-MINUTE TIME GUARD" in console.file.getvalue()
    page = write_index(s, tmp_path / "index.html", {})
    text = "".join(ET.parse(page).getroot().itertext())
    assert warning in text and "0 of 4 passed before training, 0 of 4 after" in text
    assert (tmp_path / "before_after.png").stat().st_size > 0
    # --steps 0 asks for a time-bounded run: the limit ending it is no warning
    s.training = {**training, "planned_steps": 0}
    assert not s.verdict().startswith("WARNING") and s.guard_warning() == ""
