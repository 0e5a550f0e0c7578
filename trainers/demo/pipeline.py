"""The demo, stage by stage: synthesize, teacher, export, student, before, train, after, report.

Every stage's output lands under one folder (see docs/demo.md for the layout) and its wall time
in the summary. Nothing is downloaded: the student's tokenizer is trained on the exported SFT
data and its weights are random until SFT. The summary reports what was measured, whether or not
the student improved.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.pipeline import SynthResult, synthesize
from synth.spec import EnvironmentSpec
from workspace_sim.record import EpisodeRecord, write_records

from ..episodes.batch import BatchConfig, run_local
from ..episodes.policies import PolicySpec
from ..episodes.prepared import EpisodeLimits
from ..export.sft import export_sft, select_sft_episodes, to_hf
from .metrics import StudentScore, heldout_loss, learning_parts, student_score
from .progress import Reporter, SilentReporter, budget_callback
from .settings import SHIPPED_BASE, DemoSettings

NOVEL_COPY_TARGET = 0.8  # issue 15's target for copied values never seen in training
STAGES = ("synthesize", "teacher", "export", "student", "before", "train", "after", "rl", "report")
OUTPUTS = ("envs", "records", "sft", "model", "report", "summary.json")


def train_note(t: dict[str, Any]) -> str:
    """How training ended, in words: its step bound, the time limit asked for (--steps 0), or the guard."""
    if t.get("stopped_by") != "time":
        return f"{t.get('steps')} steps, stopped by its step bound"
    if not t.get("planned_steps"):
        return f"{t.get('steps')} steps in the {t.get('guard_minutes', 0):g}-minute limit (--steps 0)"
    return (f"{t.get('steps')} of {t.get('planned_steps')} steps, STOPPED BY THE {t.get('guard_minutes', 0):g}-MINUTE "
            "TIME GUARD")


class DemoError(RuntimeError):
    """A demo that cannot go on; the message says which stage and why."""


@dataclass
class DemoSummary:
    """What the demo did and measured; `to_json()` is what summary.json holds."""

    settings: dict[str, Any]
    out: str
    timings: dict[str, float] = field(default_factory=dict)
    environments: dict[str, Any] = field(default_factory=dict)
    teacher: dict[str, Any] = field(default_factory=dict)
    sft: dict[str, Any] = field(default_factory=dict)
    student: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    before: StudentScore | None = None
    after: StudentScore | None = None
    rl: dict[str, Any] | None = None
    files: dict[str, str] = field(default_factory=dict)

    def verdict(self) -> str:
        """One honest sentence comparing after with before (success first, then the finer figures)."""
        if self.before is None or self.after is None:
            return "the run did not reach the after-training evaluation"
        guard = self.guard_warning()
        b, a = self.before, self.after
        n = self.environments.get("heldout", 0)
        parts = [f"held-out success {b.success_rate:.0%} -> {a.success_rate:.0%} of {n} environments"]
        if b.heldout_loss is not None and a.heldout_loss is not None:
            parts.append(f"teacher-token loss {b.heldout_loss:.3f} -> {a.heldout_loss:.3f}")
        parts.append(f"accepted tool calls {b.accepted_calls}/{b.tool_calls} -> {a.accepted_calls}/{a.tool_calls}")
        unseen_b, unseen_a = b.parts.get("copied_unseen") or {}, a.parts.get("copied_unseen") or {}
        if unseen_a.get("n"):
            parts.append(f"copied values never seen in training right (teacher-forced) {unseen_b.get('right', 0)}"
                         f"/{unseen_b.get('n', 0)} -> {unseen_a['right']}/{unseen_a['n']}")
            if unseen_a["right"] < NOVEL_COPY_TARGET * unseen_a["n"]:
                parts.append(f"below the {NOVEL_COPY_TARGET:.0%} novel-copy target (docs/demo.md, 'Copy first', "
                             "shows the copy curve and why)")
        if a.success_rate > b.success_rate:
            head = "The student improved on held-out environments"
        elif a.success_rate < b.success_rate:
            head = "The student got worse on held-out environments"
        elif a.heldout_loss is not None and b.heldout_loss is not None and a.heldout_loss < b.heldout_loss:
            head = ("The student did not pass more held-out environments; it moved closer to the teacher's "
                    "actions (lower loss) but not far enough to complete tasks")
        else:
            head = "The student did not improve on held-out environments"
        return f"{guard + ' ' if guard else ''}{head}: {'; '.join(parts)}."

    def guard_warning(self) -> str:
        """'' when training ran to its step bound; else a plain sentence that the time guard stopped it, at
        which step of how many, so nobody reads a short run's figures as the documented ones."""
        t = self.training
        planned = t.get("planned_steps") or 0
        if t.get("stopped_by") != "time" or not planned:  # --steps 0: the time limit is the bound asked for
            return ""
        return (f"WARNING: training was stopped by the {t.get('guard_minutes', 0):g}-minute time guard after "
                f"{t.get('steps', 0):,} of the {planned:,} planned steps (this machine is slower than the guard allows), so these figures "
                "are not those of the full run in docs/demo.md; rerun with --minutes 0 to train to the step bound.")

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON (student scores expanded, the verdict included)."""
        return {"settings": self.settings, "out": self.out, "timings": self.timings,
                "environments": self.environments, "teacher": self.teacher, "sft": self.sft,
                "student": self.student, "training": self.training,
                "before": self.before.to_json() if self.before else None,
                "after": self.after.to_json() if self.after else None, "rl": self.rl,
                "verdict": self.verdict(), "files": self.files}


def prepare_out(out: Path) -> None:
    """Make `out` ready: create it, or clear a previous demo's outputs from it; refuse a foreign folder."""
    if out.exists() and not out.is_dir():
        raise DemoError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / "summary.json").is_file():
            raise DemoError(f"--out {out}: the folder is not empty and holds no earlier demo (no summary.json); "
                            "choose a new or empty folder")
        for name in OUTPUTS:
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    out.mkdir(parents=True, exist_ok=True)


