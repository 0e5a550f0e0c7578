"""The demo, stage by stage: synthesize, teacher, export, student, before, train, after, report.

Every stage's output lands under one folder (see docs/demo.md for the layout) and its wall time
in the summary. Nothing is downloaded: the student's tokenizer is trained on the exported SFT
data and its weights are random until SFT. The summary reports what was measured, whether or not
the student improved.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from collections.abc import Sequence
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
from .progress import Reporter, SilentReporter
from .settings import DemoSettings
from .sft_stage import train_share, train_student
from .student import prepare_student
from .summary import NOVEL_COPY_TARGET, DemoError, DemoSummary, train_note

__all__ = ["NOVEL_COPY_TARGET", "OUTPUTS", "STAGES", "DemoError", "DemoSummary", "prepare_out", "run_demo",
           "sft_mix", "train_note"]
STAGES = ("synthesize", "teacher", "export", "student", "before", "train", "after", "rl", "report")
OUTPUTS = ("envs", "records", "sft", "model", "report", "summary.json")


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
        from ..models.tiny_vl import load_vl
        from ..training.vision_sft import vision_figures

        model, processor = load_vl(model_dir)
        figures = vision_figures(model, processor, examples, train_examples, settings.max_length)
        loss, parts = figures["heldout_loss"], figures["parts"]
    else:
        from ..models.tiny import load

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


def run_demo(settings: DemoSettings, out: str | Path, reporter: Reporter | None = None,
             started: float | None = None) -> DemoSummary:
    """Run every stage into `out` and return the summary (also written to out/summary.json).

    Needs the `train` extra (torch, transformers, trl, datasets, tokenizers). Raises DemoError with the stage and
    reason when a stage cannot complete (a teacher episode that fails: a broken environment). `started` (a
    `time.perf_counter()` value, default now) is when the `--minutes` budget began; training gets what the other
    stages leave of it (`train_share`); an interrupt ends training early and the rest still runs."""
    started = time.perf_counter() if started is None else started
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

    def synth_stage() -> Any:
        train, heldout, info = _synthesize(settings, out, reporter)
        summary.environments = info
        return (train, heldout), f"{info['train']} train + {info['heldout']} held-out valid"

    n_synth = settings.train_envs + settings.heldout_envs
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
        path, summary.student, note = prepare_student(settings, out, train_examples, threads, device)
        reporter.update(1)
        return path, note

    base = clock.run("student", 1, student_stage)
    summary.before = clock.run("before", len(heldout_specs), lambda: _student_eval(
        base, heldout_specs, heldout_examples, settings, out / "records" / "before.jsonl", reporter, train_examples),
        "episodes")

    limit = train_share(settings, time.perf_counter() - started, summary.timings["before"])

    def train_stage() -> Any:
        path, note, summary.training = train_student(settings, base, sft_mix(train_examples, settings), out, device,
                                                     threads, limit, reporter)
        return path, note

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
        from .index import write_demo_report

        index = write_demo_report(summary, out, student, reporter.update)
        return index, str(index)

    clock.run("report", 3, report_stage)
    (out / "summary.json").write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    return summary
