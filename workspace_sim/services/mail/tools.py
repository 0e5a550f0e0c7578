"""The mail tools: search, read, send, reply, forward, draft, file, label and delete the user's mail.

Each function is marked with `tool(...)`; the package registers them (`workspace_sim.services.mail`).
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import Field

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import Conflict, InvalidArgument, NotFound
from workspace_sim.text.paths import resolve
from workspace_sim.core.registry import tool
from workspace_sim.text.folding import fold
from workspace_sim.text.people import PEOPLE, resolve_addresses
from .names import SYSTEM_FOLDERS, folder_name, label_name
from .records import ACCOUNTS, MESSAGES, Message, unique
from .syntax import Matcher, Term, parse_query

FILES, FOLDERS = "files.files", "files.folders"  # the files service's tables, read by name (no service imports another)
MAX_SUBJECT = 998
MAX_BODY = 200_000
MAX_RECIPIENTS = 100
SNIPPET = 100




# --- shared helpers ------------------------------------------------------------------------------


def _me(ctx: ToolContext) -> str:
    return ctx.user.strip().lower()


def _mailbox(ctx: ToolContext) -> list[Message]:
    me = _me(ctx)
    return [m for m in ctx.values(MESSAGES) if m.owner == me]


def _mine(ctx: ToolContext, msg_id: str) -> Message:
    """The user's own copy of a message; any other mailbox's message is reported as not found."""
    m = ctx.get(MESSAGES, msg_id)
    if m is not None and m.owner == _me(ctx):
        return m
    close = difflib.get_close_matches(msg_id, [x.id for x in _mailbox(ctx)], n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else "; use search_emails to find message ids"
    raise NotFound(f"message {msg_id!r} not found in your mailbox{hint}")


def _fresh_id(ctx: ToolContext) -> str:
    while True:
        mid = ctx.new_id("msg")
        if ctx.get(MESSAGES, mid) is None:
            return mid


def _names(ctx: ToolContext) -> dict[str, str]:
    """Display names by address, from the directory and the mail accounts."""
    names = {p.email: p.name for p in ctx.values(PEOPLE)} if ctx.has_service("contacts") else {}
    names.update({a.email: a.name for a in ctx.values(ACCOUNTS) if a.name})
    return names


def _addresses(ctx: ToolContext, values: list[str], field: str) -> list[str]:
    """Lower-cased, de-duplicated addresses; 'Name <addr>' and names of people in the directory or with a
    mailbox here are accepted (an ambiguous or unknown name is refused with the candidates listed)."""
    if len(values) > MAX_RECIPIENTS:
        raise InvalidArgument(f"too many recipients in {field} ({len(values)}); at most {MAX_RECIPIENTS}")
    accounts = {a.email: a.name for a in ctx.values(ACCOUNTS) if a.name}
    return resolve_addresses(ctx, values, field, known=accounts)


def _recipients(
    ctx: ToolContext, to: list[str], cc: list[str], bcc: list[str]
) -> tuple[list[str], list[str], list[str]]:
    """To, Cc and Bcc validated; an address keeps only its first place (To before Cc before Bcc)."""
    t = _addresses(ctx, to, "to")
    c = [a for a in _addresses(ctx, cc, "cc") if a not in t]
    b = [a for a in _addresses(ctx, bcc, "bcc") if a not in t and a not in c]
    if len(t) + len(c) + len(b) > MAX_RECIPIENTS:
        raise InvalidArgument(f"too many recipients ({len(t) + len(c) + len(b)}); at most {MAX_RECIPIENTS}")
    return t, c, b


def _attachments(ctx: ToolContext, paths: list[str], field: str = "attachments") -> list[str]:
    """Normalised attachment paths; each must be an existing file when the files service is on."""
    out = []
    for i, raw in enumerate(paths):
        p = resolve(raw, f"{field}[{i}]")
        if ctx.has_service("files") and ctx.get(FILES, p) is None:
            if p == "/" or ctx.get(FOLDERS, p) is not None:
                raise InvalidArgument(f"{field}[{i}] {p} is a folder; attach files, not folders")
            close = difflib.get_close_matches(p, ctx.keys(FILES), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else "; use search_files to find it"
            raise NotFound(f"{field}[{i}]: file {p} not found{hint}")
        out.append(p)
    return unique(out)


def _text_checks(subject: str | None, body: str | None) -> None:
    if subject is not None:
        if "\n" in subject or "\r" in subject:
            raise InvalidArgument("subject must be one line (it contains a line break)")
        if len(subject) > MAX_SUBJECT:
            raise InvalidArgument(f"subject is longer than {MAX_SUBJECT} characters")
    if body is not None and len(body) > MAX_BODY:
        raise InvalidArgument(f"body is longer than {MAX_BODY} characters")


def _prefixed(prefix: str, subject: str, already: str) -> str:
    return subject if re.match(already, subject, re.I) else f"{prefix}: {subject}".rstrip()


def _tz(ctx: ToolContext) -> ZoneInfo:
    return ZoneInfo(ctx.config.timezone)


def _when(m: Message, tz: ZoneInfo) -> str:
    return m.date.astimezone(tz).isoformat()


def _deliver(
    ctx: ToolContext, *, to: list[str], cc: list[str], bcc: list[str], subject: str, body: str,
    attachments: list[str], thread_id: str | None = None, in_reply_to: Message | None = None,
    labels: list[str] | None = None,
) -> tuple[Message, list[str], list[str]]:
    """Store the user's sent copy and one inbox copy per internal recipient; returns (sent, internal, external)."""
    if not (to or cc or bcc):
        raise InvalidArgument("give at least one recipient in to, cc or bcc")
    me = _me(ctx)
    sid = _fresh_id(ctx)
    sent = Message(
        id=sid, owner=me, folder="sent", thread_id=thread_id or sid, message_id=sid,
        in_reply_to=in_reply_to.id if in_reply_to else None, sender=me, to=to, cc=cc, bcc=bcc, subject=subject,
        body=body, date=ctx.now, labels=labels or [], read=True, attachments=attachments,
    )
    ctx.put(MESSAGES, sent)
    internal, external = [], []
    for rcpt in [*to, *cc, *bcc]:
        if ctx.get(ACCOUNTS, rcpt) is None:
            external.append(rcpt)
            continue
        internal.append(rcpt)
        parent = _copy_in(ctx, rcpt, in_reply_to.message_id) if in_reply_to else None
        ctx.put(MESSAGES, Message(
            id=_fresh_id(ctx), owner=rcpt, folder="inbox", thread_id=sent.thread_id, message_id=sid,
            in_reply_to=parent, sender=me, to=to, cc=cc, bcc=[rcpt] if rcpt in bcc else [], subject=subject,
            body=body, date=ctx.now, read=False, attachments=attachments,
        ))
    return sent, internal, external


