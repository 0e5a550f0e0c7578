"""The demo's training stage: its share of the time budget, SFT under that clock, and Ctrl-C as a stop.

The demo is budgeted by time (`--minutes`, the whole run): when training starts, it gets what is
left of the budget after the stages already run and a reserve for the ones still to come (the
after-training evaluation, measured by the before-training one it repeats, and the report). An
interrupt (SIGINT, Ctrl-C) during training ends it at the current step like a finished run, so the
student is saved, evaluated and reported; a second interrupt stops the demo at once.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from .progress import Reporter, budget_callback
from .settings import DemoSettings

AFTER_RESERVE_FACTOR = 1.5  # the trained student makes more calls than the base: its evaluation runs longer
REPORT_RESERVE_S = 15.0  # the report stage: three HTML reports and the front page
MIN_SHARE = 0.05  # training always gets at least this share of the budget, however long the other stages took


def train_share(settings: DemoSettings, elapsed: float, before_seconds: float) -> float:
    """Seconds training may take: 0 without a budget (`--minutes 0`), else what the `--minutes` budget leaves
    after `elapsed` seconds of earlier stages and a reserve for the later ones (the after-training evaluation
    as `AFTER_RESERVE_FACTOR` times `before_seconds`, plus the report), but at least `MIN_SHARE` of it."""
    budget = settings.minutes * 60
    if budget <= 0:
        return 0.0
    left = budget - elapsed - AFTER_RESERVE_FACTOR * before_seconds - REPORT_RESERVE_S
    return round(max(left, MIN_SHARE * budget), 1)


@contextlib.contextmanager
def interrupt_stops(callback: Any) -> Iterator[None]:
    """While inside, the first SIGINT sets `callback.interrupted` (training then ends at its current step) and
    says so on stderr; a second one raises KeyboardInterrupt as usual. The previous handler is restored."""
    previous = signal.getsignal(signal.SIGINT)

    def handler(_signum: int, _frame: FrameType | None) -> None:
        callback.interrupted = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.stderr.write("\ninterrupted: training stops at this step; the student trained so far is evaluated and "
                         "reported (Ctrl-C again to stop at once)\n")
        sys.stderr.flush()

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def train_student(settings: DemoSettings, base: Path, examples: Sequence[dict[str, Any]], out: Path, device: str,
                  threads: int, limit: float, reporter: Reporter) -> tuple[Path, str, dict[str, Any]]:
    """Train the student from `base` on `examples` into out/model/student for at most `limit` seconds (0: none)
    and `settings.steps` steps (0: none), logging to out/model/train.log; returns the model folder, a one-line
    note and the summary's `training` facts (`stopped_by` is steps, time or interrupt)."""
    from ..training.sft import train_sft
    from ..training.vision_sft import train_vision_sft

    def on_step(step: int, loss: float | None, elapsed: float) -> None:
        shown = f"step {step}" + (f", loss {loss:.3f}" if loss is not None else "")
        reporter.update(step if settings.steps else min(elapsed, limit), shown)

    log = out / "model" / "train.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as f, contextlib.redirect_stdout(f), warnings.catch_warnings():
        callback = budget_callback(limit, on_step, log=f)
        warnings.simplefilter("ignore", FutureWarning)  # deprecations inside TRL's config, not ours to fix
        train = train_vision_sft if settings.vision else train_sft  # the same call, images or not
        with interrupt_stops(callback):
            result = train(base, list(examples), out / "model" / "student", learning_rate=settings.learning_rate,
                           batch_size=settings.batch_size, max_steps=settings.steps or 1_000_000,
                           warmup_steps=settings.warmup_steps, assistant_only=settings.assistant_only_loss,
                           max_length=settings.max_length, seed=settings.seed, callbacks=[callback], device=device)
    losses = result.losses
    stopped_by = "interrupt" if callback.interrupted else "time" if callback.stopped_by_time else "steps"
    training = {"steps": result.steps, "tokens": result.tokens, "threads": threads, "device": device,
                "seconds": round(time.perf_counter() - callback.started, 3), "stopped_by": stopped_by,
                "planned_steps": settings.steps, "guard_minutes": settings.minutes, "budget_seconds": limit,
                "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None,
                "losses": losses, "path": result.output_dir}
    note = f"{result.steps} steps" + (f", loss {losses[0]:.3f} -> {losses[-1]:.3f}" if losses else "")
    if stopped_by == "interrupt":
        note = f"INTERRUPTED (Ctrl-C) at {note}"
    elif callback.stopped_by_time and settings.steps:
        note = f"STOPPED BY THE {settings.minutes:g}-MINUTE GUARD at {result.steps} of {settings.steps} " \
               f"steps" + note[len(f"{result.steps} steps"):]
    return Path(result.output_dir), note, training
