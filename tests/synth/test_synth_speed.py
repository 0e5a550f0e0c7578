"""Validation's speed paths answer exactly what the plain paths do: grouped only_changed scopes, read sets
worked out late (`Workspace.defer_reads`), and the rest of synthesis's shortcuts (tests/synth/test_synth_validate_speed.py
holds the verdicts themselves fixed)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from synth.spec import run_reference
from synth.pipeline import plan
from synth.procedural import generate
from workspace_sim.core.diff import RecordChange
from workspace_sim.predicates.scope import covered_by, in_scope

_KEY = st.text(st.sampled_from(list("ab/.-*?[]!1")), max_size=6)
_TARGET = st.sampled_from(["files", "mail", "tickets", "files.entries", "mail.messages", "tickets.tickets", "crm"])
_SCOPE = st.builds(lambda t, g: t if g is None else f"{t}:{g}", _TARGET, st.one_of(st.none(), _KEY))


@settings(max_examples=300, deadline=None)
@given(st.lists(_SCOPE, min_size=1, max_size=5),
       st.lists(st.tuples(st.sampled_from(["files.entries", "mail.messages", "tickets.tickets", "crm.accounts"]), _KEY),
                max_size=6))
def test_covered_by_is_any_in_scope(scopes: list[str], changes: list[tuple[str, str]]) -> None:
    for _ in range(2):  # the first call builds the grouping, the second reads it back
        covers = covered_by(tuple(scopes))
        for table, key in changes:
            change = RecordChange(table, key, "added", None, None)
            assert covers(change) == any(in_scope(change, s) for s in scopes)


def test_deferred_read_sets_equal_eager_ones() -> None:
    """Every call's records read (Event.read), over reference runs of the mix, is the same whether a writing
    call works it out at once (the default) or when first asked (defer_reads)."""
    seen = 0
    for cap, seed in plan(None, 36, seed=50):
        spec = generate(cap, seed)
        reads = []
        for defer in (False, True):
            ws = spec.build_workspace()
            ws.defer_reads = defer
            run = run_reference(spec, ws.fork())
            assert run.workspace.defer_reads is defer  # a fork keeps the setting
            reads.append([(e.index, e.read) for e in run.workspace.events() if e.kind == "call"])
        assert reads[0] == reads[1], spec.id
        seen += sum(1 for _, r in reads[0] if r)
    assert seen > 20  # the runs do read records


def test_serial_synthesis_tunes_the_collector_and_puts_it_back() -> None:
    """A serial `synthesize` runs with the synthesis thresholds (as its workers do) and leaves the process's
    garbage collector as it found it; the specs are those of plain producer calls."""
    import gc

    from synth.pipeline import GC_THRESHOLD, procedural_attempt, synthesize

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    seen: list[tuple[int, int, int]] = []
    result = synthesize(None, 3, seed=5, on_attempt=lambda a: seen.append(gc.get_threshold()))
    assert seen == [GC_THRESHOLD] * 3
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    plain = [procedural_attempt(cap, seed).spec for cap, seed in plan(None, 3, seed=5)]
    assert [s.canonical_json() for s in result.specs] == [s.canonical_json() for s in plain if s is not None]


def test_a_worker_warm_up_tunes_the_collector() -> None:
    import gc

    from synth.pipeline import GC_THRESHOLD, restore_gc, warm_procedural

    before = gc.get_threshold()
    try:
        warm_procedural()
        assert gc.get_threshold() == GC_THRESHOLD and gc.get_freeze_count() > 0
    finally:
        restore_gc(before)
    assert gc.get_threshold() == before


def _loosened(doc: dict) -> list[dict]:
    """Copies of a spec document with fewer checks, so that some blind agents pass them."""
    import copy

    preds = doc["predicates"]
    success = [p for p in preds if p.get("kind") not in ("unchanged", "only_changed", "tool_not_called")
               and not p.get("maintain")]
    out = []
    for keep in (success[:1], [p for p in success if p.get("kind") != "answer"][:1]):
        if keep:
            d = copy.deepcopy(doc)
            d["predicates"] = [{k: v for k, v in p.items() if k not in ("where", "fields", "body", "subject")}
                               for p in keep]
            out.append(d)
    return out


def test_blind_verdicts_equal_playing_each_agent_afresh() -> None:
    """`blind_passes` (shared listings, blind_writer resumed from the opening, judged day by day) names exactly
    the agents that `play` (a fresh fork, the full evaluation) finds passing, over loosened specs of the mix."""
    from synth.blind_check import BLIND_AGENTS, blind_passes, play
    from synth.spec import parse_spec

    passing = 0
    for cap, seed in plan(None, 36, seed=300):
        doc = generate(cap, seed).to_document()
        for d in [doc, *_loosened(doc)]:
            try:
                spec = parse_spec(d)
            except Exception:
                continue
            base = spec.build_workspace()
            fresh = [name for name in BLIND_AGENTS if play(spec, name, base)[0]]
            assert blind_passes(spec, base) == fresh, spec.id
            passing += "blind_writer" in fresh
    assert passing >= 2  # the loosened specs do let the blind writer through


_TEXT = st.text(st.sampled_from(list("ab1_@.-/ :é٣²Ⅻ\n")), max_size=14)


@settings(max_examples=1500, deadline=None)
@given(st.text(st.sampled_from(list("ab1_@.-é٣")), max_size=3), _TEXT)
def test_whole_word_search_is_the_regex(value: str, text: str) -> None:
    import re

    from synth.answer_mutants import _named

    regex = re.search(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-]|\.\w)", text) is not None
    assert _named(value, text) == regex


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.integers(0, 400), st.integers(0, 2**32))
def test_speckles_are_the_randrange_choice_loop(width: int, height: int, count: int, seed: int) -> None:
    """The unrolled speckle draws give the pixels (and leave the generator where) the plain loop does."""
    import random

    from PIL import Image

    from synth.procedural.render import _SPECKS, speckle

    plain, fast = Image.new("RGB", (width, height), (236, 234, 228)), Image.new("RGB", (width, height), (236, 234, 228))
    a, b = random.Random(seed), random.Random(seed)
    px = plain.load()
    for _ in range(count):
        x, y = a.randrange(width), a.randrange(height)
        v = a.choice(_SPECKS)
        px[x, y] = (v, v, v)
    speckle(fast, b, count)
    assert plain.tobytes() == fast.tobytes() and a.random() == b.random()


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({}, optional={"name": st.text("Bc", min_size=1, max_size=3), "title": st.text(max_size=3),
                                           "phone": st.text(max_size=3), "notes": st.text(max_size=3)}))
def test_lazy_changed_fields_are_the_eager_ones(changes: dict) -> None:
    """A change's fields, worked out when first read, are the sorted (old, new) pairs of the fields that differ;
    equality, pickling and copies see them too."""
    import copy
    import pickle

    from workspace_sim.core.diff import record_change
    from workspace_sim.services.contacts import Person

    a = Person(email="a@example.com", name="A", title="t")
    b = a.evolve(**changes)
    ch = record_change("contacts.people", a.email, a, b)
    eager = {k: (getattr(a, k), getattr(b, k)) for k in sorted(type(a).model_fields) if getattr(a, k) != getattr(b, k)}
    if not eager:
        assert ch is None
        return
    for got in (pickle.loads(pickle.dumps(ch)), copy.deepcopy(ch), ch):
        assert got.fields == eager and list(got.fields) == sorted(eager)
        assert got == RecordChange("contacts.people", a.email, "changed", a, b, eager)
