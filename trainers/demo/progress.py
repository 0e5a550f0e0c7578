"""How the demo tells its caller what it is doing, and the training callback that keeps to the time guard.

The pipeline knows nothing of terminals: it calls a `Reporter` (the command renders it with rich
progress bars on a terminal and `PlainReporter`'s periodic lines when its output is redirected;
tests and library users can pass `SilentReporter`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any, Protocol, TextIO


class Reporter(Protocol):
    """Receives stage progress: `start` a stage with a total (None: unknown), `update` it, `finish` it."""

    def start(self, stage: str, total: float | None, unit: str = "") -> None: ...

    def update(self, completed: float, note: str = "") -> None: ...

    def finish(self, note: str = "") -> None: ...


class SilentReporter:
    """A reporter that shows nothing (but checks the stages are opened and closed in order)."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self._open: str | None = None

    def start(self, stage: str, total: float | None, unit: str = "") -> None:
        """Open a stage."""
        if self._open is not None:
            raise RuntimeError(f"stage {stage!r} started while {self._open!r} is still open")
        self._open = stage
        self.stages.append(stage)

    def update(self, completed: float, note: str = "") -> None:
        """Ignore progress."""

    def finish(self, note: str = "") -> None:
        """Close the stage."""
        self._open = None


class PlainReporter:
    """Progress as plain lines for a log file or a pipe: one when a stage starts, one at most every
    `interval` seconds while it runs (`[train] 120/1500 steps (8%) 35 s: step 120, loss 0.512`), and
    one when it ends with the count it reached and its result. Each line is flushed at once."""

    def __init__(self, stream: TextIO, interval: float = 15.0,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.stream, self.interval, self.clock = stream, interval, clock
        self._stage: str | None = None
        self._total: float | None = None
        self._unit = ""
        self._completed = 0.0
        self._note = ""
        self._started = self._last = 0.0

    def _count(self) -> str:
        done = f"{self._completed:.0f}"
        if self._total is None:
            return f"{done} {self._unit}".rstrip()
        share = f" ({self._completed / self._total:.0%})" if self._total else ""
        return f"{done}/{self._total:.0f} {self._unit}".rstrip() + share

    def _line(self, text: str) -> None:
        self.stream.write(f"[{self._stage}] {text}\n")
        self.stream.flush()

    def start(self, stage: str, total: float | None, unit: str = "") -> None:
        """Open a stage and say so."""
        self._stage, self._total, self._unit, self._completed, self._note = stage, total, unit, 0.0, ""
        self._started = self._last = self.clock()
        shown = "" if total is None else f" ({total:.0f} {unit})".replace(" )", ")")
        self._line(f"started{shown}")

    def update(self, completed: float, note: str = "") -> None:
        """Record progress; print a line when `interval` seconds passed since the last one."""
        self._completed, self._note = completed, note or self._note
        now = self.clock()
        if now - self._last >= self.interval:
            self._last = now
            self._line(f"{self._count()} {now - self._started:.0f} s" + (f": {self._note}" if self._note else ""))

    def finish(self, note: str = "") -> None:
        """Close the stage with the count it reached (not its planned total) and its result."""
        elapsed = self.clock() - self._started
        self._line(f"done {self._count()} in {elapsed:.1f} s" + (f": {note}" if note else ""))
        self._stage = None


OnStep = Callable[[int, float | None, float], None]


def budget_callback(limit_seconds: float, on_step: OnStep, log: TextIO | None = None) -> Any:
    """A transformers `TrainerCallback` that reports every step and stops training once `limit_seconds` pass.

    `on_step(step, last_loss, elapsed_seconds)` is called at each step's end; a limit of 0 means
    none. Every log the trainer emits (loss, learning rate, gradient norm, tokens seen) is written
    to `log`, when given, as one JSON line with the step and the seconds since training began, and
    a last line says how training ended. The callback's `stopped_by_time` says afterwards whether
    the clock ended the run; setting its `interrupted` (from a SIGINT handler) stops training at the
    end of the current step, as a finished run, so the model is saved and can be evaluated.
    """
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.started = time.perf_counter()
            self.loss: float | None = None
            self.stopped_by_time = False
            self.interrupted = False

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.perf_counter()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kwargs: Any) -> None:
            if logs and "loss" in logs:
                self.loss = float(logs["loss"])
            if log is not None and logs:
                line = {"step": state.global_step, "seconds": round(time.perf_counter() - self.started, 3)}
                line.update({k: v if not isinstance(v, float) or math.isfinite(v) else None for k, v in logs.items()})
                log.write(json.dumps(line) + "\n")
                log.flush()

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if log is not None:
                how = ("stopped by an interrupt (Ctrl-C)" if self.interrupted
                       else f"stopped by the {limit_seconds / 60:g}-minute guard" if self.stopped_by_time
                       else "reached its step bound")
                log.write(json.dumps({"end": how, "step": state.global_step, "max_steps": state.max_steps,
                                      "seconds": round(time.perf_counter() - self.started, 3)}) + "\n")
                log.flush()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            elapsed = time.perf_counter() - self.started
            on_step(state.global_step, self.loss, elapsed)
            if self.interrupted:
                control.should_training_stop = True
            elif limit_seconds and elapsed >= limit_seconds and state.global_step < state.max_steps:
                control.should_training_stop = True
                self.stopped_by_time = True

    return TimeBudget()
