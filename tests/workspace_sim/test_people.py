"""The shared people rules: name-to-address resolution and a tool acting through another (`invoke`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import InvalidArgument, Unavailable
from workspace_sim.text.people import email_problem, resolve_address, resolve_addresses

PEOPLE = [
    {"email": "dana.reyes@corp.com", "name": "Dana Reyes", "title": "VP Sales", "department": "Sales"},
    {"email": "dana.reyes2@corp.com", "name": "Dana Reyes", "title": "Intern", "department": "Finance"},
    {"email": "jose.garcia@corp.com", "name": "José García", "title": "Support Lead", "department": "Support"},
    {"email": "omar.haddad@corp.com", "name": "Omar Haddad", "title": "Engineer", "department": "Engineering"},
]


@pytest.fixture
def ctx() -> ToolContext:
    ws = Workspace.create(WorkspaceConfig(services=["contacts", "files"], user="omar.haddad@corp.com"),
                          {"contacts": {"people": PEOPLE}})
    return ToolContext(ws.state, ws.config, None, ws.tools)


def test_a_unique_name_resolves_through_the_directory(ctx: ToolContext) -> None:
    assert resolve_address(ctx, "jose garcia", "to") == "jose.garcia@corp.com"
    assert resolve_address(ctx, "  JOSÉ   GARCÍA ", "to") == "jose.garcia@corp.com"
    assert resolve_address(ctx, "Omar", "attendees[0]") == "omar.haddad@corp.com"
    assert resolve_address(ctx, "Omar H <Omar.Haddad@corp.com>", "to") == "omar.haddad@corp.com"


def test_an_ambiguous_name_is_refused_with_every_candidate(ctx: ToolContext) -> None:
    with pytest.raises(InvalidArgument) as e:
        resolve_address(ctx, "Dana Reyes", "attendees[1]")
    msg = str(e.value)
    assert "attendees[1]" in msg and "matches 2 people" in msg
    assert "dana.reyes@corp.com" in msg and "dana.reyes2@corp.com" in msg and "Intern" in msg


def test_an_unknown_name_suggests_close_ones(ctx: ToolContext) -> None:
    with pytest.raises(InvalidArgument, match="did you mean Omar Haddad"):
        resolve_address(ctx, "Omar Hadad", "to[0]")
    with pytest.raises(InvalidArgument, match="to\\[0\\] 'bad@@x' is not a valid e-mail address"):
        resolve_address(ctx, "bad@@x", "to[0]")
    with pytest.raises(InvalidArgument, match="is empty"):
        resolve_address(ctx, "   ", "to[0]")


def test_lists_name_the_failing_item_and_deduplicate(ctx: ToolContext) -> None:
    assert resolve_addresses(ctx, ["Omar Haddad", "omar.haddad@corp.com", "jose garcia"], "to") == [
        "omar.haddad@corp.com", "jose.garcia@corp.com"]
    with pytest.raises(InvalidArgument, match=r"cc\[1\]"):
        resolve_addresses(ctx, ["Omar Haddad", "Nobody Atall"], "cc")


@settings(max_examples=60, deadline=None)
@given(local=st.from_regex(r"[a-z][a-z0-9.]{0,12}[a-z0-9]", fullmatch=True),
       domain=st.from_regex(r"[a-z]{2,8}\.(com|org|io)", fullmatch=True))
def test_any_valid_address_resolves_to_itself(local: str, domain: str) -> None:
    ws = Workspace.create(WorkspaceConfig(services=["contacts"], user="omar.haddad@corp.com"),
                          {"contacts": {"people": PEOPLE}})
    ctx = ToolContext(ws.state, ws.config, None, ws.tools)
    address = f"{local}@{domain}"
    if email_problem(address) is None:
        assert resolve_address(ctx, address.upper(), "to") == address


def test_invoke_runs_another_services_tool_in_the_same_transaction(ctx: ToolContext) -> None:
    data = ctx.invoke("write_file", path="/report.csv", content="a,b\n")
    assert data["path"] == "/report.csv"
    assert ("files.files", "/report.csv") in ctx.writes
    with pytest.raises(InvalidArgument, match="invalid arguments for write_file"):
        ctx.invoke("write_file", path="/x.csv")
    with pytest.raises(Unavailable, match="no send_email tool"):
        ctx.invoke("send_email", to=["a@b.com"], subject="s", body="b")
    assert ctx.has_tool("write_file") and not ctx.has_tool("send_email")


FIRST = ["Dana", "José", "Ana", "Sam", "Lee", "Priya", "Omar", "Zoë"]
LAST = ["Reyes", "García", "Lee", "Ortiz", "Shah", "Haddad", "Núñez"]
names = st.tuples(st.sampled_from(FIRST), st.sampled_from(LAST)).map(" ".join)


def directory_ctx(full_names: list[str]) -> ToolContext:
    people = [{"email": f"p{i}@corp.com", "name": n} for i, n in enumerate(full_names)]
    ws = Workspace.create(WorkspaceConfig(services=["contacts"], user="p0@corp.com"), {"contacts": {"people": people}})
    return ToolContext(ws.state, ws.config, None, ws.tools)


@settings(max_examples=60, deadline=None)
@given(st.lists(names, min_size=1, max_size=12, unique=True), st.data())
def test_in_a_directory_of_unique_names_every_name_resolves_to_its_person(full: list[str], data: st.DataObject) -> None:
    ctx = directory_ctx(full)
    for i, n in enumerate(full):
        spelled = data.draw(st.sampled_from([n, n.upper(), n.lower(), f"  {n.replace(' ', '   ')} "]))
        assert resolve_address(ctx, spelled, "to") == f"p{i}@corp.com"


@settings(max_examples=60, deadline=None)
@given(st.lists(names, min_size=2, max_size=12), st.lists(st.sampled_from(FIRST + LAST), min_size=1, max_size=2))
def test_a_name_never_resolves_silently_when_several_people_fit(full: list[str], words: list[str]) -> None:
    ctx = directory_ctx(full)
    query = " ".join(words)
    exact = [i for i, n in enumerate(full) if n.casefold() == query.casefold()]
    try:
        got = resolve_address(ctx, query, "attendees[0]")
    except InvalidArgument as e:
        fitting = exact or [i for i, n in enumerate(full) if {w.casefold() for w in words} <= set(n.casefold().split())]
        if len(fitting) > 1:  # refused with every candidate named
            assert f"matches {len(fitting)} people" in str(e)
            assert all(f"<p{i}@corp.com>" in str(e) for i in fitting[:8])
        else:
            assert not fitting
        return
    i = int(got[1:].split("@")[0])
    if exact:
        assert exact == [i]
    else:
        fitting = [j for j, n in enumerate(full) if {w.casefold() for w in words} <= set(n.casefold().split())]
        assert fitting == [i]