class _Clock:
    """Times each stage and opens/closes it on the reporter."""

    def __init__(self, summary: DemoSummary, reporter: Reporter) -> None:
        self.summary, self.reporter = summary, reporter

    def run(self, stage: str, total: float | None, fn: Any, unit: str = "") -> Any:
        self.reporter.start(stage, total, unit)
        t0 = time.perf_counter()
        note = ""
        try:
            result, note = fn()
        finally:
            self.summary.timings[stage] = round(time.perf_counter() - t0, 3)
            self.reporter.finish(note)
        return result


def _synthesize(settings: DemoSettings, out: Path, reporter: Reporter) -> tuple[list[EnvironmentSpec],
                                                                                  list[EnvironmentSpec], dict[str, Any]]:
    done = [0]

    def tick(_attempt: Any) -> None:
        done[0] += 1
        reporter.update(done[0])

    results: dict[str, SynthResult] = {}
    for split, count, seed in (("train", settings.train_envs, settings.seed),
                               ("heldout", settings.heldout_envs, settings.heldout_seed())):
        results[split] = synthesize(list(settings.capabilities), count, seed, on_attempt=tick)
        folder = out / "envs" / split
        folder.mkdir(parents=True, exist_ok=True)
        for spec in results[split].specs:
            spec.save(folder / f"{spec.id}.json")
    train, heldout = results["train"].specs, results["heldout"].specs
    overlap = {s.id for s in train} & {s.id for s in heldout}
    if overlap:  # seeds are far apart, so this means the generator ignored them
        raise DemoError(f"synthesize: held-out environments repeat training ones: {sorted(overlap)}")
    for split, specs in (("train", train), ("heldout", heldout)):
        if not specs:
            why = "; ".join(a.error or "?" for a in results[split].discarded[:3])
            raise DemoError(f"synthesize: no valid {split} environment was generated ({why})")
    info = {"train": len(train), "heldout": len(heldout),
            "discarded": sum(len(r.discarded) for r in results.values()),
            "capabilities": list(settings.capabilities)}
    return train, heldout, info


