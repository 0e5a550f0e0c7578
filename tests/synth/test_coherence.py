"""Coherence rules in validation (synth.coherence): a hand-broken spec fails with one clear problem per rule,
and a balanced mix of 60 environments passes every rule."""

from __future__ import annotations

import pytest

from synth.coherence import RULES, violations
from synth.generate import compose, generate_mixed
from synth.pipeline import plan
from synth.spec import parse_spec
from synth.validate import validate_spec


@pytest.fixture(scope="module")
def base_doc() -> dict:
    return compose("scheduling", 5, prof_id="accounting", loc_code="en-US").to_document()


def _broken(doc: dict) -> dict:
    """One violation of every rule, each in its own record."""
    people = doc["world"]["people"]
    user = next(p for p in people if p["role"] == "user")
    a, b = [p for p in people if p["role"] == "colleague"][:2]
    b["name"] = a["name"]  # same_name
    first, last = a["name"].split(" ", 1)
    people.append({**a, "name": f"{first} {last}s", "email": "plural.lookalike@" + user["email"].split("@")[1]})
    init = doc["initial"]
    init.setdefault("contacts", {}).setdefault("people", []).append({
        "email": people[-1]["email"], "name": people[-1]["name"], "timezone": "America/Chicago",
        "phone": "+44 20 7946 0958", "location": "12 High Street, Leeds LS1 4AB"})
    init.setdefault("calendar", {}).setdefault("events", []).append({
        "id": "cal-weekend", "title": "Budget review", "start": "2026-03-07T10:00:00-06:00",
        "end": "2026-03-07T11:00:00-06:00", "timezone": "America/Chicago", "organizer": user["email"],
        "attendees": [{"email": a["email"], "response": "accepted"}]})
    rows = init["files"]["files"]
    doc_row = next(r for r in rows if "**Total:" in r["content"])
    doc_row["content"] = doc_row["content"].replace("**Total: $", "**Total: $1")
    return doc


def test_a_hand_broken_spec_fails_with_a_clear_message_per_rule(base_doc: dict) -> None:
    assert violations(parse_spec(base_doc)) == []
    doc = _broken(parse_spec(base_doc).to_document())
    for p in doc["world"]["people"]:  # the user's calendar is in Chicago for the weekend check
        if p["role"] == "user":
            p["timezone"] = "America/Chicago"
    found = violations(parse_spec(doc))
    rules = {rule for _, rule, _ in found}
    assert rules == set(RULES)
    report = validate_spec(doc, mutants=False)
    lines = [f for f in report.feedback if f.check == "coherence"]
    by_rule: dict = {}
    for f in lines:
        by_rule.setdefault(f.problem.split(":")[0], f)
    assert set(by_rule) == set(RULES)
    assert "Saturday" in by_rule["meeting_time"].problem and by_rule["meeting_time"].path.startswith("initial.calendar")
    assert "America/Chicago (US)" in by_rule["phone_format"].problem
    assert "same full name" in by_rule["same_name"].problem and by_rule["same_name"].path.startswith("world.people")
    assert "'s' added" in by_rule["lookalike_plural"].problem
    assert any(f.path.startswith("initial.files.files") and "is not the total" in f.problem for f in lines)
    assert "address" in by_rule["address_format"].problem
    assert all(f.hint for f in lines)


def test_recorded_figures_must_agree(base_doc: dict) -> None:
    doc = parse_spec(base_doc).to_document()
    doc["metadata"]["figures"] = [{"balance": {"total": 100.0, "paid": 30.0, "due": 60.0}},
                                  {"document": "/nowhere.md", "total": 1.0}]
    problems = [p for _, r, p in violations(parse_spec(doc)) if r == "amounts"]
    assert any("less paid" in p for p in problems) and any("/nowhere.md" in p for p in problems)


def test_marking_the_namesake_as_the_point_allows_it(base_doc: dict) -> None:
    doc = parse_spec(base_doc).to_document()
    cols = [p for p in doc["world"]["people"] if p["role"] == "colleague"]
    cols[1]["name"] = cols[0]["name"]
    assert any(r == "same_name" for _, r, _ in violations(parse_spec(doc)))
    doc["metadata"]["coherence_allow"] = ["same_name"]
    assert not any(r == "same_name" for _, r, _ in violations(parse_spec(doc)))


def test_a_balanced_mix_of_60_passes_every_rule() -> None:
    bad = []
    for cap, seed in plan(None, 60, 3):
        spec = generate_mixed(cap, seed)
        bad += [f"{spec.id} {path}: {rule}: {problem}" for path, rule, problem in violations(spec)]
    assert bad == []


def test_background_mail_is_about_one_thing_from_greeting_to_signature() -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from synth.procedural.builder import SpecBuilder
    from synth.procedural.prose import OBJECTS
    from synth.procedural.templates.common import background_mail
    from synth.procedural.world import WorldMaker

    for seed in range(20):
        maker = WorldMaker(seed, "test")
        world = maker.world()
        b = SpecBuilder(maker, world, datetime(2026, 3, 2, 9, tzinfo=ZoneInfo(world.user.timezone)), seed)
        background_mail(b, 4)
        user = b.world.user.name.split()[0]
        for m in b.table("mail", "messages"):
            subject, body = m["subject"], m["body"]
            (thing,) = [x for x in OBJECTS if x in subject.lower()] or [None]
            assert thing and thing in body, (subject, body)  # the subject names what the body is about
            assert ":" not in subject.split(" ")[0]  # no "Training: ..." label unrelated to the text
            sender = next(p for p in b.world.people if p.email == m["sender"])
            assert body.splitlines()[-1] == sender.name.split()[0]
            assert user in body.splitlines()[0] or body.startswith("Hi all")
