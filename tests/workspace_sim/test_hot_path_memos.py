"""The memos on validation's hot paths answer exactly what the functions they front compute afresh: e-mail
address checks and normalisation, record hash contributions, scope matching and time parsing, on the first
call and on every repeat (the memo's hit path), for arbitrary input."""

from __future__ import annotations

import fnmatch
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workspace_sim.text import people
from workspace_sim.core.diff import RecordChange
from workspace_sim.predicates import conditions
from workspace_sim.predicates.scope import in_scope
from workspace_sim.services.contacts import Person
from workspace_sim.core.state import State, _entry_digest, build_state, entry_digest

_ADDRESS_CHARS = st.sampled_from(list("abcXYZ09.-_+@ ,;\t\u00a0\u2003é"))
addresses = st.one_of(st.text(_ADDRESS_CHARS, max_size=30),
                      st.builds(lambda a, b, c: f"{a}@{b}.{c}", st.text("abz.", min_size=0, max_size=6),
                                st.text("ab-9", min_size=0, max_size=6), st.text("comX1", min_size=0, max_size=4)))


def _normalized_afresh(value: object) -> str:
    problem = people._email_problem(value)
    if problem is not None:
        raise ValueError(f"e-mail address {value!r} {problem}")
    return str(value).strip().lower()


@settings(max_examples=300, deadline=None)
@given(addresses)
def test_email_memo_agrees_with_the_check_on_every_call(a: str) -> None:
    for _ in range(2):  # the second call is answered from the memo
        assert people.email_problem(a) == people._email_problem(a)
        try:
            expected: str | Exception = _normalized_afresh(a)
        except ValueError as e:
            expected = e
        if isinstance(expected, Exception):
            with pytest.raises(ValueError) as got:
                people.normalize_email(a)
            assert str(got.value) == str(expected)
        else:
            assert people.normalize_email(a) == expected


def test_email_memo_leaves_non_strings_and_subclasses_to_the_check() -> None:
    class Odd(str):
        def strip(self, *a: object) -> str:  # a subclass could answer differently: never memoised
            return "x@y.org"

    assert people.email_problem(5) == "must be a string, got int"
    assert people.email_problem(Odd("not an address")) is None
    assert people.email_problem("not an address") is not None
    with pytest.raises(ValueError, match="must be a string"):
        people.normalize_email(None)


def test_email_memo_stays_bounded() -> None:
    for i in range(people._MEMO_SIZE + 10):
        people.normalize_email(f"user{i}@example.com")
    assert len(people._PROBLEMS) <= people._MEMO_SIZE and len(people._NORMAL) <= people._MEMO_SIZE
    assert people.normalize_email("User5@Example.com ") == "user5@example.com"


def _in_scope_afresh(change: RecordChange, scope: str) -> bool:
    target, _, glob = scope.partition(":")
    if target == "files" and glob:
        return change.service == "files" and fnmatch.fnmatchcase(change.key, glob)
    if "." in target:
        if change.table != target:
            return False
    elif change.service != target:
        return False
    return not glob or fnmatch.fnmatchcase(change.key, glob)


_KEY = st.text(st.sampled_from(list("ab/.-*?[]!1")), max_size=8)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["files.entries", "mail.messages", "tickets.tickets", "files.x"]), _KEY,
       st.sampled_from(["files", "mail", "tickets", "files.entries", "mail.messages", "tickets.tickets", "crm"]),
       st.one_of(st.none(), _KEY))
def test_in_scope_agrees_with_fnmatch(table: str, key: str, target: str, glob: str | None) -> None:
    change = RecordChange(table, key, "added", None, None)
    scope = target if glob is None else f"{target}:{glob}"
    for _ in range(2):
        assert in_scope(change, scope) == _in_scope_afresh(change, scope)


def test_entry_digest_memo_follows_the_table_and_key() -> None:
    p = Person(email="dana@example.com", name="Dana")
    a = entry_digest("contacts.people", "dana@example.com", p)
    assert a == entry_digest("contacts.people", "dana@example.com", p) == _entry_digest("contacts.people",
                                                                                      "dana@example.com", p)
    b = entry_digest("contacts.people", "other@example.com", p)  # the same record under another key
    assert b == _entry_digest("contacts.people", "other@example.com", p) and b != a
    assert entry_digest("x.y", "dana@example.com", p) == _entry_digest("x.y", "dana@example.com", p)
    # the incremental hash is the sum of fresh contributions
    s = build_state({"contacts.people": {"dana@example.com": p}}, datetime(2026, 1, 1))
    assert s.acc == _entry_digest("contacts.people", "dana@example.com", p) % (1 << 128)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.datetimes().map(lambda d: d.isoformat()), st.text(max_size=12),
                 st.datetimes().map(lambda d: d.isoformat() + "Z")))
