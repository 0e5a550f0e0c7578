"""The scheduler's tools: list, read, create, change, pause, resume and delete jobs, read their run history,
and preview when a cron expression runs."""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import Conflict, InvalidArgument, NotFound
from workspace_sim.text.folding import fold
from workspace_sim.text.people import resolve_address
from workspace_sim.core.registry import tool
from workspace_sim.text.render import render_list
from workspace_sim.text.search_terms import matches_all, query_terms
from workspace_sim.text.validation import as_argument, clean_text, edit_tag_list, one_line, tag_list, zone
from .records import (
    JOBS, RUNS, MAX_ACTION, MAX_DEPENDS, MAX_NAME, MAX_TAGS, MAX_TEXT, Job, Run, RunStatus, dependency_problem,
)
from .syntax import Cron, CronError, describe, next_run, parse_cron, runs

MAX_QUERY = 500
JobStatus = Literal["all", "enabled", "paused", "failing", "succeeded", "never_run"]


# --- lookups and arguments ------------------------------------------------------------------------


def _tz(ctx: ToolContext) -> ZoneInfo:
    return zone(ctx.config.timezone)


def _job(ctx: ToolContext, ref: str) -> Job:
    """A job by id, or by its name (any case)."""
    text = " ".join(ref.split())
    j = ctx.get(JOBS, text) if text else None
    if j is not None:
        return j
    named = next((x for x in ctx.values(JOBS) if fold(x.name) == fold(text)), None)
    if named is not None:
        return named
    labels = {x.id: x.name for x in ctx.values(JOBS)}
    close = difflib.get_close_matches(text, list(labels), n=3, cutoff=0.6)
    close += [i for i, n in labels.items() if n in difflib.get_close_matches(text, list(labels.values()), n=3,
                                                                              cutoff=0.6)]
    hints = [f"{i} ({labels[i]})" for i in dict.fromkeys(close)]
    hint = f"; did you mean {', '.join(hints)}?" if hints else "; use list_jobs to find job ids"
    raise NotFound(f"job {ref.strip()!r} not found{hint}")


def _cron(schedule: str) -> Cron:
    try:
        return parse_cron(schedule)
    except CronError as e:
        raise InvalidArgument(f"schedule {schedule.strip()!r} is not a valid cron expression: {e}") from None


def _owner(ctx: ToolContext, value: str) -> str:
    return ctx.user if value.strip().lower() == "me" else resolve_address(ctx, value, "owner")


def _depends(ctx: ToolContext, job_id: str, refs: list[str]) -> list[str]:
    if len(refs) > MAX_DEPENDS:
        raise InvalidArgument(f"depends_on has {len(refs)} jobs; at most {MAX_DEPENDS} are allowed")
    ids = list(dict.fromkeys(_job(ctx, r).id for r in refs))
    if job_id in ids:
        raise InvalidArgument(f"job {job_id} cannot depend on itself")
    jobs = {j.id: j for j in ctx.values(JOBS)}
    problem = dependency_problem(jobs, job_id, ids)
    if problem:
        raise InvalidArgument(f"depends_on: {problem}")
    return ids


def _name(ctx: ToolContext, name: str, job_id: str | None) -> str:
    text = " ".join(one_line(name, "name", MAX_NAME, required=True).split())
    clash = next((x for x in ctx.values(JOBS) if x.id != job_id and fold(x.name) == fold(text)), None)
    if clash is not None:
        raise Conflict(f"a job named {clash.name!r} already exists ({clash.id}); job names are unique")
    return text


def _tags(values: list[str], what: str) -> list[str]:
    return as_argument(tag_list, values, what, False, MAX_TAGS)


# --- output ---------------------------------------------------------------------------------------


def _local(t: datetime | None, tz: ZoneInfo) -> str | None:
    return t.astimezone(tz).isoformat(timespec="minutes") if t is not None else None


def run_json(r: Run, tz: ZoneInfo) -> dict[str, Any]:
    """A run with its times in the workspace's zone and its length in seconds."""
    took = int((r.finished - r.started).total_seconds()) if r.finished is not None else None
    return {"id": r.id, "job_id": r.job_id, "status": r.status, "trigger": r.trigger, "started": _local(r.started, tz),
            "finished": _local(r.finished, tz), "duration_seconds": took, "error": r.error, "output": r.output}


