"""The to-do service's tools (the package docstring says what the service models)."""

from __future__ import annotations

import difflib
from datetime import date, datetime
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
from workspace_sim.text.validation import as_argument, clean_text, edit_tag_list, one_line, tag, zone
from .records import (
    LISTS, TASKS, INBOX, Priority, ActiveStatus, STATUS_WORDS, RANK, MAX_TITLE, MAX_TEXT, MAX_SOURCE, MAX_NAME,
    MAX_QUERY, label_list, parse_due, TaskList, Task,
)


# --- lookups --------------------------------------------------------------------------------------


def _tz(ctx: ToolContext) -> ZoneInfo:
    return zone(ctx.config.timezone)


def _task(ctx: ToolContext, task_id: str) -> Task:
    key = task_id.strip()
    t = ctx.get(TASKS, key) if key else None
    if t is None:
        close = difflib.get_close_matches(key, ctx.keys(TASKS), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use list_tasks to find task ids"
        raise NotFound(f"task {task_id!r} not found{hint}")
    return t


def _list(ctx: ToolContext, value: str | None) -> TaskList:
    """A list by id or name (case-insensitive); None means the Inbox."""
    lists = list(ctx.values(LISTS))
    if value is None:
        inbox = ctx.get(LISTS, INBOX) or next((x for x in lists if fold(x.name) == "inbox"), None)
        if inbox is None:
            raise NotFound("there is no Inbox list; name a list (list_task_lists shows them)")
        return inbox
    text = " ".join(value.split())
    hit = ctx.get(LISTS, text) or next((x for x in lists if fold(x.name) == fold(text)), None)
    if hit is None:
        names = [x.name for x in lists]
        close = difflib.get_close_matches(text, names, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else f"lists: {', '.join(names) or 'none'}"
        raise NotFound(f"task list {value!r} not found; {hint} (create_task_list makes a new one)")
    return hit


def _assignee(ctx: ToolContext, value: str) -> str:
    return ctx.user if value.strip().lower() == "me" else resolve_address(ctx, value, "assignee")


def _children(ctx: ToolContext) -> dict[str, list[Task]]:
    out: dict[str, list[Task]] = {}
    for t in ctx.values(TASKS):
        if t.parent is not None:
            out.setdefault(t.parent, []).append(t)
    return out


def _descendants(ctx: ToolContext, t: Task) -> list[Task]:
    """Every subtask below `t`, depth first."""
    kids, out, stack = _children(ctx), [], list(reversed(_children(ctx).get(t.id, [])))
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(reversed(kids.get(x.id, [])))
    return out


# --- output ---------------------------------------------------------------------------------------


def _due_text(t: Task, tz: ZoneInfo) -> str | None:
    if t.due_at is not None:
        return t.due_at.astimezone(tz).isoformat(timespec="minutes")
    return t.due_date.isoformat() if t.due_date is not None else None


def task_json(ctx: ToolContext, t: Task, full: bool = True) -> dict[str, Any]:
    """A task: stored fields, its list's name, its due time shown in the user's zone, and whether it is
    overdue; `full` adds its direct subtasks."""
    tz = _tz(ctx)
    out = t.model_dump(mode="json")
    lst = ctx.get(LISTS, t.list_id)
    out["list_name"] = lst.name if lst is not None else None
    out["due"] = _due_text(t, tz)
    out["overdue"] = t.is_overdue(ctx.now, tz)
    if full:
        out["subtasks"] = [{"id": s.id, "title": s.title, "status": s.status}
                           for s in _children(ctx).get(t.id, [])]
    return out


def _line(d: dict[str, Any]) -> str:
    box = {"completed": "[x]", "in_progress": "[~]", "waiting": "[w]"}.get(d["status"], "[ ]")
    bits = [f"{d['id']} {box} {d['title']}"]
    if d["status"] in ("in_progress", "waiting"):
        bits.append(f"({STATUS_WORDS[d['status']]})")
    if d["priority"] != "none":
        bits.append(f"({d['priority']})")
    if d["due"]:
        bits.append(f"due {d['due'].replace('T', ' ')}" + (" OVERDUE" if d["overdue"] else ""))
    if d["assignee"]:
        bits.append(f"@{d['assignee']}")
    bits += [f"#{x}" for x in d["labels"]]
    bits.append(f"in {d['list_name']}" + (f", subtask of {d['parent']}" if d["parent"] else ""))
    return " ".join(bits)


_render_tasks = render_list("tasks", _line, "No tasks match.")


def _render_task(data: dict) -> str:
    d = data["task"] if "task" in data else data
    lines = [_line(d)]
    if d["notes"]:
        lines.append(d["notes"])
    if d["source"]:
        lines.append(f"Source: {d['source']}")
    if d["completed_at"]:
        lines.append(f"Completed {d['completed_at']}")
    lines += [f"Subtask {s['id']} [{'x' if s['status'] == 'completed' else ' '}] {s['title']}"
              for s in d.get("subtasks", [])]
    for what in ("also_completed", "also_reopened", "moved_with_it"):
        if data.get(what):
            lines.append(f"{what.replace('_', ' ').capitalize()}: {', '.join(data[what])}")
    if data.get("changed") is not None:
        lines.append(f"Changed: {', '.join(data['changed']) or 'nothing'}")
    return "\n".join(lines)


def _render_lists(data: dict) -> str:
    return "\n".join(f"- {x['id']} {x['name']}: {x['open']} open ({x['overdue']} overdue), {x['completed']} completed"
                     for x in data["lists"]) or "No lists."


# --- lists ----------------------------------------------------------------------------------------


@tool(read_only=True, render=_render_lists)
def list_task_lists(ctx: ToolContext) -> dict:
    """List your task lists (the Inbox first) with how many tasks each has open, overdue and completed."""
    tz = _tz(ctx)
    counts: dict[str, list[int]] = {}
    for t in ctx.values(TASKS):
        c = counts.setdefault(t.list_id, [0, 0, 0])
        c[2 if t.status == "completed" else 0] += 1
        c[1] += t.is_overdue(ctx.now, tz)
    lists = sorted(ctx.values(LISTS), key=lambda x: (x.id != INBOX, fold(x.name), x.id))
    return {"lists": [{"id": x.id, "name": x.name, "open": counts.get(x.id, [0, 0, 0])[0],
                       "overdue": counts.get(x.id, [0, 0, 0])[1], "completed": counts.get(x.id, [0, 0, 0])[2]}
                      for x in lists]}


@tool()
def create_task_list(ctx: ToolContext, name: str) -> dict:
    """Create a task list (a project); names are unique, ignoring case.

    Args:
        name: The list's name, e.g. Q2 Launch.
    """
    text = " ".join(one_line(name, "name", MAX_NAME, required=True).split())
    clash = next((x for x in ctx.values(LISTS) if fold(x.name) == fold(text)), None)
    if clash is not None:
        raise Conflict(f"a list named {clash.name!r} already exists ({clash.id})")
    lst = TaskList(id=ctx.new_id("list"), name=text, created=ctx.now)
    ctx.put(LISTS, lst)
    return {"id": lst.id, "name": lst.name}


# --- listing --------------------------------------------------------------------------------------


def _within(t: Task, bound: tuple[date | None, datetime | None], before: bool, tz: ZoneInfo) -> bool:
    """Whether `t` is due on or before (or on or after) a bound; a day bound compares local dates."""
    day, at = bound
    if t.due_date is None or day is None:
        return False
    if at is not None and t.due_at is not None:
        return t.due_at <= at if before else t.due_at >= at
    return t.due_date <= day if before else t.due_date >= day


def sort_key(t: Task) -> tuple:
    """Due first (undated last; on one day, timed tasks before all-day ones), then priority, then age."""
    due_time = t.due_at.timestamp() if t.due_at is not None else float("inf")
    return (t.due_date is None, t.due_date or date.max, due_time, RANK[t.priority], t.created or datetime.min, t.id)


@tool(read_only=True, render=_render_tasks)
def list_tasks(
    ctx: ToolContext, task_list: str | None = None,
    status: Literal["open", "not_started", "in_progress", "waiting", "completed", "all"] = "open",
    due_before: str | None = None, due_after: str | None = None, overdue: bool = False,
    assignee: str | None = None, label: str | None = None, query: str = "",
    limit: Annotated[int, Field(ge=1, le=200)] = 50, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List tasks, soonest due first (then by priority, high first; undated last), with filters. Subtasks are listed
    too, each naming its parent.

    Args:
        task_list: Only this list (name or id); all lists if omitted.
        status: open (default: every task not completed), not_started, in_progress, waiting, completed or all.
        due_before: Only tasks due on or before this date (YYYY-MM-DD) or date-time.
        due_after: Only tasks due on or after this date (YYYY-MM-DD) or date-time.
        overdue: Only open tasks whose due date or time has passed.
        assignee: Only tasks assigned to this person: an address, a directory name, 'me', or 'none' for unassigned.
        label: Only tasks with this label (case-insensitive).
        query: Words or "quoted phrases" that must all appear in the title, notes, labels or source.
        limit: Most tasks to return (1-200).
        offset: Number of matching tasks to skip (for paging).
    """
    tz = _tz(ctx)
    terms = query_terms(query, MAX_QUERY)
    list_id = _list(ctx, task_list).id if task_list is not None else None
    before = parse_due(due_before, "due_before", tz) if due_before is not None else None
    after = parse_due(due_after, "due_after", tz) if due_after is not None else None
    if (before and before[0] is None) or (after and after[0] is None):
        raise InvalidArgument("due_before and due_after need a date or date-time; leave them out for no bound")
    who: str | None = None
    if assignee is not None:
        who = "" if assignee.strip().lower() == "none" else _assignee(ctx, assignee)
    want_label = fold(as_argument(tag, label, "label")) if label is not None else None
    wanted = {"open": {"open", "in_progress", "waiting"}, "not_started": {"open"}, "all": set(STATUS_WORDS)}.get(
        status, {status})
    hits = []
    for t in ctx.values(TASKS):
        if (list_id is not None and t.list_id != list_id) or t.status not in wanted:
            continue
        if overdue and not t.is_overdue(ctx.now, tz):
            continue
        if (before and not _within(t, before, True, tz)) or (after and not _within(t, after, False, tz)):
            continue
        if who is not None and (t.assignee or "") != who:
            continue
        if want_label is not None and want_label not in (fold(x) for x in t.labels):
            continue
        if matches_all(terms, t.title, t.notes, *t.labels, t.source):
            hits.append(t)
    hits.sort(key=sort_key)
    page = hits[offset:offset + limit]
    return {"total": len(hits), "offset": offset, "limit": limit,
            "tasks": [task_json(ctx, t, full=False) for t in page]}


@tool(read_only=True, render=_render_task)
def get_task(ctx: ToolContext, id: str) -> dict:
    """Get one task with all its fields, its list, its due time in your zone and its direct subtasks.

    Args:
        id: The task id, e.g. task-0001ab12 (from list_tasks).
    """
    return task_json(ctx, _task(ctx, id))


# --- changes --------------------------------------------------------------------------------------


@tool(render=_render_task)
def create_task(
    ctx: ToolContext, title: str, task_list: str | None = None, notes: str = "", due: str = "",
    priority: Priority = "none", assignee: str | None = None, labels: list[str] = [], parent: str | None = None,
    source: str = "",
) -> dict:
    """Create an open task in a list (the Inbox if none is named), or as a subtask of another task (in its list).

    Args:
        title: One-line title, e.g. Send the Q2 budget to Dana.
        task_list: Name or id of the list; the parent's list for a subtask, else the Inbox.
        notes: Details.
        due: Due date YYYY-MM-DD, or date-time such as 2026-03-05T17:00 (your time zone unless it has an offset);
            empty for none.
        priority: none, low, medium or high.
        assignee: Who should do it: an address, a directory name or 'me'; unassigned if omitted.
        labels: Labels, free text in any script, e.g. ["finance", "waiting on vendor", "报销"].
        parent: Id of the task this is a subtask of.
        source: Where the task came from, e.g. a mail message id or a ticket key.
    """
    t_title = one_line(title, "title", MAX_TITLE, required=True)
    up = _task(ctx, parent) if parent is not None else None
    lst = _list(ctx, task_list) if task_list is not None or up is None else ctx.get(LISTS, up.list_id)
    if up is not None:
        if up.list_id != lst.id:
            raise InvalidArgument(f"the parent {up.id} is in list {up.list_id}, not {lst.id}; a subtask stays in its "
                                  "parent's list (leave task_list out)")
        if up.status == "completed":
            raise Conflict(f"the parent {up.id} is completed; reopen it first or add the task elsewhere")
    day, at = parse_due(due, "due", _tz(ctx))
    t = Task(id=ctx.new_id("task"), list_id=lst.id, title=t_title, notes=clean_text(notes, "notes", MAX_TEXT),
             due_date=day, due_at=at, priority=priority,
             assignee=_assignee(ctx, assignee) if assignee is not None else None,
             labels=label_list(labels, "labels"), parent=up.id if up is not None else None,
             source=one_line(source, "source", MAX_SOURCE, required=False), created=ctx.now, updated=ctx.now)
    ctx.put(TASKS, t)
    return {"task": task_json(ctx, t)}


@tool(render=_render_task)
def update_task(
    ctx: ToolContext, id: str, title: str | None = None, notes: str | None = None, due: str | None = None,
    priority: Priority | None = None, assignee: str | None = None, labels: list[str] | None = None,
    add_labels: list[str] = [], remove_labels: list[str] = [], source: str | None = None,
) -> dict:
    """Change a task's fields; only those given change. Use complete_task / reopen_task for the status and
    move_task for its list or parent.

    Args:
        id: The task id.
        title: New one-line title.
        notes: New details (replaces the old text).
        due: New due date YYYY-MM-DD or date-time; an empty string removes it.
        priority: none, low, medium or high.
        assignee: New assignee (address, directory name or 'me'); an empty string unassigns.
        labels: The complete new list of labels (replaces the old one).
        add_labels: Labels to add.
        remove_labels: Labels to remove (case-insensitive); each must be on the task.
        source: New source text; an empty string removes it.
    """
    t = _task(ctx, id)
    if all(v is None for v in (title, notes, due, priority, assignee, labels, source)) and not (
            add_labels or remove_labels):
        raise InvalidArgument("nothing to change; give at least one field such as title, due or priority")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = one_line(title, "title", MAX_TITLE, required=True)
    if notes is not None:
        changes["notes"] = clean_text(notes, "notes", MAX_TEXT)
    if due is not None:
        changes["due_date"], changes["due_at"] = parse_due(due, "due", _tz(ctx))
    if priority is not None:
        changes["priority"] = priority
    if assignee is not None:
        changes["assignee"] = _assignee(ctx, assignee) if assignee.strip() else None
    if source is not None:
        changes["source"] = one_line(source, "source", MAX_SOURCE, required=False)
    base = label_list(labels, "labels") if labels is not None else t.labels
    added, changes["labels"], missing = edit_tag_list(base, label_list(add_labels, "add_labels"),
                                                      label_list(remove_labels, "remove_labels"))
    if missing:
        raise InvalidArgument(f"task {t.id} has no label {', '.join(missing)}; "
                              f"its labels are {', '.join(added) or 'none'}")
    t, changed = ctx.update(TASKS, t, changes, updated=ctx.now)
    return {"task": task_json(ctx, t), "changed": changed}


@tool(render=_render_task)
def complete_task(ctx: ToolContext, id: str, include_subtasks: bool = False) -> dict:
    """Mark a task completed now. A task with open subtasks is refused unless include_subtasks is true, which
    completes them too.

    Args:
        id: The task id.
        include_subtasks: Also complete every open subtask below it.
    """
    t = _task(ctx, id)
    if t.status == "completed":
        raise InvalidArgument(f"task {t.id} is already completed (at {t.completed_at}); reopen_task reopens it")
    open_below = [x for x in _descendants(ctx, t) if x.status != "completed"]
    if open_below and not include_subtasks:
        raise Conflict(f"task {t.id} has {len(open_below)} open subtask(s): "
                       f"{', '.join(f'{x.id} {x.title!r}' for x in open_below[:10])}; complete them first or "
                       "pass include_subtasks=true")
    for x in open_below:
        ctx.put(TASKS, x.evolve(status="completed", completed_at=ctx.now, updated=ctx.now))
    t = t.evolve(status="completed", completed_at=ctx.now, updated=ctx.now)
    ctx.put(TASKS, t)
    return {"task": task_json(ctx, t), "also_completed": [x.id for x in open_below]}


@tool(render=_render_task)
def reopen_task(ctx: ToolContext, id: str) -> dict:
    """Mark a completed task open (not started) again; its completed parent tasks are reopened too (a completed task
    never has an open subtask). Its own subtasks stay as they are.

    Args:
        id: The task id.
    """
    t = _task(ctx, id)
    if t.status != "completed":
        raise InvalidArgument(f"task {t.id} is not completed (it is {STATUS_WORDS[t.status]}); set_task_status "
                              "changes the status of a task not completed")
    reopened = []
    up = t.parent
    while up is not None:
        p = _task(ctx, up)
        if p.status == "completed":
            ctx.put(TASKS, p.evolve(status="open", completed_at=None, updated=ctx.now))
            reopened.append(p.id)
        up = p.parent
    t = t.evolve(status="open", completed_at=None, updated=ctx.now)
    ctx.put(TASKS, t)
    return {"task": task_json(ctx, t), "also_reopened": reopened}


@tool(idempotent=True, render=_render_task)
def set_task_status(ctx: ToolContext, id: str, status: ActiveStatus) -> dict:
    """Set the status of a task that is not completed: open (not started), in_progress or waiting (on someone else).
    Use complete_task to complete a task and reopen_task to reopen a completed one.

    Args:
        id: The task id.
        status: open, in_progress or waiting.
    """
    t = _task(ctx, id)
    if t.status == "completed":
        raise InvalidArgument(f"task {t.id} is completed; reopen_task reopens it, then set_task_status can move it")
    if t.status == status:
        return {"task": task_json(ctx, t), "changed": []}
    t = t.evolve(status=status, updated=ctx.now)
    ctx.put(TASKS, t)
    return {"task": task_json(ctx, t), "changed": ["status"]}


@tool(destructive=True)
def delete_task(ctx: ToolContext, id: str) -> dict:
    """Delete a task permanently, with all its subtasks. Completing it keeps a record instead.

    Args:
        id: The task id.
    """
    t = _task(ctx, id)
    gone = [t, *_descendants(ctx, t)]
    for x in gone:
        ctx.delete(TASKS, x.id)
    return {"deleted": [x.id for x in gone], "title": t.title}


@tool(render=_render_task)
def move_task(ctx: ToolContext, id: str, task_list: str | None = None, parent: str | None = None) -> dict:
    """Move a task (with its subtasks) to another list, and/or under another parent task; an empty parent makes it a
    top-level task. Moving to another list without a parent makes it top-level there.

    Args:
        id: The task id.
        task_list: Name or id of the list to move it to.
        parent: Id of the new parent task (in the target list), or an empty string for none.
    """
    t = _task(ctx, id)
    if task_list is None and parent is None:
        raise InvalidArgument("nothing to move; give task_list, parent, or both")
    up = _task(ctx, parent) if parent is not None and parent.strip() else None
    if task_list is not None:
        lst = _list(ctx, task_list)
    else:
        lst = ctx.get(LISTS, up.list_id) if up is not None else ctx.get(LISTS, t.list_id)
    below = _descendants(ctx, t)
    if up is not None:
        if up.id == t.id or up.id in {x.id for x in below}:
            raise InvalidArgument(f"task {up.id} is {t.id} itself or one of its subtasks; a task cannot go under it")
        if up.list_id != lst.id:
            raise InvalidArgument(f"the parent {up.id} is in list {up.list_id}, not {lst.id}")
        if up.status == "completed" and t.status != "completed":
            raise Conflict(f"the parent {up.id} is completed and task {t.id} is open; reopen the parent first")
    new_parent = up.id if up is not None else (t.parent if parent is None and lst.id == t.list_id else None)
    if (lst.id, new_parent) == (t.list_id, t.parent):
        return {"task": task_json(ctx, t), "changed": [], "moved_with_it": []}
    changed = sorted(k for k, v in (("list_id", lst.id), ("parent", new_parent)) if getattr(t, k) != v)
    if lst.id != t.list_id:
        for x in below:
            ctx.put(TASKS, x.evolve(list_id=lst.id, updated=ctx.now))
    t = t.evolve(list_id=lst.id, parent=new_parent, updated=ctx.now)
    ctx.put(TASKS, t)
    moved = [x.id for x in below] if "list_id" in changed else []
    return {"task": task_json(ctx, t), "changed": changed, "moved_with_it": moved}