def _copy_in(ctx: ToolContext, owner: str, message_id: str) -> str | None:
    """The id of `owner`'s copy of the mail `message_id`, if their mailbox holds one."""
    for m in ctx.values(MESSAGES):
        if m.owner == owner and m.message_id == message_id and not m.is_draft:
            return m.id
    return None


def _sent_result(sent: Message, internal: list[str], external: list[str], tz: ZoneInfo) -> dict:
    return {"id": sent.id, "thread_id": sent.thread_id, "in_reply_to": sent.in_reply_to, "to": sent.to,
            "cc": sent.cc, "bcc": sent.bcc, "subject": sent.subject, "date": _when(sent, tz),
            "attachments": sent.attachments, "delivered_internally": internal, "external": external}


def _render_sent(d: dict) -> str:
    rcpts = ", ".join([*d["to"], *(f"cc {a}" for a in d["cc"]), *(f"bcc {a}" for a in d["bcc"])])
    text = f"Sent {d['id']} \"{d['subject']}\" to {rcpts}"
    if d["attachments"]:
        text += f" with {len(d['attachments'])} attachment(s)"
    return text + f" (thread {d['thread_id']})."


# --- search --------------------------------------------------------------------------------------


def _folders(box: list[Message]) -> list[str]:
    custom = sorted({m.folder for m in box if m.folder not in SYSTEM_FOLDERS}, key=str.casefold)
    return [*SYSTEM_FOLDERS, *custom]


def _need_folder(box: list[Message], folder: str, where: str) -> None:
    known = _folders(box)
    if fold(folder) not in {fold(f) for f in known}:
        raise NotFound(f"{where}: no folder named {folder!r}; your folders: {', '.join(known)}")