def job_json(ctx: ToolContext, j: Job, full: bool = False) -> dict[str, Any]:
    """A job's fields with times in the workspace's zone and its next run computed from the simulated clock; `full`
    adds the next five runs, its dependencies' and dependents' names and its five latest runs."""
    tz = _tz(ctx)
    cron = parse_cron(j.schedule)
    upcoming = runs(cron, ctx.now, tz, 5 if full else 1) if j.enabled else []
    out: dict[str, Any] = {
        "id": j.id, "name": j.name, "schedule": j.schedule, "schedule_text": describe(cron), "timezone": tz.key,
        "enabled": j.enabled, "state": "enabled" if j.enabled else "paused", "action": j.action,
        "description": j.description, "owner": j.owner, "tags": list(j.tags), "depends_on": list(j.depends_on),
        "timeout_minutes": j.timeout_minutes, "last_status": j.last_status, "last_run": _local(j.last_run, tz),
        "next_run": _local(upcoming[0], tz) if upcoming else None}
    if full:
        names = {x.id: x.name for x in ctx.values(JOBS)}
        history = sorted((r for r in ctx.values(RUNS) if r.job_id == j.id), key=lambda r: (r.started, r.id),
                         reverse=True)
        out["upcoming_runs"] = [_local(t, tz) for t in upcoming]
        out["dependencies"] = [{"id": d, "name": names.get(d)} for d in j.depends_on]
        out["dependents"] = [{"id": x.id, "name": x.name} for x in ctx.values(JOBS) if j.id in x.depends_on]
        out["recent_runs"] = [run_json(r, tz) for r in history[:5]]
        out["created"], out["updated"] = _local(j.created, tz), _local(j.updated, tz)
    return out


def _job_line(d: dict[str, Any]) -> str:
    tags = f" #{' #'.join(d['tags'])}" if d["tags"] else ""
    nxt = f"next {d['next_run']}" if d["next_run"] else "no next run"
    return (f"{d['id']} {d['name']} [{d['state']}, last {d['last_status']}] '{d['schedule']}' "
            f"({d['schedule_text']}); {nxt}{tags}")


def _run_line(r: dict[str, Any]) -> str:
    err = f": {r['error']}" if r["error"] else ""
    return f"{r['id']} {r['started']} {r['status']} ({r['trigger']}){err}"


def _render_job(data: dict) -> str:
    d = data["job"]
    lines = [_job_line(d), f"Action: {d['action']}", f"Owner: {d['owner'] or 'none'}"]
    if d.get("description"):
        lines.append(d["description"])
    if d.get("upcoming_runs"):
        lines.append("Upcoming: " + ", ".join(d["upcoming_runs"]))
    if d.get("dependencies"):
        lines.append("Depends on: " + ", ".join(f"{x['id']} {x['name']}" for x in d["dependencies"]))
    if d.get("dependents"):
        lines.append("Needed by: " + ", ".join(f"{x['id']} {x['name']}" for x in d["dependents"]))
    if "recent_runs" in d:
        lines.append(f"Recent runs ({len(d['recent_runs'])}):")
        lines += [f"- {_run_line(r)}" for r in d["recent_runs"]]
    if data.get("changed") is not None:
        lines.append(f"Changed: {', '.join(data['changed']) or 'nothing'}")
    return "\n".join(lines)


# --- reading --------------------------------------------------------------------------------------


