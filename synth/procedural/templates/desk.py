"""The rest of the desk: to-dos made from mail, and meeting notes shared with the people who attended."""

from __future__ import annotations

from datetime import timedelta

from ..builder import Act, SpecBuilder, TemplateError
from . import template
from .common import TOPICS, add_event, add_mail, background_mail, local

ACTIONS = ("send", "review", "update", "approve", "check", "sign off")
THINGS = ("forecast", "slides", "contract draft", "budget sheet", "hiring plan", "release notes", "vendor list",
          "survey results")


def _request_mail(b: SpecBuilder, sender, action: str, thing: str, due, to: list[str] | None = None) -> str:  # type: ignore[no-untyped-def]
    """A mail asking for something by a day (the day written out, as people do)."""
    first = (b.world.by_email(to[0]).name.split()[0] if to else b.world.user.name.split()[0])
    return add_mail(b, sender, f"{thing.capitalize()}: can you {action} it?",
                    f"Hi {first},\n\ncould you {action} the {thing} by {due:%A %d %B}? "
                    f"{b.maker.sentence()}.\n\nThanks,\n{sender.name.split()[0]}", b.rng.uniform(0.1, 1.5),
                    to=to, read=False)


@template("mail_triage", "todo_triage_from_mail")
def todo_triage_from_mail(b: SpecBuilder, size: int = 1) -> Act:
    """Turn each request in unread mail into a to-do due when it is needed (the day before is fine); FYI mail, a
    request to a look-alike (the user only cc'd) and an already-tracked request add nothing, existing to-dos stay."""
    b.use("mail", "contacts", "todo")
    background_mail(b, 3)
    senders = b.rng.sample(b.world.colleagues(), 4)
    things = b.rng.sample(THINGS, 2 + min(size, 3) + 2)
    n = 2 + min(size, 3)
    lists = b.table("todo", "lists")
    lists.append({"id": "list-followups", "name": "Follow-ups"})
    lists.append({"id": "list-personal", "name": "Personal"})
    requests = []
    for i in range(n):
        due = local(b, b.rng.randint(2, 9), 17)
        action = b.rng.choice(ACTIONS)
        mid = _request_mail(b, senders[i % len(senders)], action, things[i], due)
        requests.append((mid, action, things[i], due.date()))
    # already tracked: a request whose to-do exists (with its own due date, to be left as it is)
    tracked_thing = things[n]
    tracked_due = local(b, b.rng.randint(3, 9), 17)
    _request_mail(b, senders[-1], "review", tracked_thing, tracked_due)
    tasks = b.table("todo", "tasks")
    tracked_id = b.next_id("todo")
    tasks.append({"id": tracked_id, "list_id": "list-followups", "title": f"Review the {tracked_thing}",
                  "due_date": (tracked_due.date() - timedelta(days=1)).isoformat(), "labels": ["mail"]})
    tasks.append({"id": b.next_id("todo"), "list_id": "list-personal", "title": f"Book {b.maker.word()} appointment",
                  "due_date": local(b, 4, 9).date().isoformat()})
    # noise: FYI mail, and a request to someone else with the user only in copy
    add_mail(b, senders[0], f"FYI: {b.rng.choice(TOPICS)} notes", f"No action needed, just so you know. "
             f"{b.maker.paragraph()}", 0.4, read=False)
    twin_pool = [p for p in b.world.colleagues() if p.name.split()[0] == b.world.user.name.split()[0]]
    other = twin_pool[0] if twin_pool else b.world.colleagues()[-1]
    _request_mail(b, senders[1], "update", things[n + 1], local(b, 3, 17), to=[other.email, b.world.user.email])
    b.ask("Please go through my unread mail and add a to-do to my Follow-ups list for each thing someone asked me to "
          "do, titled with what to do and due on the day they need it (the day before is fine too), labelled 'mail'. "
          "Nothing for FYI mail or requests meant for someone else; if I already have a to-do for a request, don't add "
          "another, and leave my existing to-dos as they are.", "To-dos from mail", "mail_triage",
          "todo_triage_from_mail")

    def act() -> None:
        b.call("search_emails", query="is:unread")
        for r in b.data["mail"]["messages"]:
            if not r["read"]:
                b.call("read_email", id=r["id"])
        b.call("list_tasks", task_list="Follow-ups")
        for mid, action, thing, due in requests:
            b.call("create_task", title=f"{action.capitalize()} the {thing}", task_list="Follow-ups",
                   due=due.isoformat(), labels=["mail"], source=mid, _free=("source",))  # source: not asked for
            b.check({"kind": "record_exists", "table": "todo.tasks", "new_only": True, "where": {
                "title": {"contains": thing, "ignore_case": True}, "list_id": "list-followups",
                "due_date": {"one_of": [(due - timedelta(days=1)).isoformat(), due.isoformat()]},
                "labels": {"includes": ["mail"]}}, "description": f"a to-do for the {thing}, due by {due}"})
        b.check({"kind": "record_exists", "table": "todo.tasks", "new_only": True, "where": {}, "count": {"equals": n},
                 "description": f"exactly {n} new to-dos (none for FYI mail, others' requests or tracked ones)"})
        b.guard({"kind": "record_exists", "table": "todo.tasks", "maintain": True, "where": {
            "id": tracked_id, "due_date": (tracked_due.date() - timedelta(days=1)).isoformat()},
            "description": "the to-do already tracking a request keeps its due date"})
        b.allow("todo.tasks:task-*")
        b.answer(f"Added {n} to-dos to Follow-ups: " + "; ".join(
            f"{a} the {t} (due {d})" for _, a, t, d in requests) + f". The {tracked_thing} review was already on "
            "your list, and the FYI mail and the request to someone else need nothing from you.")

    return act