def test_time_memo_agrees_with_parsing(text: str) -> None:
    for _ in range(2):
        assert conditions._to_datetime(text) == conditions._parse_datetime(text)


def _fresh_acc(state: "State") -> int:
    return sum(_entry_digest(t, k, r) for t, k, r in state.iter_records()) % (1 << 128)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.one_of(st.none(), st.sampled_from(["X", "Y"])),
                          st.booleans()), max_size=25))
def test_lazy_hash_equals_the_hash_worked_out_afresh(ops: list[tuple[str, str | None, bool]]) -> None:
    """Puts and deletes in any order, the hash read at random points (or only at the end), always equals the sum
    over the records the state holds."""
    people_ = {n: Person(email=f"{n}@example.com", name=n) for n in "abcd"}
    s = build_state({"contacts.people": {"a@example.com": people_["a"]}}, datetime(2026, 1, 1))
    states = [s]
    for who, name, read in ops:
        key = f"{who}@example.com"
        rec = None if name is None else Person(email=key, name=name)
        s = s.with_records({("contacts.people", key): rec})
        states.append(s)
        if read:
            assert s.acc == _fresh_acc(s)
    for st_ in reversed(states):
        assert st_.acc == _fresh_acc(st_)


def test_lazy_hash_of_a_long_history_is_worked_out_without_recursion() -> None:
    p = Person(email="a@example.com", name="a")
    s = build_state({}, datetime(2026, 1, 1))
    for i in range(20_000):
        s = s.with_records({("contacts.people", "a@example.com"): p if i % 2 == 0 else None})
    assert s.acc == _fresh_acc(s) == 0


def _diff_afresh(a: "State", b: "State") -> list[tuple[str, str, str]]:
    out = []
    for tname in sorted(set(a.tables.keys()) | set(b.tables.keys())):
        ta, tb = a.table(tname), b.table(tname)
        for key in sorted(set(ta.keys()) | set(tb.keys())):
            ra, rb = ta.get(key), tb.get(key)
            if ra is None and rb is not None:
                out.append((tname, key, "added"))
            elif rb is None and ra is not None:
                out.append((tname, key, "removed"))
            elif ra is not None and ra != rb:
                out.append((tname, key, "changed"))
    return out


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.sampled_from(list("abcdefgh")), st.sampled_from(["X", "Y"]), max_size=8),
       st.lists(st.tuples(st.sampled_from(["contacts.people", "x.people"]), st.sampled_from(list("abcdefghij")),
                          st.one_of(st.none(), st.sampled_from(["X", "Y", "Z"]))), max_size=12))
def test_diff_states_lists_every_change_in_order(start: dict[str, str], ops: list[tuple[str, str, str | None]]) -> None:
    from workspace_sim.core.diff import diff_states

    rows = {f"{k}@example.com": Person(email=f"{k}@example.com", name=v) for k, v in start.items()}
    a = build_state({"contacts.people": rows}, datetime(2026, 1, 1))
    b = a
    for table, who, name in ops:
        key = f"{who}@example.com"
        b = b.with_records({(table, key): None if name is None else Person(email=key, name=name)})
    got = [(c.table, c.key, c.kind) for c in diff_states(a, b)]
    assert got == _diff_afresh(a, b)
    assert [(c.table, c.key, c.kind) for c in diff_states(b, a)] == _diff_afresh(b, a)


def test_record_size_memo_and_copies() -> None:
    from workspace_sim.core.limits import _record_chars, record_chars

    p = Person(email="dana@example.com", name="Dana", title="Lead")
    assert record_chars(p) == record_chars(p) == _record_chars(p)
    entry_digest("contacts.people", p.email, p)
    q = p.model_copy(update={"name": "Dana Reyes-Longer"})  # what was remembered about p is not q's
    assert record_chars(q) == _record_chars(q) != record_chars(p)
    assert q.digest() != p.digest()
    assert entry_digest("contacts.people", p.email, q) == _entry_digest("contacts.people", p.email, q)
    same = p.model_copy()
    assert same.digest() == p.digest() and record_chars(same) == record_chars(p)
