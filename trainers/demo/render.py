"""The demo on a terminal: a rich progress bar per stage and the final tables."""

from __future__ import annotations

from typing import Self

from rich.console import Console, Group
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from .summary import DemoSummary, train_note


class RichReporter:
    """Shows each stage as its own progress bar, kept on screen when it finishes."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(TextColumn("[bold]{task.fields[stage]:<10}"), BarColumn(),
                                 TextColumn("{task.completed:>6.0f}/{task.fields[shown_total]} {task.fields[unit]}"),
                                 TimeElapsedColumn(), TextColumn("{task.description}"), console=console)
        self._task: TaskID | None = None
        self._updated = False

    def __enter__(self) -> Self:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, stage: str, total: float | None, unit: str = "") -> None:
        """Add the stage's bar."""
        shown = "?" if total is None else f"{total:.0f}"
        self._task = self.progress.add_task("", total=total, stage=stage, unit=unit, shown_total=shown)
        self._updated = False

    def update(self, completed: float, note: str = "") -> None:
        """Move the current bar."""
        if self._task is not None:
            self._updated = True
            self.progress.update(self._task, completed=completed, description=note)

    def finish(self, note: str = "") -> None:
        """Show the stage's result. The bar stays at the count last reported (a training run the time guard
        stopped at 1,265 of 1,500 steps reads 1265/1500); a stage that reported no count is filled."""
        if self._task is not None:
            task = self.progress.tasks[self._task]
            completed = task.completed if self._updated else (task.total or 0)
            self.progress.update(self._task, completed=completed, description=note)
            self._task = None


def _loss(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def final_tables(summary: DemoSummary) -> Group:
    """The closing tables: stage timings and run facts, and the student's figures before vs after."""
    run = Table(title="demo run", show_header=True)
    run.add_column("stage")
    run.add_column("seconds", justify="right")
    run.add_column("result")
    t = summary.training
    notes = {
        "synthesize": f"{summary.environments.get('train')} train + {summary.environments.get('heldout')} held-out "
                      f"environments ({summary.environments.get('discarded', 0)} discarded)",
        "teacher": f"pass rate {100 * summary.teacher.get('pass_rate', 0.0):.0f}% "
                   f"({summary.teacher.get('passed')}/{summary.teacher.get('episodes')})",
        "export": f"{summary.sft.get('train_examples')} train, {summary.sft.get('heldout_examples')} held-out examples",
        "student": f"tiny {'Qwen2-VL' if summary.student.get('vision') else 'Qwen2'}, "
                   f"{summary.student.get('parameters', 0):,} parameters",
        "train": train_note(t)
                 + f", loss {_loss(t.get('first_loss'))} -> {_loss(t.get('last_loss'))}",
    }
    for stage, seconds in summary.timings.items():
        run.add_row(stage, f"{seconds:.1f}", notes.get(stage, ""))
    run.add_row("[bold]total[/]", f"[bold]{sum(summary.timings.values()):.1f}[/]", "")
    figures = Table(title="student on held-out envs (before -> after)", show_header=True)
    for col in ("capability", "eps", "success", "mean reward"):
        figures.add_column(col, justify="left" if col == "capability" else "right")
    b, a = summary.before, summary.after
    if b is not None and a is not None:
        after = {c.capability: c for c in a.per_capability}
        for c in b.per_capability:
            ac = after[c.capability]
            figures.add_row(c.capability, str(c.episodes), f"{100 * c.success_rate:.0f}% -> {100 * ac.success_rate:.0f}%",
                            f"{c.mean_reward:.3f} -> {ac.mean_reward:.3f}",
                            style="bold" if c.capability == "all" else None)
        figures.add_row("teacher-token loss", "", "", f"{_loss(b.heldout_loss)} -> {_loss(a.heldout_loss)}")
        figures.add_row("accepted tool calls", "", "", f"{b.accepted_calls}/{b.tool_calls} -> "
                                                       f"{a.accepted_calls}/{a.tool_calls}")
    return Group(run, figures)
