"""The demo's front page: the verdict, before/after figures per capability, stage timings, and links.

Like the episode reports it links to, the page is well-formed XHTML (it parses as XML) with every
value escaped, no scripts and no external resources.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .pipeline import DemoSummary

STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:60em;color:#222}table{border-collapse:collapse;"
         "margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f3f3f3}")


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _loss(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def write_index(summary: DemoSummary, path: Path, pages: dict[str, Path]) -> Path:
    """Write the front page to `path`, linking the episode reports in `pages` (name -> path relative to it)."""
    b, a = summary.before, summary.after
    overall = []
    if b is not None and a is not None:
        overall = [["success", _pct(b.success_rate), _pct(a.success_rate)],
                   ["mean reward", f"{b.mean_reward:.3f}", f"{a.mean_reward:.3f}"],
                   ["mean predicate score", f"{b.mean_predicate_score:.3f}", f"{a.mean_predicate_score:.3f}"],
                   ["held-out teacher-token loss", _loss(b.heldout_loss), _loss(a.heldout_loss)],
                   ["accepted tool calls", f"{b.accepted_calls}/{b.tool_calls}", f"{a.accepted_calls}/{a.tool_calls}"]]
    per_cap = []
    if b is not None and a is not None:
        after = {c.capability: c for c in a.per_capability}
        for c in b.per_capability:
            ac = after.get(c.capability)
            per_cap.append([c.capability, c.episodes, _pct(c.success_rate), _pct(ac.success_rate) if ac else "-",
                            f"{c.mean_reward:.3f}", f"{ac.mean_reward:.3f}" if ac else "-"])
    t = summary.training
    links = "".join(f'<li><a href="{_e(p.as_posix())}">{_e(name)}</a></li>' for name, p in pages.items())
    body = (
        "<h1>coworkenv demo</h1>"
        f"<p>{_e(summary.verdict())}</p>"
        "<h2>Student on held-out environments</h2>"
        + _table(["figure", "before training", "after training"], overall)
        + _table(["capability", "episodes", "success before", "success after", "reward before", "reward after"],
                 per_cap)
        + "<h2>Run</h2>"
        + _table(["what", "value"], [
            ["environments (train / held-out)", (f"{summary.environments.get('train')} / "
                                                f"{summary.environments.get('heldout')}")],
            ["teacher pass rate", _pct(summary.teacher.get("pass_rate", 0.0))],
            ["SFT examples (train / held-out)", (f"{summary.sft.get('train_examples')} / "
                                                f"{summary.sft.get('heldout_examples')}")],
            ["student parameters", summary.student.get("parameters")],
            ["training steps", f"{t.get('steps')} (stopped by {t.get('stopped_by')}, {t.get('seconds')} s)"],
            ["training loss (first / last step)", f"{_loss(t.get('first_loss'))} / {_loss(t.get('last_loss'))}"],
        ])
        + _table(["stage", "seconds"], [[k, f"{v:.1f}"] for k, v in summary.timings.items()])
        + f"<h2>Episode reports</h2><ul>{links}</ul>"
    )
    page = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8" />'
            f"<title>coworkenv demo</title><style>{STYLE}</style></head><body>{body}</body></html>\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
