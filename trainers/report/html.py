"""Writing the HTML report of a batch of episode records.

`index.html` has the per-capability summary table, a bar chart of success per capability
(`success.png`, drawn with matplotlib's Agg backend) and a table of episodes linking to
`episodes/<episode id>.html` (see `episode_pages`): each predicate's outcome with the expected and observed values and its
value after every step, then one timeline of the episode: the transcript's turns with each tool
call in place, its result (what the agent saw), error and state diff in expandable `<details>`
(never cut), and world changes where they happened. A multi-day episode adds a table of its days (each
day's verdict and the world's changes during it), the day of each predicate, and day headings in the
timeline. Every table has a legend for each column (a
tooltip on the header and a visible line under the table). Every piece of text from a record is
HTML-escaped; the pages are well-formed XHTML (they parse as XML), with no scripts and no external
resources.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from synth.spec import DAY_HEADER
from workspace_sim.record import EpisodeRecord, stage_verdicts

from ..episodes.batch import CapabilityRow, summarize
from .calls import call_counts

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
img{max-width:100%;height:auto}
table{border-collapse:collapse;margin:1em 0;display:block;max-width:100%;overflow-x:auto}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.pass{color:#17702a;font-weight:bold}.fail{color:#b3261e;font-weight:bold}
th[title]{cursor:help;text-decoration:underline dotted}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:.5em;margin:.2em 0}
.legend{font-size:.85em;color:#555;margin:-.6em 0 1.2em}.legend strong{color:#222}
.msg{border-left:4px solid #ccc;padding:.2em .8em;margin:.6em 0}.system{border-color:#999}.user{border-color:#3b6fd1}
.assistant{border-color:#17702a}.world{border-color:#7a3fb3}h3.day{border-top:2px solid #7a3fb3;padding-top:.4em}.role{font-weight:bold;font-size:.9em}
.call{border:1px solid #ddd;border-radius:4px;margin:.5em 0;padding:.3em .6em;background:#fcfcfc}
details{margin:.3em 0}summary{cursor:pointer;color:#333}summary .peek{color:#777;font-family:monospace}
td.steps{white-space:nowrap}.steps span{display:inline-block;width:.85em;text-align:center;font:.75em monospace;
border-radius:2px;margin-right:1px}.steps span:nth-child(5n){margin-right:.4em}
.steps .s1{background:#cfe9d4;color:#17702a}.steps .s0{background:#f6d3cf;color:#b3261e}
"""

SHOWN_OPEN = 600  # results up to this many characters (and 12 lines) start expanded; longer ones start folded


class ReportError(ValueError):
    """A report that cannot be written; the message names the path and the problem."""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _json(value: Any) -> str:
    return _e(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True))


def _page(title: str, body: str) -> str:
    return ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8" />'
            f'<title>{_e(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>\n')


def _table(columns: Sequence[tuple[str, str]], rows: Iterable[str], caption: str = "") -> str:
    """A table whose every column has a legend: a tooltip on its header and a line under the table."""
    head = "".join(f'<th title="{_e(legend)}">{_e(name)}</th>' for name, legend in columns)
    legend = "; ".join(f"<strong>{_e(name)}</strong>: {_e(legend)}" for name, legend in columns)
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    return f'<table>{cap}<tr>{head}</tr>{"".join(rows)}</table><p class="legend">{legend}</p>'


def episode_pages(records: Sequence[EpisodeRecord]) -> list[str]:
    """The page file name of each episode, by its id: characters other than letters, digits, `.`, `_`
    and `-` become `_`, a leading dot is dropped, at most 100 characters, and a name already taken
    (ids that differ only in such characters, or in case on a case-blind disk) gets `-2`, `-3`, ..."""
    import re

    names: list[str] = []
    taken: set[str] = set()
    for rec in records:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", rec.episode_id).lstrip(".")[:100] or "episode"
        name, k = base, 1
        while name.lower() in taken:
            k += 1
            name = f"{base}-{k}"
        taken.add(name.lower())
        names.append(f"{name}.html")
    return names


def _verdict(passed: bool) -> str:
    return '<span class="pass">passed</span>' if passed else '<span class="fail">failed</span>'


