"""What a demo run did and measured (`DemoSummary`, written to summary.json), and how its training ended in words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .metrics import StudentScore

NOVEL_COPY_TARGET = 0.8  # issue 15's target for copied values never seen in training


def train_note(t: dict[str, Any]) -> str:
    """How training ended, in words: its step bound, an interrupt (Ctrl-C), its share of the time budget
    (`--steps 0`, the default), or the budget cutting a step-bounded run short."""
    if t.get("stopped_by") == "interrupt":
        return f"{t.get('steps')} steps, stopped by an interrupt (Ctrl-C); the student was evaluated as trained"
    if t.get("stopped_by") != "time":
        return f"{t.get('steps')} steps, stopped by its step bound"
    if not t.get("planned_steps"):
        return (f"{t.get('steps')} steps in {t.get('budget_seconds', 0):.0f} s, the share of the "
                f"{t.get('guard_minutes', 0):g}-minute time budget left to training")
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

    @property
    def interrupted(self) -> bool:
        """Whether an interrupt (Ctrl-C) ended training early (the demo then exits 130 after its report)."""
        return self.training.get("stopped_by") == "interrupt"

    def guard_warning(self) -> str:
        """'' when training ran to its bound; a sentence when an interrupt ended it; else a plain sentence that
        the time guard stopped it, at which step of how many, so nobody reads a short run's figures as the
        documented ones."""
        t = self.training
        planned = t.get("planned_steps") or 0
        if t.get("stopped_by") == "interrupt":
            return (f"WARNING: training was interrupted (Ctrl-C) after {t.get('steps', 0):,} steps in "
                    f"{t.get('seconds', 0):.0f} s, so these figures are those of a partly trained student.")
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