@tool(read_only=True, render=render_list("jobs", _job_line, "No jobs match."))
def list_jobs(
    ctx: ToolContext, status: JobStatus = "all", tag: str | None = None, owner: str | None = None, query: str = "",
    limit: Annotated[int, Field(ge=1, le=200)] = 50, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List scheduled jobs by name, with their schedule, state, last status and next run (in the workspace's time
    zone, from the current time), filtered by state, tag, owner or words.

    Args:
        status: all (default); enabled or paused; failing (the last run failed or timed out); succeeded; never_run.
        tag: Only jobs with this tag (case-insensitive).
        owner: Only jobs owned by this person: an address, a directory name or 'me'.
        query: Words or "quoted phrases" that must all appear in the name, action, description or tags.
        limit: Most jobs to return (1-200).
        offset: Matching jobs to skip (for paging).
    """
    terms = query_terms(query, MAX_QUERY)
    want_tag = fold(as_argument(tag_list, [tag], "tag", False)[0]) if tag is not None else None
    who = _owner(ctx, owner) if owner is not None else None
    hits = []
    for j in ctx.values(JOBS):
        if status == "enabled" and not j.enabled or status == "paused" and j.enabled:
            continue
        if status == "failing" and j.last_status not in ("failed", "timeout"):
            continue
        if status == "succeeded" and j.last_status != "success" or status == "never_run" and j.last_status != "never":
            continue
        if want_tag is not None and want_tag not in (fold(t) for t in j.tags):
            continue
        if who is not None and j.owner != who:
            continue
        if matches_all(terms, j.name, j.action, j.description, *j.tags):
            hits.append(j)
    hits.sort(key=lambda j: (fold(j.name), j.id))
    return {"total": len(hits), "offset": offset, "limit": limit,
            "jobs": [job_json(ctx, j) for j in hits[offset:offset + limit]]}


@tool(read_only=True, render=_render_job)
def get_job(ctx: ToolContext, job: str) -> dict:
    """Get one job with all its fields, its next five runs, the jobs it depends on and that depend on it, and its
    five latest runs with their errors.

    Args:
        job: The job id (e.g. job-0001ab12) or its name.
    """
    return {"job": job_json(ctx, _job(ctx, job), full=True)}


@tool(read_only=True, render=render_list("runs", _run_line, "No runs match."))
def get_job_history(
    ctx: ToolContext, job: str, status: RunStatus | None = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """Read a job's run history, newest first: each run's start and end, status, trigger, error and output.

    Args:
        job: The job id or name.
        status: Only runs with this status: success, failed, timeout, skipped or running.
        limit: Most runs to return (1-200).
        offset: Matching runs to skip (for paging).
    """
    j = _job(ctx, job)
    tz = _tz(ctx)
    hits = sorted((r for r in ctx.values(RUNS) if r.job_id == j.id and (status is None or r.status == status)),
                  key=lambda r: (r.started, r.id), reverse=True)
    counts: dict[str, int] = {}
    for r in ctx.values(RUNS):
        if r.job_id == j.id:
            counts[r.status] = counts.get(r.status, 0) + 1
    return {"job_id": j.id, "name": j.name, "total": len(hits), "offset": offset, "limit": limit,
            "counts": dict(sorted(counts.items())), "runs": [run_json(r, tz) for r in hits[offset:offset + limit]]}


@tool(read_only=True)
def preview_schedule(ctx: ToolContext, schedule: str, count: Annotated[int, Field(ge=1, le=50)] = 5) -> dict:
    """Check a cron expression and show when it would run next, in the workspace's time zone from the current time,
    without changing anything.

    Args:
        schedule: Five cron fields 'minute hour day-of-month month day-of-week', e.g. '30 2 * * mon-fri', or a macro
            such as @daily.
        count: How many upcoming runs to show (1-50).
    """
    cron, tz = _cron(schedule), _tz(ctx)
    return {"schedule": cron.expression, "schedule_text": describe(cron), "timezone": tz.key,
            "runs": [_local(t, tz) for t in runs(cron, ctx.now, tz, count)]}


# --- changes --------------------------------------------------------------------------------------


def _scheduled(ctx: ToolContext, schedule: str, enabled: bool) -> datetime | None:
    return next_run(parse_cron(schedule), ctx.now, _tz(ctx)) if enabled else None


@tool(render=_render_job)
def create_job(
    ctx: ToolContext, name: str, schedule: str, action: str, description: str = "", owner: str = "me",
    tags: list[str] = [], depends_on: list[str] = [], enabled: bool = True,
    timeout_minutes: Annotated[int, Field(ge=1, le=1440)] = 60,
) -> dict:
    """Create a scheduled job that runs an action on a cron schedule in the workspace's time zone.

    Args:
        name: A unique name, e.g. Nightly sales export.
        schedule: Five cron fields 'minute hour day-of-month month day-of-week' (e.g. '0 2 * * *' for 02:00 daily,
            '*/15 9-17 * * mon-fri'), or @hourly, @daily, @weekly, @monthly or @yearly.
        action: The command or task it runs, e.g. python export.py --target s3://reports.
        description: What the job is for.
        owner: Who owns it: an address, a directory name or 'me'.
        tags: Tags (single words), e.g. ["finance", "nightly"].
        depends_on: Ids or names of jobs whose latest run must have succeeded before this one runs.
        enabled: Whether it starts scheduled (true) or paused.
        timeout_minutes: How long a run may take before it is stopped (1-1440).
    """
    text = _name(ctx, name, None)
    cron = _cron(schedule)
    job_id = ctx.new_id("job")
    while ctx.get(JOBS, job_id) is not None:
        job_id = ctx.new_id("job")
    j = Job(id=job_id, name=text, schedule=cron.expression,
            action=clean_text(action, "action", MAX_ACTION, required=True),
            description=clean_text(description, "description", MAX_TEXT), enabled=enabled, owner=_owner(ctx, owner),
            tags=_tags(tags, "tags"), depends_on=_depends(ctx, job_id, depends_on), timeout_minutes=timeout_minutes,
            next_run=_scheduled(ctx, cron.expression, enabled), created=ctx.now, updated=ctx.now)
    ctx.put(JOBS, j)
    return {"job": job_json(ctx, j, full=True)}


@tool(render=_render_job)
def update_job(
    ctx: ToolContext, job: str, name: str | None = None, schedule: str | None = None, action: str | None = None,
    description: str | None = None, owner: str | None = None, tags: list[str] | None = None,
    add_tags: list[str] = [], remove_tags: list[str] = [], depends_on: list[str] | None = None,
    timeout_minutes: Annotated[int, Field(ge=1, le=1440)] | None = None,
) -> dict:
    """Change a job's fields; only those given change, and the answer lists what changed. A new schedule takes effect
    from now (the next run is recomputed). Use pause_job / resume_job to stop and start it.

    Args:
        job: The job id or name.
        name: New unique name.
        schedule: New cron expression (five fields or a macro such as @daily).
        action: New command or task.
        description: New description (replaces the old text).
        owner: New owner: an address, a directory name or 'me'.
        tags: The complete new list of tags (replaces the old one).
        add_tags: Tags to add.
        remove_tags: Tags to remove; each must be on the job.
        depends_on: The complete new list of jobs (ids or names) it depends on; an empty list removes them all.
        timeout_minutes: New run timeout in minutes (1-1440).
    """
    j = _job(ctx, job)
    given = (name, schedule, action, description, owner, tags, depends_on, timeout_minutes)
    if all(v is None for v in given) and not (add_tags or remove_tags):
        raise InvalidArgument("nothing to change; give at least one field such as schedule, action or tags")
    changes: dict[str, Any] = {}
    if name is not None:
        changes["name"] = _name(ctx, name, j.id)
    if schedule is not None:
        changes["schedule"] = _cron(schedule).expression
    if action is not None:
        changes["action"] = clean_text(action, "action", MAX_ACTION, required=True)
    if description is not None:
        changes["description"] = clean_text(description, "description", MAX_TEXT)
    if owner is not None:
        changes["owner"] = _owner(ctx, owner)
    if depends_on is not None:
        changes["depends_on"] = _depends(ctx, j.id, depends_on)
    if timeout_minutes is not None:
        changes["timeout_minutes"] = timeout_minutes
    base = _tags(tags, "tags") if tags is not None else j.tags
    added, changes["tags"], missing = edit_tag_list(base, _tags(add_tags, "add_tags"), _tags(remove_tags, "remove_tags"))
    if missing:
        raise InvalidArgument(f"job {j.id} has no tag {', '.join(missing)}; its tags are {', '.join(added) or 'none'}")
    j, changed = ctx.update(JOBS, j, changes, updated=ctx.now)
    if "schedule" in changed:
        j = ctx.put(JOBS, j.evolve(next_run=_scheduled(ctx, j.schedule, j.enabled)))  # type: ignore[assignment]
    return {"job": job_json(ctx, j, full=True), "changed": changed}


def _set_enabled(ctx: ToolContext, job: str, enabled: bool) -> dict:
    j = _job(ctx, job)
    if j.enabled == enabled:
        return {"job": job_json(ctx, j, full=True), "changed": []}
    j = ctx.put(JOBS, j.evolve(enabled=enabled, next_run=_scheduled(ctx, j.schedule, enabled), updated=ctx.now))  # type: ignore[assignment]
    return {"job": job_json(ctx, j, full=True), "changed": ["enabled"]}


@tool(idempotent=True, render=_render_job)
def pause_job(ctx: ToolContext, job: str) -> dict:
    """Pause a job: it keeps its schedule and history but does not run until resumed. Pausing a paused job changes
    nothing.

    Args:
        job: The job id or name.
    """
    return _set_enabled(ctx, job, False)


@tool(idempotent=True, render=_render_job)
def resume_job(ctx: ToolContext, job: str) -> dict:
    """Resume a paused job; its next run is computed from now (missed runs are not made up). Resuming an enabled job
    changes nothing.

    Args:
        job: The job id or name.
    """
    return _set_enabled(ctx, job, True)


@tool(destructive=True)
def delete_job(ctx: ToolContext, job: str) -> dict:
    """Delete a job and its run history permanently. A job other jobs depend on is refused until they no longer
    depend on it; pause_job stops a job and keeps it.

    Args:
        job: The job id or name.
    """
    j = _job(ctx, job)
    needed = [x for x in ctx.values(JOBS) if j.id in x.depends_on]
    if needed:
        raise Conflict(f"job {j.id} ({j.name}) is a dependency of {', '.join(f'{x.id} ({x.name})' for x in needed)}; "
                       "change their depends_on first")
    gone = [r.id for r in ctx.values(RUNS) if r.job_id == j.id]
    for rid in gone:
        ctx.delete(RUNS, rid)
    ctx.delete(JOBS, j.id)
    return {"deleted": j.id, "name": j.name, "runs_deleted": len(gone)}
