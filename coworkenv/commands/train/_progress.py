"""Progress of a training command on stderr: a rich bar on a terminal, one log line per step otherwise.

Both show the step reached of the total, the last loss (or another figure the command names) and the
time left, estimated from the mean step time so far. stdout keeps only the command's result, so
`--json` output stays one clean line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO


def _clock(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


class StepProgress:
    """Steps, loss and time left of one training run, shown as it runs (a context manager).

    On a terminal (`stream.isatty()`, or `terminal=True`) a rich progress bar; otherwise one flushed line
    per step: `[train sft] step 3/10 loss 0.512, 2 s elapsed, about 5 s left`. `total` may be None until
    `set_total` learns it (a trainer knows its step count only once it starts); `figure` names the
    number shown beside the step (`loss`, `reward`).
    """

    def __init__(self, what: str, total: int | None = None, figure: str = "loss", stream: TextIO | None = None,
                 terminal: bool | None = None, clock: Callable[[], float] = time.perf_counter) -> None:
        self.what, self.total, self.figure, self.clock = what, total, figure, clock
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)()) if terminal is None else terminal
        self.started = clock()
        self.steps = 0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> StepProgress:
        self.started = self.clock()
        if self.terminal:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            console = Console(file=self.stream, force_terminal=True)
            self._progress = Progress(TextColumn(f"[bold]{self.what}[/]"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("steps {task.fields[shown]}"), TimeElapsedColumn(),
                                      TextColumn("left"), TimeRemainingColumn(), console=console)
            self._progress.start()
            self._task = self._progress.add_task("", total=self.total, shown="")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def set_total(self, total: int | None) -> None:
        """The run's step count, once known."""
        self.total = total if total and total > 0 else None
        if self._progress is not None:
            self._progress.update(self._task, total=self.total)

    def step(self, step: int, value: float | None, elapsed: float | None = None) -> None:
        """Step `step` ended with `value` (the loss, or the figure named at construction; None: not known)."""
        self.steps = step
        elapsed = self.clock() - self.started if elapsed is None else elapsed
        shown = "" if value is None else f"{self.figure} {value:.4g}"
        if self._progress is not None:
            self._progress.update(self._task, completed=step, shown=shown)
            return
        of = f"/{self.total}" if self.total else ""
        left = ""
        if self.total and step:
            left = f", about {_clock(elapsed / step * (self.total - step))} left"
        self.stream.write(f"[{self.what}] step {step}{of}" + (f" {shown}" if shown else "")
                          + f", {_clock(elapsed)} elapsed{left}\n")
        self.stream.flush()

    def __call__(self, step: int, value: float | None, elapsed: float) -> None:
        """`step` as an `on_step(step, loss, elapsed)` callback (`build_base`, `budget_callback`)."""
        self.step(step, value, elapsed)


def trainer_callback(progress: StepProgress) -> Any:
    """A transformers `TrainerCallback` that feeds `progress`: the total from the trainer's step count when
    training begins, then each step's loss as the trainer logs it (the trainers here log every step)."""
    from transformers import TrainerCallback

    class Feed(TrainerCallback):  # type: ignore[misc]
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            progress.set_total(int(state.max_steps or 0))

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kwargs: Any) -> None:
            if logs and "loss" in logs:
                progress.step(state.global_step, float(logs["loss"]))

    return Feed()
