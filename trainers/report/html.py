"""Writing the HTML report of a batch of episode records.

`index.html` has the per-capability summary table, a bar chart of success per capability
(`success.png`, drawn with matplotlib's Agg backend) and a table of episodes linking to
`episodes/<n>.html`: the transcript, every tool call with its result or error, the state diffs
of calls and world events, each step's predicate vector, and each predicate's outcome with the
expected and observed values. Every piece of text from a record is HTML-escaped; the pages are
well-formed XHTML (they parse as XML), with no scripts and no external resources.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..episodes.batch import CapabilityRow, summarize
from ..record import EpisodeRecord

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.pass{color:#17702a;font-weight:bold}.fail{color:#b3261e;font-weight:bold}
pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;margin:.2em 0;max-height:30em;overflow:auto}
.msg{border-left:4px solid #ccc;padding:.2em .8em;margin:.6em 0}.system{border-color:#999}.user{border-color:#3b6fd1}
.assistant{border-color:#17702a}.tool{border-color:#b36b00}.role{font-weight:bold;font-size:.9em}
"""


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


def _verdict(passed: bool) -> str:
    return '<span class="pass">passed</span>' if passed else '<span class="fail">failed</span>'


def _plot(by_policy: dict[str, Sequence[CapabilityRow]], path: Path) -> None:
    """Grouped bars: success per capability, one bar per policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    caps = sorted({r.capability for rows in by_policy.values() for r in rows if r.capability != "all"})
    width = 0.8 / max(1, len(by_policy))
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(caps) + 2), 3.4), dpi=100)
    try:
        for k, (policy, rows) in enumerate(by_policy.items()):
            by_cap = {r.capability: r for r in rows}
            xs = [i + (k - (len(by_policy) - 1) / 2) * width for i in range(len(caps))]
            ys = [100 * by_cap[c].success_rate if c in by_cap else 0.0 for c in caps]
            ax.bar(xs, ys, width=width, label=policy)
            for x, c in zip(xs, caps):
                if c in by_cap:
                    r = by_cap[c]
                    ax.annotate(f"{r.passed}/{r.episodes}", (x, 100 * r.success_rate), ha="center", va="bottom",
                                fontsize=7)
        ax.set_xticks(range(len(caps)), caps)
        ax.set_ylim(0, 110)
        ax.set_ylabel("success (%)")
        ax.set_title("Success per capability")
        ax.tick_params(axis="x", labelrotation=30)
        if len(by_policy) > 1:
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)


def _summary_table(rows: Sequence[CapabilityRow]) -> str:
    head = ("<tr><th>capability</th><th>episodes</th><th>passed</th><th>success</th><th>mean reward</th>"
            "<th>policy violations</th><th>failed calls</th><th>errors</th></tr>")
    body = "".join(
        f"<tr><td>{_e(r.capability)}</td><td>{r.episodes}</td><td>{r.passed}</td><td>{100 * r.success_rate:.1f}%</td>"
        f"<td>{r.mean_reward:.3f}</td><td>{r.violations}</td><td>{r.tool_errors}</td><td>{r.errors}</td></tr>"
        for r in rows)
    return f"<table>{head}{body}</table>"


def _index(records: Sequence[EpisodeRecord], by_policy: dict[str, Sequence[CapabilityRow]], title: str) -> str:
    lines = []
    for n, rec in enumerate(records):
        f = rec.final
        lines.append(
            f'<tr><td><a href="episodes/{n}.html">{_e(rec.episode_id)}</a></td><td>{_e(rec.env_id)}</td>'
            f"<td>{_e(rec.header.policy.name)}</td><td>{rec.header.seed}</td>"
            f"<td>{_verdict(rec.passed) if f else 'unfinished'}</td>"
            f"<td>{f'{f.reward:.3f}' if f else '-'}</td><td>{_e(f.stop_reason) if f else '-'}</td>"
            f"<td>{sum(1 for e in rec.events if e.kind == 'call')}</td></tr>")
    episodes = ("<table><tr><th>episode</th><th>environment</th><th>policy</th><th>seed</th><th>result</th>"
                f"<th>reward</th><th>stop</th><th>calls</th></tr>{''.join(lines)}</table>")
    body = (f"<h1>{_e(title)}</h1><h2>Success per capability</h2>"
            '<p><img src="success.png" alt="bar chart of success rate per capability and policy" /></p>'
            + "".join(f"<h3>policy: {_e(p)}</h3>{_summary_table(rows)}" for p, rows in by_policy.items())
            + f"<h2>Episodes ({len(records)})</h2>{episodes}")
    return _page(title, body)


def _message(m: Any) -> str:
    parts = [f'<div class="msg {_e(m.role)}"><div class="role">{_e(m.role)}'
             f"{' · ' + _e(m.name) if m.name else ''}{' · ' + _e(m.tool_call_id) if m.tool_call_id else ''}</div>"]
    if m.content is not None:
        parts.append(f"<pre>{_e(m.content)}</pre>")
    for c in m.tool_calls or []:
        parts.append(f"<div>calls <code>{_e(c.function.name)}</code>{' (' + _e(c.id) + ')' if c.id else ''}</div>"
                     f"<pre>{_json(c.function.arguments)}</pre>")
    parts.append("</div>")
    return "".join(parts)


def _diff(changes: list[dict[str, Any]]) -> str:
    if not changes:
        return ""
    out = []
    for ch in changes:
        text = ch.get("unified_diff")
        detail = _e(text) if text else _json({k: v for k, v in ch.items() if k in ("after", "before", "fields")})
        out.append(f"<div>{_e(ch.get('kind'))} <code>{_e(ch.get('table'))}</code> <code>{_e(ch.get('key'))}</code>"
                   f"</div><pre>{detail}</pre>")
    return "".join(out)


def _events(rec: EpisodeRecord) -> str:
    rows = []
    for e in rec.events:
        if e.kind == "message":
            what, outcome = f"{_e(e.role)} message", f"<pre>{_e(e.content)}</pre>"
        elif e.kind == "world":
            what, outcome = "world change", ""
        else:
            what = f"<code>{_e(e.tool)}</code><pre>{_json(e.args)}</pre>"
            if e.ok:
                outcome = f"ok<pre>{_json(e.result)}</pre>"
            else:
                err = e.error
                outcome = (f'<span class="fail">{_e(err.code if err else "error")}</span>'
                           f"<pre>{_e(err.message if err else '')}</pre>")
                if e.policy:
                    outcome += f"<div>blocked by policy {_e(e.policy)}</div>"
        rows.append(f"<tr><td>{e.index}</td><td>{e.turn}</td><td>{_e(e.sim_time)}</td><td>{_e(e.kind)}</td>"
                    f"<td>{what}</td><td>{outcome}</td><td>{_diff(e.diff)}</td></tr>")
    return ("<table><tr><th>#</th><th>turn</th><th>time</th><th>kind</th><th>what</th><th>outcome</th>"
            f"<th>state diff</th></tr>{''.join(rows)}</table>")


def _predicates(rec: EpisodeRecord) -> str:
    if rec.final is None:
        return "<p>The episode did not finish.</p>"
    results = rec.final.evaluation.get("results") or []
    rows = []
    for i, r in enumerate(results):
        r = r if isinstance(r, dict) else {}
        trace = "".join("1" if s.predicates[i] else "0" for s in rec.steps if i < len(s.predicates))
        rows.append(f"<tr><td>{i}</td><td>{_e(r.get('kind'))}</td><td>{_e(r.get('description'))}</td>"
                    f"<td>{_verdict(bool(r.get('passed')))}</td><td>{_e(r.get('expected'))}</td>"
                    f"<td>{_e(r.get('observed') if 'observed' in r else r.get('reason'))}</td>"
                    f"<td><code>{_e(trace)}</code></td></tr>")
    return ("<table><tr><th>#</th><th>kind</th><th>description</th><th>outcome</th><th>expected</th><th>observed</th>"
            f"<th>by step</th></tr>{''.join(rows)}</table>")


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
    transcript = "".join(_message(m) for m in f.messages) if f else "<p>No transcript (unfinished).</p>"
    body = (f'<p><a href="../index.html">back to the index</a></p><h1>{_e(rec.episode_id)}</h1><table>{table}</table>'
            f"<h2>Predicates</h2>{_predicates(rec)}<h2>Transcript</h2>{transcript}"
            f"<h2>Tool calls, messages and world changes</h2>{_events(rec)}")
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
    for n, rec in enumerate(recs):
        (out / "episodes" / f"{n}.html").write_text(_episode(rec), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_index(recs, by_policy, title), encoding="utf-8")
    return index
