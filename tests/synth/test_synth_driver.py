"""Turn semantics: the scripted user, hidden facts, follow-ups, world events, checkpoints."""

from __future__ import annotations

from datetime import timedelta

from synth import ScriptedUser, SpecDriver, run_reference
from synth.procedural import generate
from synth.spec import UserSimulator


def test_scripted_user_reveals_by_whole_keyword_only() -> None:
    sim = UserSimulator.model_validate({
        "facts": [{"name": "room", "value": "B12", "reveal_keywords": ["room", "where"], "answer": "Room B12."},
                  {"name": "size", "value": "8", "reveal_keywords": ["how many"], "answer": "About 8 people."}],
        "followups": [{"turn": 2, "text": "Also invite Sam."}],
        "default_reply": "Go ahead.",
    })
    user = ScriptedUser(sim)
    assert user.reply("Which ROOM should I book?", 1) == ("Room B12.", [sim.facts[0]])
    assert user.reply("Shall I use the bedroom?", 1)[0] == "Go ahead."  # 'room' inside a word does not count
    text, facts = user.reply("Where, and how many people?", 2)
    assert text == "Room B12. About 8 people. Also invite Sam." and len(facts) == 2
    assert user.reply("Where?", 1, withhold=True) == ("Go ahead.", [])


def test_facts_fill_placeholders_or_fall_back_to_decoys() -> None:
    spec = generate("clarification", 0, template="ticket_details_from_user")
    with_answers = run_reference(spec)
    without = run_reference(spec, withhold_answers=True)
    created = [c.after for c in with_answers.workspace.diff() if c.table == "tickets.tickets" and c.kind == "added"]
    blind = [c.after for c in without.workspace.diff() if c.table == "tickets.tickets" and c.kind == "added"]
    values = {f.name: f for f in spec.user_simulator.facts}
    assert created[0].priority == values["priority"].value and created[0].assignee == values["owner"].value
    assert blind[0].priority == values["priority"].decoy and blind[0].assignee == values["owner"].decoy
    assert spec.evaluate(with_answers.workspace, with_answers.final_answer).passed
    assert not spec.evaluate(without.workspace, without.final_answer).passed


def test_turn_event_fires_when_its_turn_opens_and_is_silent() -> None:
    spec = generate("dynamic_world", 0, template="data_changed_before_mail")
    event = spec.events[0]
    driver = SpecDriver(spec)
    driver.start()
    key = event.changes[0]["key"]
    before = driver.ws.table("files.files")[key].content
    reply = driver.message("Done.")
    assert driver.turn == 1 and event.id in driver.fired
    assert driver.ws.table("files.files")[key].content != before
    assert reply == spec.user_simulator.followups[0].text  # silent: nothing announced
    kinds = [e.kind for e in driver.ws.events()]
    assert kinds == ["message", "message", "world", "message"]


def test_timed_announced_event_and_checkpoint_resume() -> None:
    spec = generate("file_management", 2)
    at = spec.now + timedelta(seconds=2)
    path = spec.initial["files"]["files"][0]["path"]
    spec = _with_timed_event(spec, at, path)
    driver = SpecDriver(spec)
    driver.start()
    cp = driver.checkpoint()
    driver.call("list_directory", {"path": "/"})
    driver.call("list_directory", {"path": "/"})
    assert path in driver.ws.table("files.files")  # not yet due before the 3rd action
    driver.call("list_directory", {"path": "/"})
    assert path not in driver.ws.table("files.files")
    assert "Heads up" in driver.message("Status?")
    driver.resume(cp)
    assert path in driver.ws.table("files.files") and not driver.fired and driver.turn == 0


def _with_timed_event(spec, at, path):  # type: ignore[no-untyped-def]
    from synth.spec import WorldEvent

    ev = WorldEvent(id="late", at_time=at, announce="Heads up: a file was removed.",
                    changes=[{"op": "delete", "table": "files.files", "key": path}])
    return spec.model_copy(update={"events": [ev]})


def test_reference_runs_are_byte_for_byte_reproducible() -> None:
    spec = generate("cross_service", 7)
    a, b = run_reference(spec), run_reference(spec)
    assert a.workspace.to_json() == b.workspace.to_json()
    assert [e.to_json() for e in a.workspace.events()] == [e.to_json() for e in b.workspace.events()]
