"""Mail records: mailboxes (accounts) and each mailbox's copy of a message, the start-data check, and the declared
tables.

The tools live in `tools.py`, the search syntax in `syntax.py`, folder and label names in `names.py`.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from workspace_sim.core.errors import InvalidArgument, SpecError
from workspace_sim.text.paths import resolve
from workspace_sim.text.folding import fold
from workspace_sim.text.people import PEOPLE, email_problem, normalize_email
from workspace_sim.core.records import Record
from workspace_sim.text.validation import AwareTime
from workspace_sim.core.registry import Service
from .names import folder_name, label_name


# --- records -------------------------------------------------------------------------------------


def unique(items: Iterable[str], key: Any = lambda s: s) -> list[str]:
    """The items in order without repeats (two items are the same when `key` gives the same value)."""
    seen: set[Any] = set()
    out = []
    for x in items:
        k = key(x)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


AccountKind = Literal["person", "system", "newsletter"]


class Account(Record):
    """A mailbox: the user or an internal colleague (`person`), or a sender that is nobody: a `system` address
    (no-reply@, alerts@, a ticketing or payroll robot) or a `newsletter` (news@, a company digest). Mail to an account
    lands in its inbox; a policy (`no_mail_to_automated`) may refuse personal mail to the non-person kinds."""

    key_field = "email"
    email: str = Field(description="The mailbox's address, stored in lower case; the record's key.")
    name: str = Field("", description="Display name of the mailbox's owner, e.g. Dana Lee; may be empty.")
    kind: AccountKind = Field("person", description="person (the user or a colleague), system (an automated sender) or "
                              "newsletter.")

    @field_validator("email")
    @classmethod
    def _email(cls, v: str) -> str:
        return normalize_email(v)


class Message(Record):
    """One mailbox's copy of a message.

    `message_id` is shared by every copy of one sent mail (it defaults to `id`); `thread_id` groups
    a conversation (defaults to `id`); `in_reply_to` is the id of the answered message in the same
    mailbox, or None. Addresses are stored in lower case; attachments are file paths.
    """

    id: str = Field(min_length=1, description="This copy's id, unique across every mailbox.")
    owner: str = Field(description="Address of the mailbox holding this copy; it must have a mail account.")
    folder: str = Field("inbox", description="Folder: inbox, sent, drafts, archive, trash or a custom folder name.")
    thread_id: str = Field("", description="Conversation the message belongs to; its own id when empty.")
    message_id: str = Field("", description="Id shared by every copy of one sent mail; its own id when empty.")
    in_reply_to: str | None = Field(None, description="Id of the answered message in the same mailbox, or None.")
    sender: str = Field(description="Address the message is from, stored in lower case.")
    to: list[str] = Field(default_factory=list, description="Addresses of the To recipients, lower case, no repeats.")
    cc: list[str] = Field(default_factory=list, description="Addresses of the Cc recipients, lower case, no repeats.")
    bcc: list[str] = Field(default_factory=list, description="Addresses of the Bcc recipients (seen by the sender only).")
    subject: str = Field("", description="One-line subject.")
    body: str = Field("", description="Plain-text body.")
    date: AwareTime = Field(description="When it was sent or received, ISO 8601 with a time zone offset.")
    labels: list[str] = Field(default_factory=list, description="Labels, case kept, compared case-insensitively.")
    read: bool = Field(False, description="Whether the mailbox owner has read it.")
    attachments: list[str] = Field(default_factory=list, description="Paths of attached files in the files service.")
    _folded: str | None = PrivateAttr(default=None)

    @field_validator("owner", "sender")
    @classmethod
    def _address(cls, v: str) -> str:
        return normalize_email(v)

    @field_validator("to", "cc", "bcc")
    @classmethod
    def _addresses(cls, v: list[str]) -> list[str]:
        return unique(normalize_email(a) for a in v)

    @field_validator("folder")
    @classmethod
    def _folder(cls, v: str) -> str:
        return folder_name(v)

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: list[str]) -> list[str]:
        return unique((label_name(x) for x in v), key=str.casefold)

    @field_validator("attachments")
    @classmethod
    def _paths(cls, v: list[str]) -> list[str]:
        out = []
        for i, p in enumerate(v):
            try:
                out.append(resolve(p, f"attachments[{i}]"))
            except InvalidArgument as e:
                raise ValueError(e.message) from None
        return unique(out)

    @field_validator("subject")
    @classmethod
    def _subject(cls, v: str) -> str:
        if "\n" in v or "\r" in v:
            raise ValueError("subject must be one line")
        return v

    @model_validator(mode="after")
    def _defaults(self) -> "Message":
        if not self.thread_id:
            object.__setattr__(self, "thread_id", self.id)
        if not self.message_id:
            object.__setattr__(self, "message_id", self.id)
        return self

    @property
    def is_draft(self) -> bool:
        return self.folder == "drafts"

    def folded_text(self) -> str:
        """Subject, body, addresses and attachment names folded for search, computed once per record."""
        private = self.__pydantic_private__  # direct access: pydantic's attribute hook is slow here
        text = private.get("_folded")
        if text is None:
            parts = [self.subject, self.body, self.sender, *self.to, *self.cc, *self.bcc,
                     *(p.rsplit("/", 1)[-1] for p in self.attachments)]
            text = private["_folded"] = fold("\n".join(parts))
        return text


def prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Give the user a mailbox if the data has none, and check that every message has an owner account."""
    accounts, messages = tables.get(ACCOUNTS), tables.get(MESSAGES)
    if accounts is None or messages is None:
        return
    problem = email_problem(config.user)
    if problem is not None:
        raise SpecError("config.user", f"the mail service needs the user's e-mail address; {config.user!r} {problem}")
    me = config.user.strip().lower()
    if me not in accounts:
        person = tables.get(PEOPLE, {}).get(me)
        accounts[me] = Account(email=me, name=getattr(person, "name", ""))
    for mid, m in messages.items():
        owner = m.owner  # type: ignore[attr-defined]
        if owner not in accounts:
            raise SpecError(f"data.mail.messages[id={mid}].owner",
                            f"{owner} has no mail account; add it to data.mail.accounts")


SERVICE = Service("mail", {"accounts": Account, "messages": Message}, title="Mail", prepare=prepare)
ACCOUNTS, MESSAGES = SERVICE.table("accounts"), SERVICE.table("messages")
