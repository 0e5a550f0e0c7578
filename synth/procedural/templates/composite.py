"""Robustness to injected faults and long-horizon work, built by composing other templates."""

from __future__ import annotations

from ..builder import Act, SpecBuilder, TemplateError
from . import registry, template

# Templates that compose well into long tasks: (capability, name).
BATCHABLE = [
    ("file_management", "archive_by_year"), ("file_management", "rename_term"),
    ("ticket_workflow", "triage_label"), ("mail_triage", "archive_and_label"),
    ("document_from_data", "region_total_report"), ("mail_triage", "reply_with_figure"),
]


def _with_faults(b: SpecBuilder, base: tuple[str, str], tools: list[str], capability: str, name: str) -> Act:
    b.faults.append({"tools": tools, "kind": b.rng.choice(("rate_limit", "server_error", "timeout")), "rate": 0.5,
                     "seed": b.rng.randint(0, 10_000), "max_consecutive": 2})
    inner = registry()[base[0]][base[1]].fn(b, 1)
    if capability not in b.capabilities:
        b.capabilities.append(capability)
    b.templates.append(name)

    def act() -> None:
        inner()
        if not any(s.get("expect_error") == "fault" for s in b.steps):
            raise TemplateError("the reference met no injected fault")

    return act


@template("fault_robustness", "flaky_archive", composable=False)
def flaky_archive(b: SpecBuilder, size: int = 1) -> Act:
    """Archive files while moves and folder creation fail transiently."""
    return _with_faults(b, ("file_management", "archive_by_year"), ["move_file", "create_directory"],
                        "fault_robustness", "flaky_archive")


@template("fault_robustness", "flaky_reply", composable=False)
def flaky_reply(b: SpecBuilder, size: int = 1) -> Act:
    """Reply to a colleague while mail tools fail transiently; exactly one reply must go out."""
    act = _with_faults(b, ("mail_triage", "reply_with_figure"), ["search_emails", "read_email", "reply_email"],
                       "fault_robustness", "flaky_reply")

    def with_count() -> None:
        act()
        for p in b.predicates:
            if p["kind"] == "mail_sent":
                p["count"] = 1  # a retried send must not duplicate the reply

    return with_count


@template("fault_robustness", "flaky_triage", composable=False)
def flaky_triage(b: SpecBuilder, size: int = 1) -> Act:
    """Triage tickets while transitions and assignment fail transiently."""
    return _with_faults(b, ("ticket_workflow", "triage_label"), ["transition_ticket", "assign_ticket"],
                        "fault_robustness", "flaky_triage")


def _compose(b: SpecBuilder, picks: list[tuple[str, str]], size: int) -> Act:
    acts = [registry()[cap][name].fn(b, size) for cap, name in picks]

    def act() -> None:
        for a in acts:
            a()
        calls = sum(1 for s in b.steps if s["kind"] == "call")
        if calls < 15:
            raise TemplateError(f"only {calls} calls")

    return act


@template("long_horizon", "batch_of_chores", composable=False)
def batch_of_chores(b: SpecBuilder, size: int = 1) -> Act:
    """Three unrelated chores from different services in one request (15+ calls)."""
    families: dict[str, tuple[str, str]] = {}
    for cap, name in b.rng.sample(BATCHABLE, len(BATCHABLE)):
        families.setdefault(cap, (cap, name))
    picks = list(families.values())[:3]
    return _compose(b, picks, 3)


@template("long_horizon", "big_triage", composable=False)
def big_triage(b: SpecBuilder, size: int = 1) -> Act:
    """A large ticket triage plus a renaming pass over documents."""
    return _compose(b, [("ticket_workflow", "triage_label"), ("file_management", "rename_term")], 5)