@template("cross_service", "meeting_notes_to_attendees")
def meeting_notes_to_attendees(b: SpecBuilder, size: int = 1) -> Act:
    """Share yesterday's meeting notes, view-only and by mail, with the people who attended (not one who declined,
    not last week's attendees of the same meeting); an older note of the same meeting is a distractor."""
    b.use("calendar", "contacts", "notes", "mail")
    background_mail(b, 2)
    me = b.world.user.email
    pool = [p for p in b.world.colleagues()]
    b.rng.shuffle(pool)
    k = 2 + min(size, 2)
    attended, declined, last_week = pool[:k], pool[k], pool[k + 1:k + 3]
    if len(last_week) < 1:
        raise TemplateError("too few colleagues for a distractor meeting")
    title = f"{b.rng.choice(TOPICS).capitalize()} review"
    back = 1
    while local(b, -back, 10).weekday() >= 5:  # the last working day's meeting
        back += 1
    yesterday = local(b, -back, b.rng.choice((10, 11, 14, 15)))
    when = "yesterday's" if back == 1 else f"{yesterday:%A}'s"
    eid = add_event(b, title, yesterday, 60, me, [me, *(p.email for p in attended), declined.email])
    row = next(r for r in b.table("calendar", "events") if r["id"] == eid)
    row["attendees"] = [{**a, "response": "declined"} if a["email"] == declined.email else a for a in row["attendees"]]
    week_ago = yesterday - timedelta(days=7)
    add_event(b, title, week_ago, 60, me, [me, *(p.email for p in last_week), attended[0].email])
    decision = f"We agreed to {b.rng.choice(('move', 'cut', 'extend', 'freeze'))} the {b.maker.word()} budget"
    notes = b.table("notes", "notes")
    nid, old = b.next_id("note"), b.next_id("note")
    notes.append({"id": nid, "title": f"{title} {yesterday:%d %B}", "tags": ["meeting"],
                  "body": f"## Decisions\n- {decision}.\n\n## Actions\n- {b.maker.sentence()}.\n",
                  "created": yesterday.isoformat(), "updated": (yesterday + timedelta(hours=1)).isoformat()})
    notes.append({"id": old, "title": f"{title} {week_ago:%d %B}", "tags": ["meeting"],
                  "body": f"## Decisions\n- {b.maker.sentence()}.\n", "created": week_ago.isoformat(),
                  "updated": (week_ago + timedelta(hours=1)).isoformat()})
    notes.append({"id": b.next_id("note"), "title": f"{b.maker.word().capitalize()} ideas", "body": b.maker.paragraph()})
    b.ask(f"Please share my notes from {when} '{title}' with everyone who attended it (not anyone who declined), "
          f"view only, and make sure each of them gets the notes by email.", f"Share the {title} notes",
          "cross_service", "meeting_notes_to_attendees")

    def act() -> None:
        emails = [p.email for p in attended]
        b.call("list_events", query=title, start=(yesterday - timedelta(days=1)).isoformat(),
               end=(yesterday + timedelta(days=1)).isoformat())
        b.call("get_event", id=eid)
        b.call("search_notes", query=title)
        b.call("get_note", id=nid)
        b.call("share_note", id=nid, people=emails, permission="view", notify_by_email=True,
               message=f"Notes from {when} meeting.", _free=("message",))
        b.check({"kind": "record_exists", "table": "notes.notes", "where": {
            "id": nid, "collaborators.email": {"includes": emails, "count": {"equals": len(emails)}},
            "collaborators.permission": {"excludes": ["edit"]}},
            "description": "the notes are shared, view only, with exactly the attendees"})
        for e in emails:
            b.check({"kind": "mail_sent", "to": [e], "body": {"contains": decision},
                     "description": f"{e} got the notes by mail"})
        b.guard({"kind": "tool_not_called", "tool": "*", "args": {"to": {"includes": [declined.email]}},
                 "description": f"{declined.name} declined the meeting and gets no mail"})
        b.allow(f"notes.notes:{nid}", "mail.messages:msg-*")
        b.answer(f"Shared '{title}' notes view-only with {', '.join(p.name for p in attended)} and mailed them; "
                 f"{declined.name} declined, so I left them out.")

    return act
