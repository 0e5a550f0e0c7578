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
from .common import local

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
    a colleague's voicemail names another date."""
    b.use("files", "todo", "contacts")
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
    b.ask(f"{company} left me a {heard}; it is in /messages with another one. Please add a to-do to my Inbox titled "
          f"'Call back {company}', due on the new delivery date they give, with the order number and their callback "
          f"number in the notes.", f"Voicemail from {company}", CAP, "voicemail_to_task")
    digits = "".join(phone.split())
    phone_re = "(^|\\D)" + "[\\s.()-]*".join(digits) + "(\\D|$)"

    def act() -> None:
        b.call("list_directory", path="/messages")
        for who in ("supplier", "colleague") if first else ("colleague", "supplier"):
            b.call("read_media_file", path=paths[who][0])
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
        b.answer(f"Added 'Call back {company}' to your Inbox, due {delivery.date()} (the new delivery date), with "
                 f"order {order} and their number {phone}. The other message is about the team lunch.")

    return act
