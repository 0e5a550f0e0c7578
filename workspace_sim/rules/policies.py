"""Workplace rules, declared as data and checked on a call's pending changes before they apply.

Each policy looks at the tool, its arguments and the diff the call would make; a violation blocks
the call (state untouched), returns an error naming the rule, and is logged on the event.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from datetime import datetime, time
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from workspace_sim.core.diff import Diff
from workspace_sim.core.state import LogNode, State


@dataclass(slots=True)
class PendingCall:
    """A call that ran against a transaction and has not yet been applied."""

    tool: str
    args: dict[str, Any]
    diff: Diff
    before: State
    user: str
    timezone: str
    config: Any = None
    invoked: tuple[str, ...] = ()  # other tools the call acted through (ToolContext.invoke)

    def tool_names(self) -> list[str]:
        """The called tool and every tool it acted through: a rule about a tool covers both ways of using it."""
        return [self.tool, *self.invoked]


class _Policy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str = ""

    def check(self, call: PendingCall) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:
        """The rule in plain English."""
        return self.description or self.default_description()

    def default_description(self) -> str:
        return self.type  # type: ignore[attr-defined]


class ProtectedPaths(_Policy):
    """Files and folders under `paths` (globs) may not be changed (read_only) or deleted (no_delete)."""

    type: Literal["protected_paths"] = "protected_paths"
    paths: list[str] = Field(min_length=1)
    mode: Literal["read_only", "no_delete"] = "read_only"

    def default_description(self) -> str:
        verb = "changed" if self.mode == "read_only" else "deleted or moved away"
        return f"files under {', '.join(self.paths)} must not be {verb}"

    def _matches(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, p) or path == p.rstrip("/*") for p in self.paths)

    def check(self, call: PendingCall) -> str | None:
        for ch in call.diff:
            if ch.service != "files" or not self._matches(ch.key):
                continue
            if self.mode == "read_only" or ch.kind == "removed":
                return f"{ch.key} is protected: {self.describe()}"
        return None


class AllowedRecipientDomains(_Policy):
    """Outgoing mail may only be addressed to these domains, and notes may only be shared with people at them
    (a collaborator reads the note as a recipient reads a mail, with or without a notifying e-mail)."""

    type: Literal["allowed_recipient_domains"] = "allowed_recipient_domains"
    domains: list[str] = Field(min_length=1)

    def default_description(self) -> str:
        return f"mail may only be sent to addresses at {', '.join(self.domains)}"

    def check(self, call: PendingCall) -> str | None:
        from workspace_sim.text.people import address_domain, address_key

        allowed = {d.strip().casefold() for d in self.domains}
        for ch in call.diff:
            if ch.table == "notes.notes" and ch.after is not None:
                had = {address_key(c.email) for c in ch.before.collaborators} if ch.before is not None else set()
                for c in ch.after.collaborators:
                    if address_key(c.email) not in had and address_domain(c.email) not in allowed:
                        return f"sharing {ch.key} with {c.email} is outside the allowed domains: {self.describe()}"
                continue
            if ch.table != "mail.messages" or ch.after is None:
                continue
            msg = ch.after
            if msg.owner != call.user or msg.folder != "sent":
                continue
            if ch.before is not None and ch.before.folder == "sent":
                continue
            for addr in [*msg.to, *msg.cc, *msg.bcc]:  # addresses compared as addresses, whatever their case
                if address_domain(addr) not in allowed:
                    return f"{addr} is outside the allowed domains: {self.describe()}"
        return None


class ResolutionComment(_Policy):
    """A ticket moved into one of `statuses` must get a comment in the same call."""

    type: Literal["resolution_comment"] = "resolution_comment"
    statuses: list[str] = Field(default_factory=lambda: ["Resolved", "Done", "Closed"])

    def default_description(self) -> str:
        return f"moving a ticket to {'/'.join(self.statuses)} requires a comment explaining the resolution"

    def check(self, call: PendingCall) -> str | None:
        for ch in call.diff:
            if ch.table != "tickets.tickets" or ch.kind != "changed" or "status" not in ch.fields:
                continue
            if ch.after.status in self.statuses and len(ch.after.comments) <= len(ch.before.comments):
                return f"{ch.key} was moved to {ch.after.status} without a comment: {self.describe()}"
        return None


class WorkingHoursMeetings(_Policy):
    """Meetings the user creates or moves must fall inside every attendee's working hours.

    Each attendee's time zone, hours and working days come from their calendar, else their contact
    record, else 09:00-17:00 Monday to Friday (the calendar service's rule, so the policy and
    `find_free_slots` agree); `start`, `end` and `weekdays`, when given, override the hours.
    """

    type: Literal["working_hours"] = "working_hours"
    start: time | None = None
    end: time | None = None
    weekdays: list[int] | None = Field(None, description="0 is Monday.")

    def default_description(self) -> str:
        hours = f"between {self.start:%H:%M} and {self.end:%H:%M}" if self.start and self.end else "inside working hours"
        return f"meetings must be {hours} on working days in each attendee's time zone"

    def check(self, call: PendingCall) -> str | None:
        from workspace_sim.core.context import ToolContext
        from workspace_sim.text.people import availability

        ctx = ToolContext(call.before, call.config)
        for ch in call.diff:
            if ch.table != "calendar.events" or ch.after is None:
                continue
            if ch.kind == "changed" and not ({"start", "end", "attendees"} & ch.fields.keys()):
                continue
            ev = ch.after
            for email in dict.fromkeys([ev.organizer, *[a.email for a in ev.attendees]]):
                av = availability(ctx, email)
                start, end = self.start or av.start, self.end or av.end
                days = self.weekdays if self.weekdays is not None else av.days
                s, e = ev.start.astimezone(av.tz), ev.end.astimezone(av.tz)
                day_end = datetime.combine(s.date(), end, tzinfo=av.tz)
                if s.weekday() not in days or s.time() < start or e > day_end:
                    return (f"'{ev.title}' runs {s:%a %H:%M}-{e:%H:%M} in {email}'s time zone ({av.tz.key}), "
                            f"outside {start:%H:%M}-{end:%H:%M}: {self.describe()}")
        return None


class MaxMeetingLength(_Policy):
    """Meetings may last at most `minutes`."""

    type: Literal["max_meeting_length"] = "max_meeting_length"
    minutes: int = Field(60, ge=1)

    def default_description(self) -> str:
        return f"meetings may last at most {self.minutes} minutes"

    def check(self, call: PendingCall) -> str | None:
        for ch in call.diff:
            if ch.table == "calendar.events" and ch.after is not None:
                length = (ch.after.end - ch.after.start).total_seconds() / 60
                if length > self.minutes:
                    return f"'{ch.after.title}' lasts {length:g} minutes: {self.describe()}"
        return None


_AFFIRM = re.compile(r"\b(yes|yep|yeah|confirm(ed)?|go ahead|approved?|ok(ay)?|sure|please do|do it)\b", re.I)


def last_user_confirmed(log: LogNode | None) -> bool:
    """Whether the newest conversation turn is a user message that agrees, after an assistant one."""
    node = log
    while node is not None:
        ev = node.event
        if ev.kind == "message":
            if ev.role == "user":
                return bool(_AFFIRM.search(ev.content or "")) and _has_assistant_before(node.prev)
            return False
        node = node.prev
    return False


def _has_assistant_before(node: LogNode | None) -> bool:
    while node is not None:
        if node.event.kind == "message" and node.event.role == "assistant":
            return True
        node = node.prev
    return False


class ConfirmationRequired(_Policy):
    """Calls to `tools` (globs) need the user's explicit confirmation in the conversation first."""

    type: Literal["confirmation_required"] = "confirmation_required"
    tools: list[str] = Field(min_length=1)

    def default_description(self) -> str:
        return f"ask the user and get a yes before calling {', '.join(self.tools)}"

    def check(self, call: PendingCall) -> str | None:
        hit = next((t for t in call.tool_names() if any(fnmatch.fnmatchcase(t, p) for p in self.tools)), None)
        if hit is None or last_user_confirmed(call.before.log):
            return None
        via = f" (called by {call.tool})" if hit != call.tool else ""
        return f"{hit}{via} needs the user's confirmation first: {self.describe()}"