def _snippet(body: str) -> str:
    text = " ".join(body.split())
    return text if len(text) <= SNIPPET else text[:SNIPPET - 1].rstrip() + "…"


def _render_search(d: dict) -> str:
    msgs = d["messages"]
    if not msgs:
        return f"No messages match{' (' + str(d['total']) + ' in all; offset is past the end)' if d['total'] else ''}."
    start = d["offset"] + 1
    lines = [f"Messages {start}-{start + len(msgs) - 1} of {d['total']}, newest first:"]
    for m in msgs:
        flags = [m["folder"]] + (["unread"] if m["unread"] else []) + [f"label {x}" for x in m["labels"]]
        if m["attachments"]:
            flags.append(f"{m['attachments']} attachment(s)")
        sender = f"{m['from_name']} <{m['from']}>" if m["from_name"] else m["from"]
        when = m["date"][:16].replace("T", " ")
        lines.append(f"- {m['id']}  {when}  {sender}  \"{m['subject']}\"  ({', '.join(flags)})")
        if m["snippet"]:
            lines.append(f"    {m['snippet']}")
    if d["total"] > start - 1 + len(msgs):
        lines.append(f"More: call again with offset={start - 1 + len(msgs)}.")
    return "\n".join(lines)


@tool(read_only=True, render=_render_search)
def search_emails(
    ctx: ToolContext, query: str = "", folder: str | None = None,
    max_results: Annotated[int, Field(ge=1, le=100)] = 20, offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """Search your mailbox, newest first, with Gmail-style terms that must all match: from:, to:, cc:, bcc:, subject:,
    label:, in:folder (in:anywhere includes trash, which is otherwise left out), is:unread, is:read, is:starred,
    has:attachment, after:YYYY-MM-DD, before:YYYY-MM-DD, filename:, thread:, "quoted phrases" and free words; put
    '-' before a term to exclude it. Each result has id, thread, folder, sender, subject, date, a snippet and
    flags.

    Args:
        query: Search terms, e.g. 'from:alice is:unread after:2026-03-01 "budget review"'. Empty matches everything.
        folder: Only this folder (inbox, sent, drafts, archive, trash or a custom folder).
        max_results: Most messages to return (1-100).
        offset: Number of matching messages to skip, for paging.
    """
    tz = _tz(ctx)
    terms = parse_query(query, tz)
    box = _mailbox(ctx)
    for t in terms:
        if t.op == "in" and t.value != "anywhere":
            _need_folder(box, t.value, "query")
    scoped = any(t.op == "in" and not t.negate for t in terms)
    if folder is not None:
        try:
            f = folder_name(folder)
        except ValueError as e:
            raise InvalidArgument(f"folder: {e}") from None
        _need_folder(box, f, "folder")
        terms.append(Term("in", f))
        scoped = True
    if not scoped:
        terms.append(Term("in", "trash", negate=True))
    matcher = Matcher(_names(ctx))
    hits = [m for m in box if all(matcher.test(m, t) for t in terms)]
    hits.sort(key=lambda m: m.id)
    hits.sort(key=lambda m: m.date, reverse=True)
    names = matcher.names
    page = [
        {"id": m.id, "thread_id": m.thread_id, "folder": m.folder, "from": m.sender,
         "from_name": names.get(m.sender) or None, "to": m.to, "subject": m.subject, "date": _when(m, tz),
         "snippet": _snippet(m.body), "unread": not m.read, "labels": m.labels, "attachments": len(m.attachments)}
        for m in hits[offset:offset + max_results]
    ]
    return {"query": query, "total": len(hits), "offset": offset, "messages": page}


def _render_folders(d: dict) -> str:
    lines = ["Folders:"] + [f"- {f['name']}: {f['total']} ({f['unread']} unread)" for f in d["folders"]]
    if d["labels"]:
        lines += ["Labels:"] + [f"- {x['name']}: {x['total']} ({x['unread']} unread)" for x in d["labels"]]
    return "\n".join(lines)


@tool(read_only=True, render=_render_folders)
def list_mail_folders(ctx: ToolContext) -> dict:
    """List your mail folders (inbox, sent, drafts, archive, trash and any custom ones) and labels, each with its
    number of messages and unread messages."""
    box = _mailbox(ctx)
    folders = [{"name": f, "total": sum(m.folder == f for m in box),
                "unread": sum(m.folder == f and not m.read for m in box)} for f in _folders(box)]
    labels: dict[str, dict[str, Any]] = {}
    for m in box:
        for x in m.labels:
            entry = labels.setdefault(x.casefold(), {"name": x, "total": 0, "unread": 0})
            entry["total"] += 1
            entry["unread"] += not m.read
    return {"folders": folders, "labels": [labels[k] for k in sorted(labels)]}


# --- reading -------------------------------------------------------------------------------------


def _render_message(d: dict) -> str:
    lines = [f"From: {d['from_name']} <{d['from']}>" if d["from_name"] else f"From: {d['from']}"]
    for label, key in (("To", "to"), ("Cc", "cc"), ("Bcc", "bcc")):
        if d[key]:
            lines.append(f"{label}: {', '.join(d[key])}")
    lines.append(f"Date: {d['date']}")
    lines.append(f"Subject: {d['subject']}")
    meta = f"Id: {d['id']} | thread {d['thread_id']} | folder {d['folder']} | {'read' if d['read'] else 'unread'}"
    if d["in_reply_to"]:
        meta += f" | in reply to {d['in_reply_to']}"
    if d["labels"]:
        meta += f" | labels: {', '.join(d['labels'])}"
    lines.append(meta)
    if d["attachments"]:
        lines.append(f"Attachments: {', '.join(d['attachments'])}")
    return "\n".join(lines) + "\n\n" + d["body"]


@tool(idempotent=True, render=_render_message)
def read_email(ctx: ToolContext, id: str, mark_read: bool = False) -> dict:
    """Read one of your messages in full: sender, recipients, date, subject, body, labels, attachments (file paths)
    and thread. It leaves the read flag as it is unless mark_read is true.

    Args:
        id: Message id, as given by search_emails.
        mark_read: If true, also mark the message as read.
    """
    m = _mine(ctx, id)
    if mark_read and not m.read:
        m = ctx.put(MESSAGES, m.evolve(read=True))  # type: ignore[assignment]
    names = _names(ctx)
    return {"id": m.id, "thread_id": m.thread_id, "in_reply_to": m.in_reply_to, "folder": m.folder,
            "from": m.sender, "from_name": names.get(m.sender) or None, "to": m.to, "cc": m.cc, "bcc": m.bcc,
            "subject": m.subject, "date": _when(m, _tz(ctx)), "body": m.body, "labels": m.labels,
            "read": m.read, "attachments": m.attachments}


# --- sending -------------------------------------------------------------------------------------


@tool(render=_render_sent)
def send_email(
    ctx: ToolContext, to: list[str], subject: str, body: str, cc: list[str] = [], bcc: list[str] = [],
    attachments: list[str] = [],
) -> dict:
    """Send a new message from your address. Your copy goes to your sent folder; colleagues with a mailbox here
    receive it in their inbox.

    Args:
        to: Recipients: addresses, "Name <address>" or names from the directory, e.g. ["alice@example.com",
            "Dana Reyes"]; a name that fits several people is refused with the candidates listed.
        subject: Subject line (one line).
        body: Message text.
        cc: Carbon-copy recipients (addresses or directory names).
        bcc: Blind-copy recipients, addresses or directory names (hidden from the other recipients).
        attachments: Paths of files to attach, e.g. ["/reports/q1.pdf"].
    """
    _text_checks(subject, body)
    t, c, b = _recipients(ctx, to, cc, bcc)
    if not t:
        raise InvalidArgument("to is empty; give at least one recipient address")
    files = _attachments(ctx, attachments)
    sent, internal, external = _deliver(ctx, to=t, cc=c, bcc=b, subject=subject, body=body, attachments=files)
    return _sent_result(sent, internal, external, _tz(ctx))


def _reply_recipients(ctx: ToolContext, orig: Message, reply_all: bool) -> tuple[list[str], list[str]]:
    me = _me(ctx)
    if orig.sender == me:  # answering your own message goes to its recipients again
        to = list(orig.to)
        cc = list(orig.cc) if reply_all else []
    else:
        to = [orig.sender] + ([a for a in orig.to if a != me] if reply_all else [])
        cc = [a for a in orig.cc if a != me] if reply_all else []
    to = unique(to)
    return to, [a for a in unique(cc) if a not in to]


def _answerable(m: Message, verb: str) -> None:
    if m.is_draft:
        raise Conflict(
            f"message {m.id} is a draft; you can only {verb} sent or received mail (send the draft with send_draft)"
        )


@tool(render=_render_sent)
def reply_email(
    ctx: ToolContext, id: str, body: str, reply_all: bool = False, attachments: list[str] = [], cc: list[str] = [],
) -> dict:
    """Reply to one of your messages in the same thread, with subject 'Re: ...'. Goes to the sender (or, for your own
    sent message, to its recipients); reply_all also includes the other To and Cc recipients except you.

    Args:
        id: Id of the message to answer.
        body: Text of the reply.
        reply_all: If true, reply to everyone on the message, not only the sender.
        attachments: Paths of files to attach.
        cc: More people to copy on the reply (addresses or directory names).
    """
    orig = _mine(ctx, id)
    _answerable(orig, "reply to")
    _text_checks(None, body)
    to, cc_back = _reply_recipients(ctx, orig, reply_all)
    extra = [a for a in _addresses(ctx, cc, "cc") if a not in to and a not in cc_back]
    cc = cc_back + extra
    if len(to) + len(cc) > MAX_RECIPIENTS:
        raise InvalidArgument(f"too many recipients ({len(to) + len(cc)}); at most {MAX_RECIPIENTS}")
    if not to and not cc:
        raise InvalidArgument(f"message {orig.id} has no recipients to reply to; use send_email instead")
    files = _attachments(ctx, attachments)
    subject = _prefixed("Re", orig.subject, r"\s*re\s*:")
    _text_checks(subject, None)
    sent, internal, external = _deliver(ctx, to=to, cc=cc, bcc=[], subject=subject, body=body, attachments=files,
                                        thread_id=orig.thread_id, in_reply_to=orig)
    return _sent_result(sent, internal, external, _tz(ctx))


def _forwarded_block(m: Message, names: dict[str, str], tz: ZoneInfo) -> str:
    def who(a: str) -> str:
        return f"{names[a]} <{a}>" if names.get(a) else a

    head = ["---------- Forwarded message ---------", f"From: {who(m.sender)}",
            f"Date: {m.date.astimezone(tz):%a, %d %b %Y %H:%M %Z}", f"Subject: {m.subject}",
            f"To: {', '.join(who(a) for a in m.to)}"]
    if m.cc:
        head.append(f"Cc: {', '.join(who(a) for a in m.cc)}")
    return "\n".join(head) + "\n\n" + m.body


@tool(render=_render_sent)
def forward_email(ctx: ToolContext, id: str, to: list[str], body: str = "", cc: list[str] = []) -> dict:
    """Forward one of your messages, with its attachments, to new recipients; your note comes first, then the original
    message. The subject becomes 'Fwd: ...'.

    Args:
        id: Id of the message to forward.
        to: Recipients: addresses, "Name <address>" or names from the directory.
        body: Your note above the forwarded message.
        cc: Carbon-copy recipients (addresses or directory names).
    """
    orig = _mine(ctx, id)
    _answerable(orig, "forward")
    t, c, _ = _recipients(ctx, to, cc, [])
    if not t:
        raise InvalidArgument("to is empty; give at least one recipient address")
    text = (body.rstrip() + "\n\n" if body.strip() else "") + _forwarded_block(orig, _names(ctx), _tz(ctx))
    _text_checks(None, text)
    subject = _prefixed("Fwd", orig.subject, r"\s*(fwd?|fw)\s*:")
    _text_checks(subject, None)
    sent, internal, external = _deliver(ctx, to=t, cc=c, bcc=[], subject=subject, body=text,
                                        attachments=list(orig.attachments), thread_id=orig.thread_id)
    return _sent_result(sent, internal, external, _tz(ctx))


# --- drafts --------------------------------------------------------------------------------------


def _draft_result(m: Message, tz: ZoneInfo) -> dict:
    return {"id": m.id, "thread_id": m.thread_id, "in_reply_to": m.in_reply_to, "to": m.to, "cc": m.cc,
            "bcc": m.bcc, "subject": m.subject, "body": m.body, "attachments": m.attachments,
            "date": _when(m, tz)}


def _render_draft(d: dict) -> str:
    rcpts = ", ".join([*d["to"], *(f"cc {a}" for a in d["cc"]), *(f"bcc {a}" for a in d["bcc"])]) or "no recipients yet"
    return f"Draft {d['id']} \"{d['subject']}\" to {rcpts}; send it with send_draft."


def _draft(ctx: ToolContext, draft_id: str) -> Message:
    m = _mine(ctx, draft_id)
    if not m.is_draft:
        raise Conflict(
            f"message {m.id} is not a draft (it is in {m.folder}); only drafts can be edited or sent this way"
        )
    return m


@tool(render=_render_draft)
def create_draft(
    ctx: ToolContext, to: list[str] = [], subject: str = "", body: str = "", cc: list[str] = [],
    bcc: list[str] = [], attachments: list[str] = [], in_reply_to: str | None = None,
) -> dict:
    """Save a draft in your drafts folder without sending it; send it later with send_draft. A draft may answer one of
    your messages (in_reply_to), which puts it in that thread.

    Args:
        to: Recipients: addresses or names from the directory (may be left empty for now).
        subject: Subject line; for a reply it defaults to 'Re: <original subject>'.
        body: Message text.
        cc: Carbon-copy recipients (addresses or directory names).
        bcc: Blind-copy recipients (addresses or directory names).
        attachments: Paths of files to attach.
        in_reply_to: Id of the message this draft answers, if any.
    """
    _text_checks(subject, body)
    t, c, b = _recipients(ctx, to, cc, bcc)
    files = _attachments(ctx, attachments)
    orig = None
    if in_reply_to is not None:
        orig = _mine(ctx, in_reply_to)
        _answerable(orig, "reply to")
        if not subject:
            subject = _prefixed("Re", orig.subject, r"\s*re\s*:")
            _text_checks(subject, None)
    did = _fresh_id(ctx)
    me = _me(ctx)
    m = Message(id=did, owner=me, folder="drafts", thread_id=orig.thread_id if orig else did,
                in_reply_to=orig.id if orig else None, sender=me, to=t, cc=c, bcc=b, subject=subject, body=body,
                date=ctx.now, read=True, attachments=files)
    ctx.put(MESSAGES, m)
    return _draft_result(m, _tz(ctx))


@tool(render=_render_draft)
def update_draft(
    ctx: ToolContext, id: str, to: list[str] | None = None, subject: str | None = None, body: str | None = None,
    cc: list[str] | None = None, bcc: list[str] | None = None, attachments: list[str] | None = None,
) -> dict:
    """Change fields of one of your drafts; fields left out keep their value, a given list replaces the old one. Sent
    mail cannot be changed.

    Args:
        id: Id of the draft.
        to: New recipients (addresses or directory names).
        subject: New subject line.
        body: New message text.
        cc: New carbon-copy recipients.
        bcc: New blind-copy recipients.
        attachments: New list of attached file paths.
    """
    d = _draft(ctx, id)
    if all(x is None for x in (to, subject, body, cc, bcc, attachments)):
        raise InvalidArgument("nothing to change; give at least one of to, subject, body, cc, bcc, attachments")
    _text_checks(subject, body)
    t, c, b = _recipients(ctx, d.to if to is None else to, d.cc if cc is None else cc, d.bcc if bcc is None else bcc)
    files = d.attachments if attachments is None else _attachments(ctx, attachments)
    new = d.evolve(to=t, cc=c, bcc=b, subject=d.subject if subject is None else subject,
                   body=d.body if body is None else body, attachments=files, date=ctx.now)
    ctx.put(MESSAGES, new)
    return _draft_result(new, _tz(ctx))  # type: ignore[arg-type]


@tool(render=_render_sent)
def send_draft(ctx: ToolContext, id: str) -> dict:
    """Send one of your drafts as it is: it leaves the drafts folder and is sent like send_email (a reply draft stays
    in its thread). The sent message gets a new id.

    Args:
        id: Id of the draft to send.
    """
    d = _draft(ctx, id)
    if not (d.to or d.cc or d.bcc):
        raise InvalidArgument(f"draft {d.id} has no recipients; add some with update_draft first")
    files = _attachments(ctx, d.attachments, "draft attachments")
    orig = None
    if d.in_reply_to is not None:
        parent = ctx.get(MESSAGES, d.in_reply_to)
        orig = parent if parent is not None and parent.owner == d.owner else None
    ctx.delete(MESSAGES, d.id)
    sent, internal, external = _deliver(
        ctx, to=d.to, cc=d.cc, bcc=d.bcc, subject=d.subject, body=d.body, attachments=files,
        thread_id=None if d.thread_id == d.id else d.thread_id, in_reply_to=orig, labels=d.labels,
    )
    result = _sent_result(sent, internal, external, _tz(ctx))
    result["draft_id"] = d.id
    return result


# --- organising ----------------------------------------------------------------------------------


@tool(idempotent=True)
def move_email(ctx: ToolContext, id: str, folder: str) -> dict:
    """Move one of your messages to another folder: inbox, archive, trash, or a custom folder (created on first use).
    Drafts cannot be moved, and only mail you sent can go to sent.

    Args:
        id: Id of the message.
        folder: Destination folder name.
    """
    m = _mine(ctx, id)
    try:
        target = folder_name(folder)
    except ValueError as e:
        raise InvalidArgument(f"folder: {e}") from None
    if m.is_draft:
        raise Conflict(f"message {m.id} is a draft; send it with send_draft or discard it with delete_email")
    if target == "drafts":
        raise InvalidArgument("only drafts live in drafts; create one with create_draft")
    if target == "sent" and m.sender != m.owner:
        raise InvalidArgument(f"message {m.id} is from {m.sender}; only mail you sent can go to sent")
    if m.folder == target:
        return {"id": m.id, "folder": target, "moved": False}
    ctx.put(MESSAGES, m.evolve(folder=target))
    return {"id": m.id, "folder": target, "from_folder": m.folder, "moved": True}


@tool(idempotent=True)
def label_email(ctx: ToolContext, id: str, add: list[str] = [], remove: list[str] = []) -> dict:
    """Add labels to and remove labels from one of your messages (labels compare case-insensitively; 'starred' marks a
    star).

    Args:
        id: Id of the message.
        add: Labels to add, e.g. ["urgent"].
        remove: Labels to remove.
    """
    m = _mine(ctx, id)
    if not add and not remove:
        raise InvalidArgument("give labels to add or remove")
    try:
        plus = [label_name(x) for x in add]
        minus = {label_name(x).casefold() for x in remove}
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    both = sorted({x for x in plus if x.casefold() in minus})
    if both:
        raise InvalidArgument(f"label(s) {', '.join(both)} are both added and removed; choose one")
    absent = sorted(x for x in minus if x not in {y.casefold() for y in m.labels})
    labels = unique([*(x for x in m.labels if x.casefold() not in minus), *plus], key=str.casefold)
    if labels != m.labels:
        ctx.put(MESSAGES, m.evolve(labels=labels))
    return {"id": m.id, "labels": labels, **({"not_present": absent} if absent else {})}


@tool(idempotent=True)
def mark_email_read(ctx: ToolContext, id: str, read: bool = True) -> dict:
    """Mark one of your messages as read, or as unread with read=false.

    Args:
        id: Id of the message.
        read: True for read, false for unread.
    """
    m = _mine(ctx, id)
    if m.read != read:
        ctx.put(MESSAGES, m.evolve(read=read))
    return {"id": m.id, "read": read}


@tool(destructive=True)
def delete_email(ctx: ToolContext, id: str) -> dict:
    """Delete one of your messages: mail goes to trash (move it back with move_email); a message already in trash, or
    a draft, is removed permanently.

    Args:
        id: Id of the message.
    """
    m = _mine(ctx, id)
    if m.folder == "trash" or m.is_draft:
        ctx.delete(MESSAGES, m.id)
        return {"id": m.id, "deleted": "permanently"}
    ctx.put(MESSAGES, m.evolve(folder="trash"))
    return {"id": m.id, "deleted": "moved to trash", "from_folder": m.folder}