def _episodes(specs: Sequence[EnvironmentSpec], policy: PolicySpec, limits: EpisodeLimits,
              reporter: Reporter) -> list[EpisodeRecord]:
    done, passed = [0], [0]

    def tick(rec: EpisodeRecord) -> None:
        done[0] += 1
        passed[0] += rec.passed
        reporter.update(done[0], f"passed {passed[0]}")

    return run_local(specs, BatchConfig(policy, limits=limits), on_record=tick)


REHEARSAL_SEED_OFFSET = 5_550_000  # the rehearsal's copy stream, apart from the base's training and checks


def sft_mix(train_examples: Sequence[dict[str, Any]], settings: DemoSettings) -> list[dict[str, Any]]:
    """The SFT training set: the teacher's examples, then, with `copy_share` above 0, enough fresh copy
    sequences (`copydata`) to make up that share of the whole (SFTTrainer shuffles the set each epoch)."""
    from ..training.copydata import copy_examples

    teacher = list(train_examples)
    if settings.copy_share <= 0:
        return teacher
    n = round(len(teacher) * settings.copy_share / (1 - settings.copy_share))
    return teacher + [c.example for c in copy_examples(settings.seed + REHEARSAL_SEED_OFFSET, n)]


def _student_eval(model_dir: Path, heldout: Sequence[EnvironmentSpec], examples: list[dict[str, Any]],
                  settings: DemoSettings, records_path: Path, reporter: Reporter,
                  train_examples: Sequence[dict[str, Any]] = ()) -> tuple[StudentScore, str]:
    if settings.vision:  # the same figures with the images in the forward pass
        from ..training.tiny_vl import load_vl
        from ..training.vision_sft import vision_figures

        model, processor = load_vl(model_dir)
        figures = vision_figures(model, processor, examples, train_examples, settings.max_length)
        loss, parts = figures["heldout_loss"], figures["parts"]
    else:
        from ..training.tiny import load

        model, tokenizer = load(model_dir)
        loss = heldout_loss(model, tokenizer, examples, settings.max_length)
        parts = learning_parts(model, tokenizer, examples, train_examples, settings.max_length)
    del model
    policy = PolicySpec("hf", {"path": str(model_dir), "max_new_tokens": settings.max_new_tokens})
    recs = _episodes(heldout, policy, EpisodeLimits(max_turns=settings.max_turns), reporter)
    records_path.parent.mkdir(parents=True, exist_ok=True)
    write_records(recs, records_path)
    score = student_score(recs, loss, parts)
    return score, f"success {score.success_rate:.0%}, loss {loss:.3f}" if loss is not None else ""