def _plot(by_policy: dict[str, Sequence[CapabilityRow]], path: Path) -> None:
    """Grouped horizontal bars: success per capability (one row each, its label in full), one bar per
    policy; 900 px wide whatever the number of capabilities, so the index never overflows the page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    caps = sorted({r.capability for rows in by_policy.values() for r in rows if r.capability != "all"})
    height = 0.8 / max(1, len(by_policy))
    fig, ax = plt.subplots(figsize=(9.0, max(2.4, 0.32 * len(caps) * max(1, len(by_policy)) ** 0.5 + 1.2)), dpi=100)
    try:
        for k, (policy, rows) in enumerate(by_policy.items()):
            by_cap = {r.capability: r for r in rows}
            ys = [i + (k - (len(by_policy) - 1) / 2) * height for i in range(len(caps))]
            xs = [100 * by_cap[c].success_rate if c in by_cap else 0.0 for c in caps]
            ax.barh(ys, xs, height=height, label=policy)
            for y, c in zip(ys, caps):
                if c in by_cap:
                    r = by_cap[c]
                    ax.annotate(f" {r.passed}/{r.episodes}", (100 * r.success_rate, y), ha="left", va="center",
                                fontsize=7)
        ax.set_yticks(range(len(caps)), caps)
        ax.invert_yaxis()  # alphabetical from the top, as in the tables
        ax.set_xlim(0, 112)
        ax.set_xlabel("success (%)")
        ax.set_title("Success per capability")
        if len(by_policy) > 1:
            ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        fig.savefig(path, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)


SUMMARY_COLUMNS = [
    ("capability", "A capability tag of the environments; 'all' counts each episode once (an environment with "
                   "two capabilities is counted in both of their rows)"),
    ("episodes", "Episodes of environments with this capability"),
    ("passed", "Episodes whose every predicate passed"),
    ("success", "passed / episodes"),
    ("mean reward", "Mean episode reward (score less penalties)"),
    ("policy violations", "Calls that workplace policies blocked, summed over the episodes"),
    ("failed calls", "Tool calls that returned an error, summed over the episodes"),
    ("errors", "Episodes that stopped on an error (the policy or the runner failed)"),
]


def _summary_table(rows: Sequence[CapabilityRow]) -> str:
    return _table(SUMMARY_COLUMNS, (
        f"<tr><td>{_e(r.capability)}</td><td>{r.episodes}</td><td>{r.passed}</td><td>{100 * r.success_rate:.1f}%</td>"
        f"<td>{r.mean_reward:.3f}</td><td>{r.violations}</td><td>{r.tool_errors}</td><td>{r.errors}</td></tr>"
        for r in rows))


CALL_COLUMNS = [
    ("policy", "Who acted"), ("episodes", "Finished episodes of the policy"),
    ("tool calls", "Tool calls made, summed over the episodes"),
    ("valid JSON", "Calls whose arguments parsed as JSON (a model's malformed call block counts as one invalid call)"),
    ("accepted", "Calls the workspace ran without an error"),
    ("mean predicate score", "Share of predicates that held at the end, averaged over the episodes: moves before "
                             "success does"),
]


def _calls_table(records: Sequence[EpisodeRecord]) -> str:
    """Per policy: how many calls were made, parsed and accepted, and the mean predicate score (the figures a
    student shows before it passes, from the records alone)."""
    by: dict[str, list[EpisodeRecord]] = {}
    for rec in records:
        if rec.final is not None:
            by.setdefault(rec.header.policy.name, []).append(rec)
    rows = []
    for policy, recs in by.items():
        calls, valid, accepted = call_counts(recs)
        score = sum(float(r.final.evaluation.get("score", 0.0)) for r in recs) / len(recs)  # type: ignore[union-attr]
        share = (lambda k: f"{k}/{calls} ({100 * k / calls:.0f}%)" if calls else "0/0")
        rows.append(f"<tr><td>{_e(policy)}</td><td>{len(recs)}</td><td>{calls}</td><td>{share(valid)}</td>"
                    f"<td>{share(accepted)}</td><td>{score:.3f}</td></tr>")
    return _table(CALL_COLUMNS, rows)


EPISODE_COLUMNS = [
    ("episode", "The episode's id; opens its page"), ("environment", "The environment's id"),
    ("policy", "Who acted: teacher, noop, a model"), ("seed", "The episode's seed (reproduces it)"),
    ("result", "passed when every predicate held at the end"), ("reward", "The episode's reward"),
    ("stop", "Why the episode ended"), ("calls", "Tool calls made"),
]


def _index(records: Sequence[EpisodeRecord], by_policy: dict[str, Sequence[CapabilityRow]], title: str) -> str:
    lines = []
    for page, rec in zip(episode_pages(records), records):
        f = rec.final
        lines.append(
            f'<tr><td><a href="episodes/{_e(page)}">{_e(rec.episode_id)}</a></td><td>{_e(rec.env_id)}</td>'
            f"<td>{_e(rec.header.policy.name)}</td><td>{rec.header.seed}</td>"
            f"<td>{_verdict(rec.passed) if f else 'unfinished'}</td>"
            f"<td>{f'{f.reward:.3f}' if f else '-'}</td><td>{_e(f.stop_reason) if f else '-'}</td>"
            f"<td>{sum(1 for e in rec.events if e.kind == 'call')}</td></tr>")
    episodes = _table(EPISODE_COLUMNS, lines)
    body = (f"<h1>{_e(title)}</h1><h2>Success per capability</h2>"
            '<p><img src="success.png" alt="bar chart of success rate per capability and policy" /></p>'
            + "".join(f"<h3>policy: {_e(p)}</h3>{_summary_table(rows)}" for p, rows in by_policy.items())
            + f"<h2>Tool calls per policy</h2>{_calls_table(records)}"
            + f"<h2>Episodes ({len(records)})</h2>{episodes}")
    return _page(title, body)


def _size(text: str) -> str:
    lines = text.count("\n") + 1
    return f"{len(text):,} characters" + (f", {lines} lines" if lines > 1 else "")


def _fold(label: str, text: str, cls: str = "") -> str:
    """`text` in full inside <details>: open when short, folded (with a peek at its start) when long."""
    short = len(text) <= SHOWN_OPEN and text.count("\n") < 12
    first = text.strip().splitlines()[0] if text.strip() else ""
    peek = "" if short else f' <span class="peek">{_e(first[:100] + ("…" if len(first) > 100 else ""))}</span>'
    opened = ' open="open"' if short else ""
    klass = f' class="{cls}"' if cls else ""
    return f"<details{opened}><summary>{label} ({_size(text)}){peek}</summary><pre{klass}>{_e(text)}</pre></details>"


def _diff(changes: list[dict[str, Any]], shown: str = "") -> str:
    """The state diff, folded; a file diff the result already showed (`shown`) is named, not repeated."""
    if not changes:
        return ""
    out = []
    for ch in changes:
        text = ch.get("unified_diff")
        where = f"<div>{_e(ch.get('kind'))} <code>{_e(ch.get('table'))}</code> <code>{_e(ch.get('key'))}</code>"
        if text and text.strip() and text.strip() in shown:
            out.append(f"{where} (the diff shown in the result)</div>")
            continue
        detail = _e(text) if text else _json({k: v for k, v in ch.items() if k in ("after", "before", "fields")})
        out.append(f"{where}</div><pre>{detail}</pre>")
    n = len(changes)
    return f"<details><summary>state change: {n} record{'s' * (n != 1)}</summary>{''.join(out)}</details>"


def _call(call: Any, event: Any, answer: Any) -> str:
    """One tool call: its arguments, then what the agent got back (once), its error and its state diff."""
    name = call.function.name if call is not None else event.tool
    args = call.function.arguments if call is not None else event.args
    status = ""
    if event is not None:
        status = ('<span class="pass">ok</span>' if event.ok else
                  f'<span class="fail">{_e(event.error.code if event.error else "error")}</span>')
        if event.policy:
            status += f" · blocked by policy <code>{_e(event.policy)}</code>"
        status = f" · {status} · event {event.index} · {_e(event.sim_time)}"
    parts = [f'<div class="call"><div>calls <code>{_e(name)}</code>{status}</div><pre>{_json(args)}</pre>']
    if answer is not None and answer.content is not None:
        shown = answer.content
        label = "result the agent saw" if event is None or event.ok else "error the agent saw"
    elif event is not None:
        shown = (json.dumps(event.result, ensure_ascii=False, indent=2, sort_keys=True) if event.ok
                 else (event.error.message if event.error else ""))
        label = "result" if event.ok else "error"
    else:
        shown, label = "", ""
    if label:
        parts.append(_fold(label, shown))
    if event is not None:
        parts.append(_diff(event.diff, shown))
    parts.append("</div>")
    return "".join(parts)


def _world(e: Any) -> str:
    return (f'<div class="msg world"><div class="role">world change · event {e.index} · {_e(e.sim_time)}</div>'
            f"{_diff(e.diff) or '<p>(no change to the state)</p>'}</div>")


def _timeline(rec: EpisodeRecord) -> str:
    """The transcript with every call in place (result, error and diff once each) and world changes where
    they happened; events that match no message are shown where their turn ends."""
    if rec.final is None:
        return "<p>No transcript (unfinished).</p>"
    calls_by_turn: dict[int, list[Any]] = {}
    worlds = [e for e in rec.events if e.kind == "world"]
    for e in rec.events:
        if e.kind == "call":
            calls_by_turn.setdefault(e.turn, []).append(e)
    answers: dict[str, Any] = {}
    pending: list[tuple[str, str]] = []
    msgs = rec.final.messages
    keys: list[str | None] = [None] * len(msgs)  # which call each tool message answers
    for i, m in enumerate(msgs):
        if m.role == "assistant":
            for j, c in enumerate(m.tool_calls or []):
                pending.append((c.id or f"#{i}.{j}", c.function.name))
        elif m.role == "tool":
            match = [p for p in pending if p[0] == m.tool_call_id] or \
                [p for p in pending if m.name is None or p[1] == m.name] or pending[:1]
            if match:
                keys[i] = match[0][0]
                answers[match[0][0]] = m
                pending.remove(match[0])
    out: list[str] = []

    def flush_worlds(before: int | None) -> None:
        while worlds and (before is None or worlds[0].index < before):
            out.append(_world(worlds.pop(0)))

    turn = -1
    multi_day = bool(stage_verdicts(rec.final.evaluation))
    for i, m in enumerate(msgs):
        if m.role == "tool" and keys[i] is not None:
            continue  # shown with its call
        if m.role == "user" and multi_day:
            day = DAY_HEADER.match(m.content or "")
            if day or turn == -1:
                out.append(f'<h3 class="day">{_e(day.group(0)[1:-1] if day else "Day 1")}</h3>')
        if m.role == "assistant":
            turn += 1
        where = f" · turn {turn}" if m.role == "assistant" else ""
        parts = [f'<div class="msg {_e(m.role)}"><div class="role">{_e(m.role)}{where}</div>']
        if m.content:
            parts.append(f"<pre>{_e(m.content)}</pre>")
        if m.role == "assistant":
            events = calls_by_turn.pop(turn, [])
            calls = []
            for j, c in enumerate(m.tool_calls or []):
                ev = events.pop(0) if events and events[0].tool == c.function.name else None
                if ev is not None:
                    flush_worlds(ev.index)
                calls.append(_call(c, ev, answers.get(c.id or f"#{i}.{j}")))
            calls += [_call(None, ev, None) for ev in events]  # logged calls no message names
            parts += calls
        parts.append("</div>")
        out.append("".join(parts))
    for turn_events in calls_by_turn.values():
        out += [_call(None, ev, None) for ev in turn_events]
    flush_worlds(None)
    return "".join(out)


PREDICATE_COLUMNS = [
    ("#", "The predicate's position in the environment's list"),
    ("kind", "What the predicate checks (state, diff, answer, transcript, ...)"),
    ("description", "The check in words"),
    ("outcome", "Whether it held at the end of the episode"),
    ("expected", "What it wanted ('as described' when the description says it all)"),
    ("observed", "What the final state or transcript showed (or why it failed)"),
    ("by step", "Its value after each step (assistant turn), left to right: 1 held, 0 did not; shows when the "
                "agent got it right (or undid it)"),
]


def _predicates(rec: EpisodeRecord) -> str:
    if rec.final is None:
        return "<p>The episode did not finish.</p>"
    results = rec.final.evaluation.get("results") or []
    day_of = {i: st["id"] for st in stage_verdicts(rec.final.evaluation) for i in st.get("predicates") or []}
    rows = []
    for i, r in enumerate(results):
        r = r if isinstance(r, dict) else {}
        trace = "".join(
            f'<span class="s{int(s.predicates[i])}" title="after step {s.turn}: '
            f'{"held" if s.predicates[i] else "did not hold"}">{int(s.predicates[i])}</span>'
            for s in rec.steps if i < len(s.predicates))
        day = f"<td>{_e(day_of.get(i, ''))}</td>" if day_of else ""
        rows.append(f"<tr><td>{i}</td>{day}<td>{_e(r.get('kind'))}</td><td>{_e(r.get('description'))}</td>"
                    f"<td>{_verdict(bool(r.get('passed')))}</td>"
                    f"<td>{'(as described)' if r.get('expected') == r.get('description') else _e(r.get('expected'))}</td>"
                    f"<td>{_e(r.get('observed') if 'observed' in r else r.get('reason'))}</td>"
                    f'<td class="steps">{trace}</td></tr>')
    columns = PREDICATE_COLUMNS if not day_of else [PREDICATE_COLUMNS[0], (
        "day", "The working day whose close this predicate was judged on (the last day: the end of the episode)"),
        *PREDICATE_COLUMNS[1:]]
    return _table(columns, rows)


DAY_COLUMNS = [
    ("day", "The stage (working day) of the scenario"),
    ("closed", "Simulated time the agent closed the day with its report ('-': still open at the end, or never reached)"),
    ("outcome", "Whether every predicate of the day held on the state the day closed on"),
    ("score", "Weighted fraction of the day's predicates that held"),
    ("world changes", "Changes from outside during the day (those as it opened first): what the agent had to "
                      "notice; an announced one was told in the day's message, a silent one was not"),
]


def _days(rec: EpisodeRecord) -> str:
    """A multi-day episode's days: each one's verdict and the world's changes during it."""
    stages = stage_verdicts(rec.final.evaluation if rec.final is not None else None)
    if not stages:
        return ""
    closed = {e.args.get("stage"): e.index for e in rec.events if e.kind == "stage" and isinstance(e.args, dict)}
    rows, start = [], -1
    for st in stages:
        end = closed.get(st["id"])
        changes = [e for e in rec.events if e.kind == "world" and e.index > start and (end is None or e.index < end)]
        shown = "".join(f"<div>{_e(e.sim_time)}: " + ", ".join(
            f"{_e(c.get('table'))} {_e(c.get('key'))} {_e(c.get('kind'))}" for c in e.diff[:5])
            + (f" and {len(e.diff) - 5} more" if len(e.diff) > 5 else "") + "</div>"
            for e in changes) if st.get("reached", True) else ""
        when = next((e.sim_time for e in rec.events if e.index == end), "-") if end is not None else "-"
        rows.append(f"<tr><td>{_e(st['id'])}</td><td>{_e(when)}</td>"
                    f"<td>{_verdict(bool(st.get('passed'))) if st.get('reached', True) else 'never reached'}</td>"
                    f"<td>{float(st.get('score', 0)):.3f}</td><td>{shown or '-'}</td></tr>")
        start = end if end is not None else start
    return "<h2>Days</h2>" + _table(DAY_COLUMNS, rows)


