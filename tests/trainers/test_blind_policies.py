"""The blind baselines (spray, first_pick, blind_writer, answer_only): what each does, determinism, and that they
fail generated environments strictly."""

from __future__ import annotations

import json

import pytest

from synth.procedural import generate
from trainers.episodes.policies import POLICY_NAMES, PolicyConfigError, make_policy
from synth.blind_check import first_of_type, pick, read_only_tools
from synth.spec import parse_spec
from trainers.episodes.policies.blind import BLIND_POLICIES
from trainers.episodes.runner import run_episode

BLIND = tuple(BLIND_POLICIES)


def calls(rec) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(tc["function"]["name"], json.dumps(tc["function"]["arguments"], sort_keys=True))
            for m in rec.messages for tc in m.get("tool_calls") or []]


@pytest.fixture(scope="module")
def reply_env():  # type: ignore[no-untyped-def]
    return generate("mail_triage", 23, template="reply_with_figure")


def test_blind_policies_are_registered_and_take_no_settings() -> None:
    assert set(BLIND) <= set(POLICY_NAMES)
    with pytest.raises(PolicyConfigError, match="policy spray has no setting"):
        make_policy("spray", calls_per_turn=1)


@pytest.mark.parametrize("name", BLIND)
def test_each_blind_policy_is_deterministic_and_fails_strictly(reply_env, name: str) -> None:  # type: ignore

    a, b = run_episode(reply_env, make_policy(name)), run_episode(reply_env, make_policy(name))
    assert calls(a) == calls(b) and a.messages == b.messages
    assert a.complete and not a.passed and a.final.evaluation["strict"] is False  # type: ignore[union-attr]


def test_spray_lists_everything_then_mails_everyone_it_saw(reply_env) -> None:  # type: ignore[no-untyped-def]
    rec = run_episode(reply_env, make_policy("spray"))
    made = calls(rec)
    read_only = read_only_tools()
    listings = [n for n, _ in made if n in read_only]
    assert listings and len(listings) == len(set(listings)) and all(args == "{}" for n, args in made if n in read_only)
    sends = [json.loads(args) for n, args in made if n == "send_email"]
    seen = " ".join(m["content"] for m in rec.messages if m["role"] == "tool")
    assert len(sends) == 1 and len(sends[0]["to"]) > 1 and all(a in seen.lower() or a in reply_env.request.lower()
                                                                for a in sends[0]["to"])


def test_answer_only_never_writes_and_blind_writer_never_reads(reply_env) -> None:  # type: ignore[no-untyped-def]
    read_only = read_only_tools()
    assert all(n in read_only for n, _ in calls(run_episode(reply_env, make_policy("answer_only"))))
    written = calls(run_episode(reply_env, make_policy("blind_writer")))
    assert written and not any(n in read_only for n, _ in written)


def test_first_pick_replaces_each_value_by_the_first_of_its_type() -> None:
    first = first_of_type(["From: ana@acme.com on 2026-03-01, ticket OPS-7, /reports/q1.csv 12 items",
                            "bob@acme.com OPS-9 2026-04-01 /a.txt"])
    assert first["email"] == "ana@acme.com" and first["id:ops"] == "OPS-7" and first["date"] == "2026-03-01"
    picked = pick({"to": ["zed@acme.com"], "key": "OPS-12", "path": "/x/y.csv", "n": 3,
                    "body": "Due 2026-05-05 for OPS-3"}, first)
    assert picked == {"to": ["ana@acme.com"], "key": "OPS-7", "path": "/reports/q1.csv", "n": 12,
                      "body": "Due 2026-03-01 for OPS-7"}


def test_first_pick_replaces_values_inside_free_text_too() -> None:
    """The reference's answer is not copied: its phone numbers, URLs, people's names and figures inside the text
    become the first of their type seen, so first_pick cannot pass on what the reference found."""
    names = ["Bob Lee", "Dana Reyes"]
    first = first_of_type(["Dana Reyes <dana@acme.com> +1-555-123-4567 https://a.example/x 3.50 for 12 seats",
                           "Bob Lee +1-999-000-1111 https://b.example/y 88.10"], names)
    assert (first["name"], first["phone"], first["url"], first["decimal"], first["number"]) == (
        "Dana Reyes", "+1-555-123-4567", "https://a.example/x", "3.50", "12")
    text = "Bob Lee (+1-999-000-1111) quoted 88.10 for 40 seats, see https://b.example/y and /q/r.md."
    assert pick(text, first, names) == ("Dana Reyes (+1-555-123-4567) quoted 3.50 for 12 seats, see "
                                        "https://a.example/x and /unknown.md.")  # no path seen: a stand-in
    assert pick({"total": 88.1, "seats": 40, "note": "42.00"}, first, names) == {"total": 3.5, "seats": 12,
                                                                                "note": "3.50"}


def test_a_value_of_a_type_never_seen_becomes_a_stand_in_not_the_references_literal() -> None:
    """A listing that shows names and no full path (directory_tree) gives first_pick no path to pick: the
    reference's path is kept only when the agent was shown it, else a stand-in of its type replaces it; the same
    for every other type (address, id, date, phone, URL, number)."""
    first = first_of_type(["inbox/\n  q1-report.csv\n  notes.txt"])
    assert "path" not in first and not any(k.startswith("file:") for k in first)
    args = {"source": "/inbox/q1-report.csv", "destination": "/reports/q1-report.csv"}
    assert pick(args, first) == {"source": "/unknown.csv", "destination": "/unknown.csv"}
    assert pick(args, first, visible="Move /inbox/q1-report.csv please") == {
        "source": "/inbox/q1-report.csv", "destination": "/unknown.csv"}
    unseen = {"to": ["zed@acme.com"], "key": "OPS-12", "n": 7, "when": "2026-05-05", "x": 2.5,
              "body": "Call +1-555-123-4567 or see https://q.example/r about OPS-3 on 2026-05-05: 41 left"}
    assert pick(unseen, {}) == {"to": ["someone@example.com"], "key": "OPS-0", "n": 1, "when": "2000-01-01",
                                "x": 1.0, "body": "Call +1 555 0100 or see https://example.com/ about OPS-0 on "
                                                  "2000-01-01: 1 left"}
    shown = "zed@acme.com wrote about OPS-12"
    assert pick(unseen, {}, visible=shown)["to"] == ["zed@acme.com"] and pick(unseen, {}, visible=shown)["key"] == "OPS-12"


def test_first_pick_fails_a_file_move_whose_paths_no_listing_shows() -> None:
    """The LLM tests' repaired file move: directory_tree shows names, so first_pick has no path of its type and
    must not send the reference's (it passed when it did); validation with the blind check accepts the spec."""
    from synth.blind_check import blind_passes, play
    from synth.validate import validate_spec
    from tests.synth.test_synth_llm import REPAIRED

    spec = parse_spec(REPAIRED)
    passed, driver, _ = play(spec, "first_pick")
    moves = [e.args for e in driver.ws.events() if e.tool == "move_file"]
    assert not passed and moves and moves[0]["source"] != "/inbox/q1-report.csv"
    assert blind_passes(spec, spec.build_workspace()) == []
    assert validate_spec(spec).ok
