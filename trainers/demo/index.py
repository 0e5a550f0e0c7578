"""The demo's front page: the verdict, a plot and figures of the student before/after training per
capability, the learning figures (what it learned before it succeeds), RL results when run, stage
timings, and links. Every table has a legend for each column (a tooltip on the
header and a visible line under it); the plot is `before_after.png` beside the page (matplotlib).

Like the episode reports it links to, the page is well-formed XHTML (it parses as XML) with every
value escaped, no scripts and no external resources.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .summary import DemoSummary

STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:60em;color:#222}table{border-collapse:collapse;"
         "margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f3f3f3}"
         "th[title]{cursor:help;text-decoration:underline dotted}.legend{font-size:.85em;color:#555;margin:-.6em 0 1.2em}"
         ".legend strong{color:#222}img{max-width:100%}")
PLOT = "before_after.png"


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _table(header: list[tuple[str, str]], rows: list[list[Any]]) -> str:
    """A table whose every column has a legend: a tooltip on its header and a line under the table."""
    head = "".join(f'<th title="{_e(legend)}">{_e(h)}</th>' for h, legend in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    legend = "; ".join(f"<strong>{_e(h)}</strong>: {_e(text)}" for h, text in header)
    return f'<table><tr>{head}</tr>{body}</table><p class="legend">{legend}</p>'


def plot_before_after(summary: DemoSummary, path: Path) -> bool:
    """Draw success per capability before and after training (grouped bars, episodes passed on each) into
    the PNG `path`; False (and nothing written) when the summary has no before/after evaluation."""
    b, a = summary.before, summary.after
    if b is None or a is None or not b.per_capability:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    after = {c.capability: c for c in a.per_capability}
    caps = [c.capability for c in b.per_capability]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(caps) + 2), 3.6), dpi=100)
    try:
        for k, (label, rows, color) in enumerate((("before training", {c.capability: c for c in b.per_capability},
                                                   "#9aa5b1"), ("after training", after, "#2f7d4f"))):
            xs = [i + (k - 0.5) * 0.38 for i in range(len(caps))]
            ys = [100 * rows[c].success_rate if c in rows else 0.0 for c in caps]
            ax.bar(xs, ys, width=0.38, label=label, color=color)
            for x, c in zip(xs, caps):
                if c in rows:
                    ax.annotate(f"{rows[c].passed} of {rows[c].episodes}", (x, 100 * rows[c].success_rate),
                                xytext=(0, 2), textcoords="offset points", ha="center", va="bottom", fontsize=8)
        if all(c.passed == 0 for c in (*b.per_capability, *a.per_capability)):  # no bar has a height
            n = next((c.episodes for c in b.per_capability if c.capability == "all"), b.episodes)
            ax.text(0.5, 0.55, f"0 of {n} held-out environments passed,\nbefore and after training", ha="center",
                    va="center", transform=ax.transAxes, fontsize=11, color="#444")
        ax.set_xticks(range(len(caps)), caps)
        ax.set_ylim(0, 115)
        ax.set_ylabel("success on held-out (%)")
        ax.set_title("Student success per capability, before and after training", fontsize=10)
        ax.tick_params(axis="x", labelrotation=20)
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)
    return True


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
    passed = (f"{round(b.success_rate * b.episodes)} of {b.episodes} passed before training, "
              f"{round(a.success_rate * a.episodes)} of {a.episodes} after" if b is not None and a is not None else "")
    plot = (f'<p><img src="{PLOT}" alt="bar chart: success per capability before and after training; '
            f'{_e(passed)}" /></p><p class="legend">Held-out environments passed: {_e(passed)}.</p>'
            if plot_before_after(summary, path.parent / PLOT) else "")
    learning = ""
    if a is not None:
        from .learning import learning_rows

        learning = ("<h2>What the student learned (held-out)</h2>" + _table(
            [("figure", "Teacher-forced figures count the held-out teacher calls' tool names and argument values "
                        "the student predicts exactly; the others count its own calls and episodes (right/n)"),
             ("before training", "The student as built"), ("after training", "After SFT")],
            [list(row) for row in learning_rows(b, a)]))
    rl = ""
    if summary.rl:
        from .learning import rl_rows

        rl = (f"<h2>RL after SFT ({_e(summary.rl.get('heldout'))} held-out environments)</h2>" + _table(
            [("credit assignment", "How GRPO assigns the reward to the rollout's tokens"),
             ("seeds", "Runs, one per seed"), ("success", "Held-out success, mean +- sample sd over seeds"),
             ("mean predicate score", "Held-out mean predicate score, mean +- sd"),
             ("train reward", "Mean reward of the training rollouts")], [list(row) for row in rl_rows(summary.rl)]))
    guard = summary.guard_warning()
    from .summary import train_note

    links = "".join(f'<li><a href="{_e(p.as_posix())}">{_e(name)}</a></li>' for name, p in pages.items())
    body = (
        "<h1>coworkenv demo</h1>"
        f"<p>{_e(summary.verdict())}</p>"
        + (f'<p style="color:#a00"><strong>{_e(guard)}</strong></p>' if guard else "")
        + "<h2>Student on held-out environments</h2>"
        + plot
        + _table([("figure", "What is measured, over every held-out episode"),
                  ("before training", "The student as built, before any training step"),
                  ("after training", "The same student after SFT on the teacher's episodes")], overall)
        + _table([("capability", "A capability tag of the held-out environments ('all': every episode once)"),
                  ("episodes", "Held-out episodes with this capability"),
                  ("success before", "Share of them passed (every predicate held) before training"),
                  ("success after", "The same after training"),
                  ("reward before", "Mean episode reward before training"),
                  ("reward after", "Mean episode reward after training")], per_cap)
        + learning
        + rl
        + "<h2>Run</h2>"
        + _table([("what", "A fact of this run"), ("value", "Its value")], [
            ["environments (train / held-out)", (f"{summary.environments.get('train')} / "
                                                f"{summary.environments.get('heldout')}")],
            ["teacher pass rate", _pct(summary.teacher.get("pass_rate", 0.0))],
            ["SFT examples (train / held-out)", (f"{summary.sft.get('train_examples')} / "
                                                f"{summary.sft.get('heldout_examples')}")],
            ["student parameters", summary.student.get("parameters")],
            ["training steps", f"{train_note(t)}, {t.get('seconds')} s"],
            ["training loss (first / last step)", f"{_loss(t.get('first_loss'))} / {_loss(t.get('last_loss'))}"],
        ])
        + _table([("stage", "A step of the demo pipeline, in order"), ("seconds", "Wall time it took")],
                 [[k, f"{v:.1f}"] for k, v in summary.timings.items()])
        + f"<h2>Episode reports</h2><ul>{links}</ul>"
    )
    page = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8" />'
            f"<title>coworkenv demo</title><style>{STYLE}</style></head><body>{body}</body></html>\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def write_demo_report(summary: DemoSummary, out: Path, student: Path, on_page: Any) -> Path:
    """Write the HTML episode reports of teacher, before and after (from out/records) and the front page
    under out/report, fill `summary.files`, and return the front page's path; `on_page(n)` after each report."""
    from workspace_sim.record import read_records

    from ..report import write_report

    pages = {}
    for name, title in (("teacher", "Teacher on every environment"), ("before", "Student before training"),
                        ("after", "Student after training")):
        recs = read_records(out / "records" / f"{name}.jsonl")
        pages[name] = write_report(recs, out / "report" / name, title=f"coworkenv demo: {title}")
        on_page(len(pages))
    index = write_index(summary, out / "report" / "index.html", {k: v.relative_to(out / "report")
                                                                  for k, v in pages.items()})
    summary.files = {"summary": str(out / "summary.json"), "report": str(index), "records": str(out / "records"),
                     "sft": str(out / "sft"), "student": str(student), "environments": str(out / "envs")}
    return index