def _episode(rec: EpisodeRecord) -> str:
    h, f = rec.header, rec.final
    facts = [("environment", h.env_id), ("environment hash", h.env_hash), ("policy", h.policy.name),
             ("settings", json.dumps(h.policy.settings, sort_keys=True)), ("seed", h.seed),
             ("capabilities", ", ".join(h.capabilities))]
    if f is not None:
        facts += [("result", "passed" if rec.passed else "failed"), ("score", f"{f.evaluation.get('score', 0):.3f}"),
                  ("reward", f"{f.reward:.3f}"), ("stop", f.stop_reason + (f": {f.stop_detail}" if f.stop_detail else "")),
                  ("final answer", f.final_answer), ("policy violations", len(f.policy_violations)),
                  ("fault errors", len(f.fault_errors)),
                  ("timings", ", ".join(f"{k} {v:.4f}s" for k, v in sorted(f.timings.items())))]
    table = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts)
    body = (f'<p><a href="../index.html">back to the index</a></p><h1>{_e(rec.episode_id)}</h1><table>{table}</table>'
            f"{_days(rec)}<h2>Predicates</h2>{_predicates(rec)}"
            "<h2>Timeline</h2><p class=\"legend\">The conversation in order; each tool call shows its arguments, "
            "then what the agent got back, its error and the change it made to the state (click to unfold). "
            "World changes are the environment acting on its own.</p>"
            f"{_timeline(rec)}")
    return _page(f"episode {rec.episode_id}", body)


def write_report(records: Iterable[EpisodeRecord], out_dir: str | Path, title: str = "coworkenv episodes") -> Path:
    """Write the report into `out_dir` (created if needed) and return the path of index.html."""
    recs = list(records)
    out = Path(out_dir)
    try:
        (out / "episodes").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"{out}: cannot create the report folder ({e.strerror or e})") from None
    policies = sorted({r.header.policy.name for r in recs})
    by_policy = {p: summarize([r for r in recs if r.header.policy.name == p]) for p in policies}
    _plot(by_policy, out / "success.png")
    for page, rec in zip(episode_pages(recs), recs):
        (out / "episodes" / page).write_text(_episode(rec), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_index(recs, by_policy, title), encoding="utf-8")
    return index