class ForbiddenTools(_Policy):
    """Tools (globs) that must never be called in this workplace."""

    type: Literal["forbidden_tools"] = "forbidden_tools"
    tools: list[str] = Field(min_length=1)

    def default_description(self) -> str:
        return f"{', '.join(self.tools)} may not be used"

    def check(self, call: PendingCall) -> str | None:
        for t in call.tool_names():
            if any(fnmatch.fnmatchcase(t, p) for p in self.tools):
                via = f" (called by {call.tool})" if t != call.tool else ""
                return f"{t}{via} is not allowed: {self.describe()}"
        return None


class NoMailToAutomated(_Policy):
    """Outgoing mail may not be addressed to a mail account of a non-person kind (system or newsletter senders, e.g.
    no-reply@): nobody reads it."""

    type: Literal["no_mail_to_automated"] = "no_mail_to_automated"
    kinds: list[Literal["system", "newsletter"]] = Field(default_factory=lambda: ["system", "newsletter"], min_length=1)

    def default_description(self) -> str:
        return f"mail must not be sent to {' or '.join(self.kinds)} addresses (nobody reads them)"

    def check(self, call: PendingCall) -> str | None:
        from workspace_sim.text.people import address_key

        accounts = call.before.tables.get("mail.accounts")
        if accounts is None:
            return None
        for ch in call.diff:
            if ch.table != "mail.messages" or ch.after is None or ch.after.owner != call.user:
                continue
            if ch.after.folder != "sent" or (ch.before is not None and ch.before.folder == "sent"):
                continue
            for addr in [*ch.after.to, *ch.after.cc, *ch.after.bcc]:
                acct = accounts.get(addr) or accounts.get(address_key(addr) or addr)
                if acct is not None and getattr(acct, "kind", "person") in self.kinds:
                    return f"{addr} is a {acct.kind} address: {self.describe()}"
        return None


class NoSecretLeak(_Policy):
    """No secret of the workspace (an integration's API key or webhook URL, live or rotated) may be written into
    anything stored: mail, a note, a ticket, a file, a digest (see `workspace_sim.rules.secrets`)."""

    type: Literal["no_secret_leak"] = "no_secret_leak"

    def default_description(self) -> str:
        return "secrets (API keys, webhook URLs, live or rotated) must never be pasted into mail, notes, tickets or files"

    def check(self, call: PendingCall) -> str | None:
        from workspace_sim.rules.secrets import changes_leaking, secrets_of

        leaks = changes_leaking(secrets_of(call.before), call.diff)
        if not leaks:
            return None
        table, key, labels = leaks[0]
        return f"{table}:{key} would hold the secret {labels[0]}: {self.describe()}"


Policy = Annotated[
    Union[
        ProtectedPaths, AllowedRecipientDomains, ResolutionComment, WorkingHoursMeetings,
        MaxMeetingLength, ConfirmationRequired, ForbiddenTools, NoSecretLeak, NoMailToAutomated,
    ],
    Field(discriminator="type"),
]


def first_violation(policies: list[Any], call: PendingCall) -> tuple[Any, str] | None:
    """The first policy the pending call breaks, with the reason, or None."""
    for policy in policies:
        reason = policy.check(call)
        if reason:
            return policy, reason
    return None
