"""Voice messages an agent has to listen to: a supplier's voicemail spoken by a local text-to-speech engine from
the world's own script (synth/procedural/speech.py), so the order number, the new delivery date and the callback
number are known by construction and exist only in the audio (and its transcript, the script, which an agent reads
only through the clip: `read_media_file`, `transcribe_audio`); a colleague's voicemail about something else is a
distractor. Where the engine is not installed the same messages are handwritten message slips (photos), and the
evidence's metadata carries the note that audio was skipped.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from .. import render, screens, speech
from ..builder import Act, SpecBuilder, TemplateError
from ..evidence_files import attach
from . import template
from .common import add_event, local

CAP = "media_evidence"
_log = logging.getLogger("coworkenv.synth")


def _spoken_digits(digits: str) -> str:
    return ", ".join(" ".join(group) for group in digits.split())


def _message(b: SpecBuilder, path_stem: str, script: str, slip: list[str], facts: list[str]) -> tuple[str, str]:
    """The message as a voice clip (or, without the engine, a photographed slip); returns (path, kind)."""
    level = b.rng.choice(render.LEVELS)
    seed = b.seed * 6151 + b.rng.randint(0, 9999)
    if speech.available():
        voice = b.rng.choice(speech.VOICES)
        clip = speech.wear(speech.speak(script, voice, b.rng.randint(145, 175), b.rng.randint(35, 65)), level, seed)
        attach(b, f"{path_stem}.wav", clip, "audio", facts, transcript=script)  # the script it was spoken from
        return f"{path_stem}.wav", "audio"
    _log.warning(speech.MISSING)
    attach(b, f"{path_stem}.png", render.png_bytes(screens.whiteboard(slip, level, seed, size=26)), "slip", facts)
    if facts:
        b.evidence[-1]["note"] = speech.MISSING
    return f"{path_stem}.png", "slip"


@template(CAP, "voicemail_to_task")
def voicemail_to_task(b: SpecBuilder, size: int = 1) -> Act:
    """A supplier left a voicemail moving an order's delivery: a to-do to call them back goes into the Inbox, due
    on the new delivery date, with the order number and the callback number in its notes, all only in the audio;
    a colleague's voicemail names another date. The request points at the folder (both messages heard) or names the
    supplier's file; the delivery may also be on the calendar at its old date (moved too), or a colleague who
    receives it may need the new date by mail."""
    b.use("files", "todo", "contacts")
    way, then = b.rng.choice(("folder", "file")), b.rng.choice(("none", "calendar", "mail"))
    companies = [c for c in b.rng.sample(b.maker.pools.companies, 8) if c.isascii()]
    if not companies:
        raise TemplateError("no plain company name")
    company = companies[0]
    caller = b.rng.choice([n for n in b.maker.pools.first_names if n.isascii()])
    order = f"{b.rng.randint(40, 98)}{b.rng.randint(10, 99)}"
    delivery = local(b, b.rng.randint(2, 9), 9)
    while delivery.weekday() >= 5:
        delivery += timedelta(days=1)
    phone = f"{b.rng.randint(200, 989)} {b.rng.randint(200, 989)} {b.rng.randint(1000, 9999)}"
    when = f"{delivery:%A}, {delivery:%B} {delivery.day}"
    script = (f"Hello, this is {caller} from {company}, calling about your order number {' '.join(order)}. "
              f"I'm sorry, the delivery has moved. It will now arrive on {when}. "
              f"If that does not work for you, please call me back on {_spoken_digits(phone)}. "
              f"Again, that is {_spoken_digits(phone)}. Thank you, bye.")
    colleague = b.world.colleagues()[0]
    other_day = local(b, b.rng.randint(2, 9), 12)
    while other_day.date() == delivery.date():
        other_day += timedelta(days=1)
    other = (f"Hi, it's {colleague.name.split()[0]}. Just a reminder that the team lunch is on "
             f"{other_day:%A}, {other_day:%B} {other_day.day}. See you there!")
    tag = b.rng.randint(100, 999)
    first = b.rng.random() < 0.5  # which of the two messages is listed first
    paths = {}
    for who in (("supplier", "colleague") if first else ("colleague", "supplier")):
        if who == "supplier":
            paths[who] = _message(b, f"/messages/message-{tag}{len(paths) + 1}", script,
                                  [f"{company} ({caller})", f"order {order}", f"arrives {delivery:%a %d %b}",
                                   f"call back {phone}"], [order, delivery.date().isoformat(), phone])
        else:
            paths[who] = _message(b, f"/messages/message-{tag}{len(paths) + 1}", other,
                                  [f"{colleague.name.split()[0]}: team lunch", f"{other_day:%a %d %b}"], [])
    b.table("todo", "lists").append({"id": "list-inbox", "name": "Inbox"})
    b.table("todo", "tasks").append({"id": b.next_id("todo"), "list_id": "list-inbox", "title": "Renew parking permit",
                                     "due_date": local(b, 12, 9).date().isoformat()})
    heard = "voicemail" if paths["supplier"][1] == "audio" else "phone message"
    old_day = local(b, b.rng.randint(1, 3), 9)
    while old_day.weekday() >= 5 or old_day.date() in (delivery.date(), other_day.date()):
        old_day += timedelta(days=1)
    receiver = b.world.colleagues()[-1]
    if then == "calendar":
        b.use("calendar")
        add_event(b, f"Delivery from {company}", old_day, 60, b.world.user.email, [b.world.user.email])  # no order no.
    if then == "mail":
        b.use("mail")
    where = (f"it is in /messages with another one" if way == "folder" else f"it is {paths['supplier'][0]}")
    more = {"none": "", "calendar": " The delivery is on my calendar at the old date; move it to the new one.",
            "mail": f" {receiver.name} ({receiver.department}) takes the delivery in, so email them the new date."}[then]
    b.ask(f"{company} left me a {heard}; {where}. Please add a to-do to my Inbox titled 'Call back {company}', due on "
          f"the new delivery date they give, with the order number and their callback number in the notes.{more}",
          f"Voicemail from {company}", CAP, "voicemail_to_task")
    digits = "".join(phone.split())
    phone_re = "(^|\\D)" + "[\\s.()-]*".join(digits) + "(\\D|$)"

    def act() -> None:
        if way == "folder":  # which message is the supplier's is only heard, so both are played
            b.call("list_directory", path="/messages")
            for who in ("supplier", "colleague") if first else ("colleague", "supplier"):
                b.call("read_media_file", path=paths[who][0])
        else:
            b.call("read_media_file", path=paths["supplier"][0])
        b.call("create_task", title=f"Call back {company}", task_list="Inbox", due=delivery.date().isoformat(),
               notes=f"Order {order}; call {phone}.")
        b.check({"kind": "record_exists", "table": "todo.tasks", "new_only": True, "where": {
            "title": {"contains": company.split()[0], "ignore_case": True}, "due_date": delivery.date().isoformat(),
            "notes": {"regex": f"(^|\\D){order}(\\D|$)"}},
            "description": f"a to-do to call {company} back, due {delivery.date()}, naming order {order}"})
        b.check({"kind": "record_exists", "table": "todo.tasks", "new_only": True, "where": {
            "title": {"contains": company.split()[0], "ignore_case": True}, "notes": {"regex": phone_re}},
            "description": f"the callback number {phone} in its notes"})
        b.check({"kind": "record_exists", "table": "todo.tasks", "new_only": True, "where": {}, "count": {"equals": 1},
                 "description": "exactly one new to-do"})
        b.allow("todo.tasks:task-*")
        if then == "calendar":
            _move_delivery(b, company, old_day, delivery)
        elif then == "mail":
            b.call("send_email", _free=("subject",), to=[receiver.email], subject=f"{company} delivery moved",
                   body=f"Hi {receiver.name.split()[0]}, the {company} delivery (order {order}) now arrives on {when}.")
            b.check({"kind": "mail_sent", "to": [receiver.email], "only_recipients": True,
                     "body": {"contains_any": [when, delivery.date().isoformat(), f"{delivery:%B} {delivery.day}"]},
                     "description": f"{receiver.name} was told the new delivery date, {delivery.date()}"})
            b.allow("mail.messages:msg-*")
        b.answer(f"Added 'Call back {company}' to your Inbox, due {delivery.date()} (the new delivery date), with "
                 f"order {order} and their number {phone}."
                 + (" The other message is about the team lunch." if way == "folder" else "")
                 + {"none": "", "calendar": " I moved the delivery on your calendar to that day.",
                    "mail": f" {receiver.name} has the new date."}[then])

    return act


def _move_delivery(b: SpecBuilder, company: str, old_day, delivery) -> None:  # type: ignore[no-untyped-def]
    """The delivery's calendar entry, still at the old date, moved to the day the voicemail gives (same hour)."""
    found = b.call("list_events", query=company, start=b.now.isoformat(), end=(b.now + timedelta(days=14)).isoformat())
    eid = next(e["id"] for e in found["events"] if e["title"] == f"Delivery from {company}")
    new = delivery.replace(hour=old_day.hour, minute=0)
    b.call("update_event", _free=("end",), id=eid, start=new.isoformat(), end=(new + timedelta(hours=1)).isoformat())
    day = delivery.replace(hour=0, minute=0)
    b.check({"kind": "event_exists", "title": {"contains": company}, "new_only": False, "starts_after": day.isoformat(),
             "ends_before": (day + timedelta(days=1)).isoformat(),
             "description": f"the delivery's calendar entry is on {delivery.date()} now"})
    b.allow(f"calendar.events:{eid}")