def run_demo(settings: DemoSettings, out: str | Path, reporter: Reporter | None = None) -> DemoSummary:
    """Run every stage into `out` and return the summary (also written to out/summary.json).

    Needs the `train` extra (torch, transformers, trl, datasets, tokenizers). Raises DemoError
    with the stage and reason when a stage cannot complete (for instance a teacher episode that
    fails, which would mean a broken environment).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import datasets
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()  # the demo draws its own bars
    datasets.disable_progress_bars()
    reporter = reporter or SilentReporter()
    out = Path(out)
    prepare_out(out)
    threads = settings.torch_threads(os.cpu_count())
    torch.set_num_threads(threads)
    device = settings.resolved_device()
    summary = DemoSummary(settings={**settings.model_dump(mode="json"), "torch_threads": threads,
                                    "resolved_device": device}, out=str(out))
    clock = _Clock(summary, reporter)
    n_synth = settings.train_envs + settings.heldout_envs

    def synth_stage() -> Any:
        train, heldout, info = _synthesize(settings, out, reporter)
        summary.environments = info
        return (train, heldout), f"{info['train']} train + {info['heldout']} held-out valid"

    train_specs, heldout_specs = clock.run("synthesize", n_synth, synth_stage, "envs")

    def teacher_stage() -> Any:
        recs = _episodes([*train_specs, *heldout_specs], PolicySpec("teacher"), EpisodeLimits(), reporter)
        write_records(recs, out / "records" / "teacher.jsonl")
        failed = [r.env_id for r in recs if not r.passed]
        summary.teacher = {"episodes": len(recs), "passed": len(recs) - len(failed),
                           "pass_rate": (len(recs) - len(failed)) / len(recs)}
        if failed:
            raise DemoError(f"teacher: the reference solution failed in {', '.join(failed)}; these environments "
                            f"are broken (records: {out / 'records' / 'teacher.jsonl'})")
        return recs, f"{len(recs)}/{len(recs)} passed"

    teacher_recs = clock.run("teacher", len(train_specs) + len(heldout_specs), teacher_stage, "episodes")

    def export_stage() -> Any:
        heldout_ids = {s.id for s in heldout_specs}
        train_recs = [r for r in teacher_recs if r.env_id not in heldout_ids]
        report = export_sft(train_recs, out / "sft", "hf", validation_fraction=0.0, seed=settings.seed)
        kept, _ = select_sft_episodes([r for r in teacher_recs if r.env_id in heldout_ids])
        heldout_examples = [to_hf(r) for r in kept]
        with (out / "sft" / "heldout.jsonl").open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(ex, ensure_ascii=False) + "\n" for ex in heldout_examples)
        train_examples = [json.loads(line) for line in Path(report.files[0]).read_text(encoding="utf-8").splitlines()]
        if not train_examples:
            raise DemoError(f"export: no training example survived the SFT filter (skipped: {report.skipped})")
        summary.sft = {"train_examples": report.train, "heldout_examples": len(heldout_examples),
                       "skipped": report.skipped}
        reporter.update(1)
        return (train_examples, heldout_examples), f"{report.train} train, {len(heldout_examples)} held-out examples"

    train_examples, heldout_examples = clock.run("export", 1, export_stage)

    def student_stage() -> Any:
        from ..training.base import build_base
        from ..training.tiny import build_tiny, load

        path = out / "model" / "base"
        manifest: dict[str, Any] | None = None
        if settings.base == "shipped":
            if not (SHIPPED_BASE / "config.json").is_file():
                raise DemoError(f"student: no shipped base in {SHIPPED_BASE}; rebuild it with --rebuild-base "
                                "(or start from random weights with --base scratch)")
            shutil.copytree(SHIPPED_BASE, path)
            manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        elif settings.base == "rebuild":
            manifest = build_base(path, settings.base_settings(), train_examples, threads=threads, device=device)
        elif settings.vision:
            from ..training.tiny_vl import build_tiny_vl

            build_tiny_vl(path, train_examples, settings.vocab_size, settings.hidden, settings.layers, settings.seed,
                          compact_tools=settings.compact_tools, max_pixels=settings.vision_max_pixels)
        else:
            build_tiny(path, train_examples, settings.vocab_size, settings.hidden, settings.layers, settings.seed,
                       compact_tools=settings.compact_tools, isolate_spaces=settings.isolate_spaces)
        if settings.vision:
            from ..training.tiny_vl import load_vl

            model, processor = load_vl(path)
            tokenizer, text_config = processor.tokenizer, model.config.text_config
        else:
            model, tokenizer = load(path)
            text_config = model.config
        params = sum(p.numel() for p in model.parameters())
        summary.student = {"architecture": type(model).__name__, "parameters": params, "vocab": len(tokenizer),
                           "hidden": text_config.hidden_size, "layers": text_config.num_hidden_layers,
                           "path": str(path), "base": settings.base, "vision": settings.vision}
        if manifest is not None:
            summary.student["copy_pretraining"] = {k: manifest.get(k) for k in (
                "steps", "tokens", "train_seconds", "torch_threads", "final_copy_accuracy",
                "final_copy_token_accuracy", "greedy", "settings")}
        reporter.update(1)
        return path, f"{settings.base} base, {params:,} parameters, vocab {len(tokenizer)}"

    base = clock.run("student", 1, student_stage)
    summary.before = clock.run("before", len(heldout_specs), lambda: _student_eval(
        base, heldout_specs, heldout_examples, settings, out / "records" / "before.jsonl", reporter, train_examples),
        "episodes")

    limit = settings.minutes * 60

    def train_stage() -> Any:
        from ..training.sft import train_sft

        def on_step(step: int, loss: float | None, elapsed: float) -> None:
            shown = f"step {step}" + (f", loss {loss:.3f}" if loss is not None else "")
            reporter.update(step if settings.steps else min(elapsed, limit), shown)

        log = out / "model" / "train.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w", encoding="utf-8") as f, contextlib.redirect_stdout(f), warnings.catch_warnings():
            callback = budget_callback(limit, on_step, log=f)
            warnings.simplefilter("ignore", FutureWarning)  # deprecations inside TRL's config, not ours to fix
            from ..training.vision_sft import train_vision_sft

            train = train_vision_sft if settings.vision else train_sft  # the same call, images or not
            result = train(base, sft_mix(train_examples, settings), out / "model" / "student",
                           learning_rate=settings.learning_rate,
                           batch_size=settings.batch_size, max_steps=settings.steps or 1_000_000,
                           warmup_steps=settings.warmup_steps, assistant_only=settings.assistant_only_loss,
                           max_length=settings.max_length, seed=settings.seed, callbacks=[callback],
                           device=device)
        losses = result.losses
        summary.training = {"steps": result.steps, "tokens": result.tokens, "threads": threads, "device": device,
                            "seconds": round(time.perf_counter() - callback.started, 3),
                            "stopped_by": "time" if callback.stopped_by_time else "steps",
                            "planned_steps": settings.steps, "guard_minutes": settings.minutes,
                            "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None,
                            "losses": losses, "path": result.output_dir}
        note = f"{result.steps} steps" + (f", loss {losses[0]:.3f} -> {losses[-1]:.3f}" if losses else "")
        if callback.stopped_by_time and settings.steps:
            note = f"STOPPED BY THE {settings.minutes:g}-MINUTE GUARD at {result.steps} of {settings.steps} " \
                   f"steps" + note[len(f"{result.steps} steps"):]
        return Path(result.output_dir), note

    student = clock.run("train", settings.steps or limit, train_stage, "steps" if settings.steps else "s")
    summary.after = clock.run("after", len(heldout_specs), lambda: _student_eval(
        student, heldout_specs, heldout_examples, settings, out / "records" / "after.jsonl", reporter, train_examples),
        "episodes")

    if settings.rl:
        def rl_stage() -> Any:
            from .rl import compare_credit

            def evaluate(model_dir: Path, name: str) -> StudentScore:
                score, _ = _student_eval(model_dir, heldout_specs, heldout_examples, settings,
                                         out / "records" / "rl" / f"{name}.jsonl", SilentReporter(), train_examples)
                return score

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                table = compare_credit(student, train_specs, out, settings, evaluate, summary.after,
                                       on_run=lambda n, label: reporter.update(n, label))
            table.heldout = len(heldout_specs)
            summary.rl = table.to_json()
            best = max(table.rows, key=lambda r: r.success_mean)
            return table, f"best {best.credit}: success {best.success_mean:.0%} +- {best.success_sd:.0%}"

        from .settings import RL_CREDITS

        clock.run("rl", len(RL_CREDITS) * settings.rl_seeds, rl_stage, "runs")

    def report_stage() -> Any:
        from workspace_sim.record import read_records
        from ..report import write_report
        from .index import write_index

        pages = {}
        for name, title in (("teacher", "Teacher on every environment"), ("before", "Student before training"),
                            ("after", "Student after training")):
            recs = read_records(out / "records" / f"{name}.jsonl")
            pages[name] = write_report(recs, out / "report" / name, title=f"coworkenv demo: {title}")
            reporter.update(len(pages))
        index = write_index(summary, out / "report" / "index.html", {k: v.relative_to(out / "report")
                                                                      for k, v in pages.items()})
        summary.files = {"summary": str(out / "summary.json"), "report": str(index),
                         "records": str(out / "records"), "sft": str(out / "sft"), "student": str(student),
                         "environments": str(out / "envs")}
        return index, str(index)

    clock.run("report", 3, report_stage)
    (out / "summary.json").write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    return summary
