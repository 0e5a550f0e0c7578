"""The key-facts judge reads a text by its structure (issue 33, item 4): clauses never cut inside a URL, a time, a
ratio, an id or a number; sentence ends skip abbreviations and list numbers; full-width punctuation is a boundary
without a space and never part of a number; an item and its details on the lines below it, or an answer keyed by
question number, bind; phone numbers match however spaced; a wrong candidate is matched word for word. Judged
through `judged` predicates on a workspace (the library's evaluate path), in English and Chinese."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.predicates import evaluate, parse_predicates
from workspace_sim.predicates.judge import mentions, normalise
from workspace_sim.predicates.segments import Layout, prepare

USER = "ana@acme.com"


def ws() -> Workspace:
    return Workspace.create(WorkspaceConfig(user=USER, services=["mail", "contacts"]), {
        "mail": {"accounts": [{"email": USER, "name": "Ana"}]},
        "contacts": {"people": [{"email": USER, "name": "Ana"}]}})


def bound(entity: Any, value: Any, question: int | None = None) -> dict[str, Any]:
    return {"entity": entity, "value": value, **({"question": question} if question else {})}


def passes(criteria: list[dict[str, Any]], answer: str) -> bool:
    return evaluate(parse_predicates([{"kind": "judged", "criteria": criteria}]), ws(), answer).passed


PAIRS = [{"requirement": "Acme's owner", "key_facts": [bound("Acme", "Dana")]},
         {"requirement": "Hooli's owner", "key_facts": [bound("Hooli", "Bo")]}]
LARGEST = [{"requirement": "The largest account", "key_facts": [bound(["largest", "最大"], "Globex", 1)],
            "excludes": [bound(["largest", "最大"], x, 1) for x in ("Initech", "Umbrella")]},
           {"requirement": "The Q3 total", "key_facts": [bound(["total", "总额"], ["42,000"], 2)],
            "excludes": [bound(["total", "总额"], "41,000", 2)]}]
PHONE = [{"requirement": "Dana's phone", "key_facts": [bound("Dana Reyes", "+1 555 010 2030")],
          "excludes": [bound("Dana Reyes", "+1 555 010 9999")]},
         {"requirement": "Bo's phone", "key_facts": [bound("Bo Chen", "+1 555 010 9999")]}]
VERSIONS = [{"requirement": "v3.0's date", "key_facts": [bound("v3.0", "4月5日")]},
            {"requirement": "v3.1's date", "key_facts": [bound("v3.1", "5月6日")]}]

# (criteria, right answers, wrong answers): each right one was rejected before the layout, each wrong one is a
# swapped pair, a kitchen sink or a wrong candidate
CASES: list[tuple[list[dict[str, Any]], list[str], list[str]]] = [
    (PAIRS, ["Acme：Dana；Hooli：Bo", "- Acme: renewal due May 3. Owner: Dana.\n- Hooli: renewal due June 1. Owner: Bo.",
             "Acme\nOwner: Dana\n\nHooli\nOwner: Bo", "Acme 由 Dana 负责；Hooli 由 Bo 负责。"],
     ["Acme：Bo；Hooli：Dana", "- Acme: renewal due May 3. Owner: Bo.\n- Hooli: renewal due June 1. Owner: Dana.",
      "Acme\nOwner: Bo\n\nHooli\nOwner: Dana", "Acme 由 Bo 负责；Hooli 由 Dana 负责。"]),
    (VERSIONS, ["v3.0，4月5日；v3.1，5月6日。", "v3.0：4月5日\nv3.1：5月6日"],
     ["v3.0，5月6日；v3.1，4月5日。", "v3.0：5月6日\nv3.1：4月5日"]),
    (LARGEST, ["Q1: Globex\nQ2: 42 000", "1. Globex (420,000 in revenue)\n2. 42,000", "问题1：Globex\n问题2：42000",
               "1.\nGlobex.\n\n2.\nThe total is 42,000."],
     ["Q1: Initech\nQ2: 42 000", "1. 42,000\n2. Globex", "问题1：Globex、Initech\n问题2：42000", "1. Globex\n2. 41,000"]),
    (PHONE, ["Dana Reyes\nPhone: +1 555 010 2030\n\nBo Chen\nPhone: +1 (555) 010-9999",
             "Dana Reyes: +15550102030; Bo Chen: +1 555 0109999."],
     ["Dana Reyes\nPhone: +1 555 010 9999\n\nBo Chen\nPhone: +1 555 010 2030", "Dana Reyes: +15550109999."]),
    ([{"requirement": "OPS-12 goes to Dr. Chen", "key_facts": [bound("OPS-12", "Chen")], "excludes": [bound("OPS-12", "Li")]},
      {"requirement": "OPS-13 to Mr. Li", "key_facts": [bound("OPS-13", "Li")]}],
     ["OPS-12 goes to Dr. Chen. Mr. Li takes OPS-13.", "OPS-12: Dr. Chen, e.g. for the audit. OPS-13: Mr. Li."],
     ["OPS-12 goes to Mr. Li. Dr. Chen takes OPS-13."]),
    ([{"requirement": "The migration is complete", "key_facts": ["complete"], "excludes": ["completed", "pending"]}],
     ["The migration is complete.", "迁移 complete。"], ["The migration completed.", "Complete, or pending."]),
    ([{"requirement": "The largest account", "key_facts": [bound("largest", "Globex")],
       "excludes": [bound("largest", x) for x in ("Initech", "Umbrella")]}],
     ["The largest account is Globex.\nInitech is smaller.", "Largest account:\nGlobex (420,000)\nOthers: Initech, Umbrella"],
     ["Largest account:\nGlobex\nInitech\nUmbrella", "Largest account: Globex, Initech, Umbrella"]),
    ([{"requirement": "Standup time", "key_facts": [bound("standup", "10:30")], "excludes": [bound("standup", "11:00")]},
      {"requirement": "Review time", "key_facts": [bound("review", "11:00")]},
      {"requirement": "Cites the page", "key_facts": [bound("KB-12", "https://kb.acme.com/a/12?x=1,2")]}],
     ["Standup: 10:30, review: 11:00. KB-12: https://kb.acme.com/a/12?x=1,2, see also KB-9."],
     ["Standup: 11:00, review: 10:30. KB-12: https://kb.acme.com/a/12?x=1,2."]),
]


def test_right_answers_bind_and_wrong_ones_fail_by_structure() -> None:
    failures = []
    for criteria, goods, bads in CASES:
        failures += [f"right rejected: {a!r}" for a in goods if not passes(criteria, a)]
        failures += [f"wrong accepted: {a!r}" for a in bads if passes(criteria, a)]
    assert not failures, failures


def test_a_question_keyed_fact_names_its_question_and_round_trips() -> None:
    preds = parse_predicates([{"kind": "judged", "criteria": LARGEST}])
    rule = preds[0].criteria[0].rule()
    assert rule.key_facts[0].question == 1 and rule.key_facts[0].to_json()["question"] == 1
    ev = evaluate(preds, ws(), "Q1: Initech\nQ2: 42 000")
    assert "missing 'largest' / '最大' with 'Globex' (answer 1)" in ev.results[0].observed
    ev = evaluate(preds, ws(), "Q1: Globex or Initech\nQ2: 42 000")
    assert "wrong" in ev.results[0].observed and "'Initech' (answer 1)" in ev.results[0].observed


# --- invariants -------------------------------------------------------------------------------------------

WORD = st.sampled_from(["Acme", "owner", "the", "total", "is", "Dana", "review", "ready", "会议", "负责", "客户"])
TOKEN = st.one_of(
    st.builds(lambda h, m, s: f"{h}:{m:02d}" + (f":{s:02d}" if s is not None else ""),
              st.integers(0, 23), st.integers(0, 59), st.none() | st.integers(0, 59)),
    st.builds(lambda a, b: f"{a}:{b}", st.integers(1, 20), st.integers(1, 20)),
    st.builds(lambda p, n: f"{p}:{n}", st.sampled_from(["ABC", "urn", "OPS"]), st.integers(1, 9999)),
    st.builds(lambda host, path: f"https://{host}.example/{path}?a=1,2;b=3", st.sampled_from(["kb", "docs.acme"]),
              st.sampled_from(["x", "a/b.c", "p:q"])),
    st.builds(lambda a, b: f"{a},{b}", st.integers(0, 99), st.integers(0, 99)),  # a decimal comma
    st.builds(lambda u: f"{u}@acme.example", st.sampled_from(["dana.reyes", "bo", "ops+1"])))


@settings(max_examples=150, deadline=None)
@given(st.lists(WORD, max_size=4), TOKEN, st.lists(WORD, max_size=4), st.sampled_from([", ", "，", "; ", "；", ". ", "。"]))
def test_no_clause_is_cut_inside_a_url_time_ratio_id_number_or_address(before: list[str], token: str,
                                                                        after: list[str], mark: str) -> None:
    text = " ".join([*before, token]) + mark + " ".join(after)
    lay = Layout(text)
    tok = prepare(token)
    assert any(tok in c for s in lay.sentences for c in s.clauses()), (text, [s.clauses() for s in lay.sentences])
    assert mentions(text, token)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 999), st.integers(0, 999), st.sampled_from(["，", "、", "；", "：", "。", "！", "？"]),
       st.sampled_from(["", "月5日", "元", " USD"]))
def test_full_width_punctuation_is_a_boundary_and_never_part_of_a_number(a: int, b: int, mark: str, unit: str) -> None:
    text = f"v{a}.0{mark}{b}{unit}"
    assert mentions(text, f"{b}{unit}") and mentions(text, str(b))
    if b:  # "v3.0，4" is v3 and 4, never the number 3,4 (nor 34)
        assert not mentions(text, f"{a},{b}") and not mentions(text, f"{a}{b}")
    ascii_mark = {"，": ", ", "、": ", ", "；": "; ", "：": ": ", "。": ". ", "！": "! ", "？": "? "}[mark]
    spaced = Layout(text.replace(mark, ascii_mark))
    assert [s.clauses() for s in Layout(text).sentences] == [s.clauses() for s in spaced.sentences]
    assert len(Layout(text).sentences[0].clauses()) >= 1 and sum(len(s.clauses()) for s in Layout(text).sentences) == 2


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "e.g.", "i.e.", "vs.", "approx.", "No."]),
       st.sampled_from(["Chen", "Li", "Acme", "42", "5"]), st.sampled_from(["", "Acme: ", "1. "]))
def test_an_abbreviation_never_ends_the_sentence(abbr: str, nxt: str, lead: str) -> None:
    if abbr in ("approx.", "No.") and not nxt.isdigit():
        nxt = "5"  # these end a sentence before a capital ("No. It was not sent")
    text = f"{lead}OPS-12 goes to {abbr} {nxt} today. OPS-13 waits."
    assert len(Layout(text).sentences) == 2, [s.text for s in Layout(text).sentences]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 9999), min_size=3, max_size=4), st.sampled_from(["+86", "+1", "+44", ""]),
       st.sampled_from([" ", "-"]), st.booleans())
def test_a_phone_number_matches_however_it_is_spaced(groups: list[int], cc: str, sep: str, brackets: bool) -> None:
    parts = [f"{g:03d}" if i else f"{g:02d}" for i, g in enumerate(groups)]
    digits = "".join(parts)
    if not 10 <= len(digits) <= 13 or len({len(p) for p in parts}) == 1 and not cc:
        return  # too short or long for a number, or one size of group: a list, not a phone number
    first = f"({parts[0]})" if brackets else parts[0]
    written = (cc + " " if cc else "") + sep.join([first, *parts[1:]])
    assert normalise(written) == normalise(cc + digits)
    assert mentions(f"Her mobile is {written}.", cc + digits) and mentions(f"手机：{cc}{digits}。", written)


@settings(max_examples=150, deadline=None)
@given(st.text(st.sampled_from("ab 12,.:;，；：。+-()Q\n"), max_size=40))
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
