"""How the demo tells its caller what it is doing, and the training callback that keeps to the time limit.

The pipeline knows nothing of terminals: it calls a `Reporter` (the command renders it with rich
progress bars; tests and library users can pass `SilentReporter`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol


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


OnStep = Callable[[int, float | None, float], None]


def budget_callback(limit_seconds: float, on_step: OnStep) -> Any:
    """A transformers `TrainerCallback` that reports every step and stops training once `limit_seconds` pass.

    `on_step(step, last_loss, elapsed_seconds)` is called at each step's end; a limit of 0 means
    none. The callback's `stopped_by_time` says afterwards whether the clock ended the run.
    """
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.started = time.perf_counter()
            self.loss: float | None = None
            self.stopped_by_time = False

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.perf_counter()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kwargs: Any) -> None:
            if logs and "loss" in logs:
                self.loss = float(logs["loss"])

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            elapsed = time.perf_counter() - self.started
            on_step(state.global_step, self.loss, elapsed)
            if limit_seconds and elapsed >= limit_seconds and state.global_step < state.max_steps:
                control.should_training_stop = True
                self.stopped_by_time = True

    return TimeBudget()
