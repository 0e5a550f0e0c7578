"""The learning figures as rows and terminal tables: what the student learned before it succeeds, and RL.

`learning_rows` turns two `StudentScore`s (before and after, or any two points) into rows of
(figure, before, after), each with its count n: teacher-forced accuracy of tool names, constant
values, copied values seen and never seen in training; valid JSON calls; accepted calls; mean
predicate score; success. `rl_rows` turns an RL comparison (`trainers.demo.rl`) into rows of
mean +- spread over seeds. The rich tables wrap both for the CLI.
"""

from __future__ import annotations

from typing import Any

from .metrics import StudentScore

PART_LABELS = (("tool_name", "tool names right (teacher-forced)"),
               ("constant", "constant values right (teacher-forced)"),
               ("copied_seen", "copied values seen in training right (teacher-forced)"),
               ("copied_unseen", "copied values never seen in training right (teacher-forced)"))


def _ratio(right: int, n: int) -> str:
    return f"{right}/{n} ({right / n:.0%})" if n else "0/0"


def learning_rows(before: StudentScore | None, after: StudentScore) -> list[tuple[str, str, str]]:
    """(figure, before, after) rows; `before` None leaves its column as '-'."""
    rows = []
    for part, label in PART_LABELS:
        cells = []
        for score in (before, after):
            p = (score.parts.get(part) if score else None) or {}
            cells.append(_ratio(p.get("right", 0), p.get("n", 0)) if score else "-")
        rows.append((label, *cells))

    def each(fn: Any) -> tuple[str, str]:
        return (fn(before) if before else "-", fn(after))

    rows.append(("valid JSON calls", *each(lambda s: _ratio(s.valid_json_calls, s.tool_calls))))
    rows.append(("accepted calls", *each(lambda s: _ratio(s.accepted_calls, s.tool_calls))))
    rows.append(("mean predicate score", *each(lambda s: f"{s.mean_predicate_score:.3f} (n={s.episodes})")))
    rows.append(("success", *each(lambda s: _ratio(round(s.success_rate * s.episodes), s.episodes))))
    return rows


def rl_rows(rl: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(credit, seeds, held-out success, mean predicate score, training reward) rows, mean +- sd."""
    out = [("SFT student (start of every run)", "-", f"{rl['sft_success']:.1%}", f"{rl['sft_score']:.3f}", "-")]
    for r in rl["rows"]:
        out.append((r["credit"], str(r["seeds"]), f"{r['success_mean']:.1%} +- {r['success_sd']:.1%}",
                    f"{r['score_mean']:.3f} +- {r['score_sd']:.3f}", f"{r['train_reward_mean']:.3f}"))
    return out


def learning_table(before: StudentScore | None, after: StudentScore, title: str = "learning figures") -> Any:
    """A rich table of `learning_rows`."""
    from rich.table import Table

    table = Table(title=title)
    for col in ("figure (held-out teacher calls and episodes)", "before", "after"):
        table.add_column(col, justify="left" if col.startswith("figure") else "right")
    for row in learning_rows(before, after):
        table.add_row(*row)
    return table


def rl_table(rl: dict[str, Any]) -> Any:
    """A rich table of `rl_rows`."""
    from rich.table import Table

    table = Table(title=f"RL after SFT: GRPO credit assignments on {rl['heldout']} held-out environments")
    for col in ("credit assignment", "seeds", "success", "mean predicate score", "train reward"):
        table.add_column(col, justify="left" if col == "credit assignment" else "right")
    for row in rl_rows(rl):
        table.add_row(*row)
    return table
