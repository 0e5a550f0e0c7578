"""The notes service's tools (the package docstring says what the service models)."""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import Conflict, InvalidArgument, NotFound, PermissionDenied, Unavailable
from workspace_sim.text.folding import fold
from workspace_sim.text.people import resolve_addresses
from workspace_sim.core.registry import tool
from workspace_sim.text.render import render_list
from workspace_sim.text.search_terms import matches_all, query_terms
from workspace_sim.text.validation import as_argument, clean_text, edit_tag_list, one_line, tag as valid_tag, tag_list
from .records import (
    NOTEBOOKS, NOTES, Permission, Format, MAX_TITLE, MAX_TEXT, MAX_NAME, MAX_TAGS, MAX_COLLABORATORS, MAX_QUERY,
    MAX_MESSAGE, MAX_PARTICIPANTS, Notebook, Collaborator, Note,
)


# --- validation helpers ---------------------------------------------------------------------------


def _participants(ctx: ToolContext, values: list[str], what: str) -> list[str]:
    """Participants as addresses, names resolved by `workspace_sim.text.people` (an ambiguous one is refused)."""
    if len(values) > MAX_PARTICIPANTS:
        raise InvalidArgument(f"{what} has {len(values)} entries; at most {MAX_PARTICIPANTS} are allowed")
    return resolve_addresses(ctx, values, what)


def _tags(values: list[str], what: str) -> list[str]:
    """Tags with spaces collapsed, de-duplicated case-insensitively in order."""
    return as_argument(tag_list, values, what, True, MAX_TAGS)


# --- lookups --------------------------------------------------------------------------------------


def _visible(ctx: ToolContext) -> list[Note]:
    return [n for n in ctx.values(NOTES) if n.permission_of(ctx.user) is not None]


def _note(ctx: ToolContext, note_id: str) -> Note:
    """A note the user owns or that is shared with them; others are reported as not found."""
    key = note_id.strip()
    n = ctx.get(NOTES, key) if key else None
    if n is None or n.permission_of(ctx.user) is None:
        close = difflib.get_close_matches(key, [x.id for x in _visible(ctx)], n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; use search_notes to find note ids"
        raise NotFound(f"note {note_id!r} not found{hint}")
    return n


def _editable(ctx: ToolContext, note_id: str) -> Note:
    n = _note(ctx, note_id)
    if n.permission_of(ctx.user) == "view":
        raise PermissionDenied(f"note {n.id} was shared with you by {n.owner} with view permission only; "
                               "you can read it but not change it")
    return n


def _owned(ctx: ToolContext, note_id: str, action: str) -> Note:
    n = _note(ctx, note_id)
    if n.owner != ctx.user:
        raise PermissionDenied(f"only the owner of note {n.id} ({n.owner}) can {action} it; it was shared with you "
                               f"with {n.permission_of(ctx.user)} permission")
    return n


def _notebooks(ctx: ToolContext) -> list[Notebook]:
    return [nb for nb in ctx.values(NOTEBOOKS) if nb.owner == ctx.user]


def _notebook(ctx: ToolContext, value: str) -> Notebook:
    """One of the user's notebooks by id or name (case-insensitive)."""
    mine = _notebooks(ctx)
    text = " ".join(value.split())
    hit = next((nb for nb in mine if nb.id == text), None) or next(
        (nb for nb in mine if fold(nb.name) == fold(text)), None)
    if hit is None:
        names = [nb.name for nb in mine]
        close = difflib.get_close_matches(text, names, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else f"your notebooks: {', '.join(names) or 'none'}"
        raise NotFound(f"notebook {value!r} not found; {hint} (create_notebook makes a new one)")
    return hit


# --- output ---------------------------------------------------------------------------------------


def _time(t: datetime | None) -> str | None:
    return t.isoformat().replace("+00:00", "Z") if t is not None else None


def _summary(ctx: ToolContext, n: Note) -> dict[str, Any]:
    nb = ctx.get(NOTEBOOKS, n.notebook) if n.notebook else None
    snippet = " ".join(n.body.split())
    return {"id": n.id, "title": n.display_title(), "notebook": nb.name if nb is not None else None,
            "tags": list(n.tags), "participants": list(n.participants), "pinned": n.pinned, "archived": n.archived, "owner": n.owner,
            "permission": n.permission_of(ctx.user), "shared": bool(n.collaborators), "updated": _time(n.updated),
            "snippet": snippet[:120] + ("..." if len(snippet) > 120 else "")}


def note_json(ctx: ToolContext, n: Note) -> dict[str, Any]:
    """A note with every field, its notebook's name and the user's permission on it."""
    out = n.model_dump(mode="json")
    nb = ctx.get(NOTEBOOKS, n.notebook) if n.notebook else None
    out["notebook_name"] = nb.name if nb is not None else None
    out["permission"] = n.permission_of(ctx.user)
    return out


def _flags(d: dict[str, Any], me: bool) -> str:
    bits = [d["notebook"] or "no notebook"]
    if d["tags"]:
        bits.append("tags: " + ", ".join(d["tags"]))
    bits += [x for x in ("pinned", "archived") if d[x]]
    if d["permission"] != "owner":
        bits.append(f"shared by {d['owner']}, you can {d['permission']}")
    elif d["shared"] and me:
        bits.append("shared")
    return "; ".join(bits)


def _search_line(d: dict[str, Any]) -> str:
    return (f"{d['id']} {d['title'] or '(untitled)'} ({_flags(d, True)}), updated {d['updated']}"
            + (f": {d['snippet']}" if d["snippet"] else ""))


_render_search = render_list("notes", _search_line, "No notes match.")


def _render_note(data: dict) -> str:
    d = data["note"] if "note" in data else data
    lines = [f"{d['id']}: {d['title'] or '(untitled)'}",
             f"Notebook: {d['notebook_name'] or 'none'}; tags: {', '.join(d['tags']) or 'none'}"
             + ("; pinned" if d["pinned"] else "") + ("; archived" if d["archived"] else ""),
             f"Owner: {d['owner']} (your permission: {d['permission']}); created {d['created']}, updated {d['updated']}"]
    if d.get("participants"):
        lines.append("Participants: " + ", ".join(d["participants"]))
    if d["collaborators"]:
        lines.append("Shared with: " + ", ".join(f"{c['email']} ({c['permission']})" for c in d["collaborators"]))
    if d["body"]:
        lines += ["", d["body"]]
    if data.get("changed") is not None:
        lines.append(f"Changed: {', '.join(data['changed']) or 'nothing'}")
    return "\n".join(lines)


def _render_notebooks(data: dict) -> str:
    if not data["notebooks"]:
        return "You have no notebooks."
    return "\n".join(f"- {nb['id']} {nb['name']}: {nb['notes']} notes ({nb['archived']} archived)"
                     for nb in data["notebooks"])


def _render_share(data: dict) -> str:
    parts = [f"Note {data['note']['id']} \"{data['note']['title']}\""]
    for what in ("added", "updated", "unchanged", "removed"):
        if data.get(what):
            parts.append(f"{what}: " + ", ".join(f"{c['email']} ({c['permission']})" if isinstance(c, dict) else c
                                                 for c in data[what]))
    if data.get("emailed"):
        parts.append("e-mailed: " + ", ".join(f"{m['to']} ({m['id']})" for m in data["emailed"]))
    return "; ".join(parts) + "."


# --- search ---------------------------------------------------------------------------------------


@tool(read_only=True, render=_render_search)
def search_notes(
    ctx: ToolContext, query: str = "", tag: str | None = None, notebook: str | None = None,
    participant: str | None = None, include_archived: bool = False, limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> dict:
    """List or search your notes and the notes shared with you: pinned first, then most recently updated. Each result
    shows id, title, notebook, tags, flags, owner and the start of the body; archived notes are left out unless asked.

    Args:
        query: Words or "quoted phrases" that must all appear in the title, body or tags (case- and
            accent-insensitive); empty lists every note.
        tag: Only notes with this tag (case-insensitive).
        notebook: Only notes in this notebook of yours (name or id).
        participant: Only notes this person took part in: an address or a directory name.
        include_archived: Also return archived notes.
        limit: Most notes to return (1-100).
        offset: Number of matching notes to skip (for paging).
    """
    terms = query_terms(query, MAX_QUERY)
    want_tag = fold(as_argument(valid_tag, tag, "tag")) if tag is not None else None
    nb_id = _notebook(ctx, notebook).id if notebook is not None else None
    who = resolve_addresses(ctx, [participant], "participant")[0] if participant is not None else None
    hits = []
    for n in _visible(ctx):
        if who is not None and who not in n.participants:
            continue
        if n.archived and not include_archived:
            continue
        if want_tag is not None and want_tag not in (fold(t) for t in n.tags):
            continue
        if nb_id is not None and n.notebook != nb_id:
            continue
        if matches_all(terms, n.title, n.body, *n.tags):
            hits.append(n)
    hits.sort(key=lambda n: (not n.pinned, -(n.updated or ctx.now).timestamp(), n.id))
    page = hits[offset:offset + limit]
    return {"total": len(hits), "offset": offset, "limit": limit, "notes": [_summary(ctx, n) for n in page]}


# --- notes ----------------------------------------------------------------------------------------


@tool(read_only=True, render=_render_note)
def get_note(ctx: ToolContext, id: str) -> dict:
    """Get one note in full: title, body, notebook, tags, flags, owner, collaborators and your permission on it.

    Args:
        id: The note id, e.g. note-0001ab12 (from search_notes).
    """
    return note_json(ctx, _note(ctx, id))


@tool(render=_render_note)
def create_note(
    ctx: ToolContext, title: str, body: str = "", notebook: str | None = None, tags: list[str] = [],
    pinned: bool = False, format: Format = "markdown", participants: list[str] = [],
) -> dict:
    """Create a note owned by you, optionally in one of your notebooks, with tags; it is not shared until you share it.

    Args:
        title: One-line title (may be empty when the body is not).
        body: The note's text.
        notebook: Name or id of one of your notebooks; none if omitted.
        tags: Tags, e.g. ["meeting", "q2 planning"].
        pinned: Pin the note to the top of lists.
        format: How the body is written: markdown or text.
        participants: Who took part (e.g. a meeting's attendees): addresses or names from the directory; an ambiguous
            name is refused with the candidates listed. Participants are not given access; share_note does that.
    """
    t = one_line(title, "title", MAX_TITLE, required=False)
    b = clean_text(body, "body", MAX_TEXT)
    if not t and not b:
        raise InvalidArgument("title and body are both empty; give at least a title")
    nb = _notebook(ctx, notebook).id if notebook is not None else None
    n = Note(id=ctx.new_id("note"), title=t, body=b, format=format, notebook=nb, tags=_tags(tags, "tags"),
             pinned=pinned, owner=ctx.user, participants=_participants(ctx, participants, "participants"),
             created=ctx.now, updated=ctx.now)
    ctx.put(NOTES, n)
    return {"note": note_json(ctx, n)}


@tool(render=_render_note)
def update_note(
    ctx: ToolContext, id: str, title: str | None = None, body: str | None = None, append: str | None = None,
    add_tags: list[str] = [], remove_tags: list[str] = [], pinned: bool | None = None,
    archived: bool | None = None, format: Format | None = None, add_participants: list[str] = [],
    remove_participants: list[str] = [],
) -> dict:
    """Change a note; only what is given changes. Replace the body with `body`, or add to its end with `append`
    (a new paragraph), not both. Needs ownership or edit permission.

    Args:
        id: The note id.
        title: New one-line title.
        body: New body, replacing the old one.
        append: Text to add at the end of the body, separated from it by a blank line.
        add_tags: Tags to add.
        remove_tags: Tags to remove (case-insensitive); each must be on the note.
        pinned: Pin (true) or unpin (false).
        archived: Archive (true) or bring back from the archive (false).
        format: How the body is written: markdown or text.
        add_participants: People to add as participants (addresses or directory names).
        remove_participants: Participants to remove; each must be on the note.
    """
    n = _editable(ctx, id)
    if all(v is None for v in (title, body, append, pinned, archived, format)) and not (
            add_tags or remove_tags or add_participants or remove_participants):
        raise InvalidArgument("nothing to change; give at least one of title, body, append, tags, pinned, archived")
    if body is not None and append is not None:
        raise InvalidArgument("give body (to replace the text) or append (to add to it), not both")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = one_line(title, "title", MAX_TITLE, required=False)
    if body is not None:
        changes["body"] = clean_text(body, "body", MAX_TEXT)
    if append is not None:
        extra = clean_text(append, "append", MAX_TEXT, required=True)
        joined = f"{n.body.rstrip()}\n\n{extra}" if n.body.strip() else extra
        if len(joined) > MAX_TEXT:
            raise InvalidArgument(f"the body would be {len(joined)} characters long; at most {MAX_TEXT} are allowed")
        changes["body"] = joined
    if not changes.get("title", n.title) and not changes.get("body", n.body):
        raise InvalidArgument("a note needs a title or a body; this change would leave it with neither")
    for name, value in (("pinned", pinned), ("archived", archived), ("format", format)):
        if value is not None:
            changes[name] = value
    _, changes["tags"], missing = edit_tag_list(n.tags, _tags(add_tags, "add_tags"), _tags(remove_tags, "remove_tags"))
    if missing:
        raise InvalidArgument(f"note {n.id} has no tag {', '.join(missing)}; its tags are {', '.join(n.tags) or 'none'}")
    people = list(n.participants)
    people += [x for x in _participants(ctx, add_participants, "add_participants") if x not in people]
    gone = resolve_addresses(ctx, remove_participants, "remove_participants")
    missing = [x for x in gone if x not in people]
    if missing:
        raise InvalidArgument(f"{', '.join(missing)} not a participant of note {n.id}; its participants are "
                              f"{', '.join(people) or 'none'}")
    if len(people) > MAX_PARTICIPANTS:
        raise InvalidArgument(f"a note may have at most {MAX_PARTICIPANTS} participants")
    changes["participants"] = [x for x in people if x not in gone]
    n, changed = ctx.update(NOTES, n, changes, updated=ctx.now)
    return {"note": note_json(ctx, n), "changed": changed}


@tool(destructive=True)
def delete_note(ctx: ToolContext, id: str) -> dict:
    """Delete one of your notes permanently (collaborators lose it too). Archive it with update_note instead to keep it.

    Args:
        id: The note id.
    """
    n = _owned(ctx, id, "delete")
    ctx.delete(NOTES, n.id)
    return {"deleted": n.id, "title": n.display_title()}


@tool(idempotent=True, render=_render_note)
def move_note(ctx: ToolContext, id: str, notebook: str | None) -> dict:
    """Move one of your notes into another of your notebooks, or out of every notebook with null.

    Args:
        id: The note id.
        notebook: Name or id of the notebook to move it to; null for none.
    """
    n = _owned(ctx, id, "move")
    target = _notebook(ctx, notebook).id if notebook is not None else None
    changed = ["notebook"] if target != n.notebook else []
    if changed:
        n = n.evolve(notebook=target, updated=ctx.now)
        ctx.put(NOTES, n)
    return {"note": note_json(ctx, n), "changed": changed}


# --- notebooks ------------------------------------------------------------------------------------


@tool(read_only=True, render=_render_notebooks)
def list_notebooks(ctx: ToolContext) -> dict:
    """List your notebooks with how many notes each holds (and how many of those are archived)."""
    counts: dict[str, list[int]] = {}
    for n in ctx.values(NOTES):
        if n.notebook is not None and n.owner == ctx.user:
            c = counts.setdefault(n.notebook, [0, 0])
            c[0] += 1
            c[1] += n.archived
    books = sorted(_notebooks(ctx), key=lambda nb: (fold(nb.name), nb.id))
    return {"notebooks": [{"id": nb.id, "name": nb.name, "notes": counts.get(nb.id, [0, 0])[0],
                           "archived": counts.get(nb.id, [0, 0])[1]} for nb in books]}


@tool()
def create_notebook(ctx: ToolContext, name: str) -> dict:
    """Create a notebook (a folder for notes) of yours; names are unique, ignoring case.

    Args:
        name: The notebook's name, e.g. Project Atlas.
    """
    text = " ".join(one_line(name, "name", MAX_NAME, required=True).split())
    clash = next((nb for nb in _notebooks(ctx) if fold(nb.name) == fold(text)), None)
    if clash is not None:
        raise Conflict(f"you already have a notebook named {clash.name!r} ({clash.id})")
    nb = Notebook(id=ctx.new_id("nb"), name=text, owner=ctx.user, created=ctx.now)
    ctx.put(NOTEBOOKS, nb)
    return {"id": nb.id, "name": nb.name}


# --- sharing --------------------------------------------------------------------------------------


def _mail_body(ctx: ToolContext, n: Note, permission: str, message: str) -> str:
    intro = f"{ctx.user} shared the note \"{n.display_title()}\" with you ({permission} access)."
    parts = [intro, message] if message else [intro]
    parts += ["-" * 40, n.title, n.body] if n.title else ["-" * 40, n.body]
    return "\n\n".join(p for p in parts if p)


@tool(render=_render_share)
def share_note(
    ctx: ToolContext, id: str, people: list[str], permission: Permission = "view", notify_by_email: bool = False,
    message: str = "",
) -> dict:
    """Share one of your notes with people, who may then view it or also edit it; someone already sharing it gets the
    new permission. With notify_by_email each new collaborator is also sent the note by e-mail (needs mail).

    Args:
        id: The note id.
        people: E-mail addresses or directory names, e.g. ["dana@example.com", "Omar Haddad"].
        permission: view (read only) or edit.
        notify_by_email: Also e-mail the note to each person newly added.
        message: A short message to put above the note in the e-mail.
    """
    n = _owned(ctx, id, "share")
    if not people:
        raise InvalidArgument("people is empty; give at least one address or name")
    if len(people) > MAX_COLLABORATORS:
        raise InvalidArgument(f"people has {len(people)} entries; at most {MAX_COLLABORATORS} are allowed")
    note_text = clean_text(message, "message", MAX_MESSAGE)
    if note_text and not notify_by_email:
        raise InvalidArgument("message is only sent with notify_by_email=true; set it or leave message empty")
    if notify_by_email and not ctx.has_tool("send_email"):
        raise Unavailable("this workspace has no mail, so the note cannot be sent by e-mail; "
                          "share it with notify_by_email=false")
    emails = resolve_addresses(ctx, people, "people")
    if n.owner in emails:
        raise InvalidArgument(f"{n.owner} owns note {n.id}; share it with other people")
    current = {c.email: c for c in n.collaborators}
    added, updated, unchanged = [], [], []
    for e in emails:
        old = current.get(e)
        if old is None:
            added.append(e)
        elif old.permission != permission:
            updated.append(e)
        else:
            unchanged.append(e)
        current[e] = Collaborator(email=e, permission=permission)
    if len(current) > MAX_COLLABORATORS:
        raise InvalidArgument(f"a note can be shared with at most {MAX_COLLABORATORS} people")
    if added or updated:
        n = n.evolve(collaborators=[current[e] for e in sorted(current)], updated=ctx.now)
        ctx.put(NOTES, n)
    emailed = []
    if notify_by_email:
        subject = f"Shared note: {n.display_title()}"
        for e in added:
            sent = ctx.invoke("send_email", to=[e], subject=subject, body=_mail_body(ctx, n, permission, note_text))
            emailed.append({"to": e, "id": sent["id"]})
    listed = lambda xs: [{"email": e, "permission": permission} for e in xs]  # noqa: E731
    return {"note": _summary(ctx, n), "added": listed(added), "updated": listed(updated),
            "unchanged": listed(unchanged), "emailed": emailed}


@tool(render=_render_share)
def unshare_note(ctx: ToolContext, id: str, people: list[str]) -> dict:
    """Stop sharing one of your notes with some people; each must currently be a collaborator.

    Args:
        id: The note id.
        people: E-mail addresses or directory names of the collaborators to remove.
    """
    n = _owned(ctx, id, "unshare")
    if not people:
        raise InvalidArgument("people is empty; give at least one collaborator to remove")
    if len(people) > MAX_COLLABORATORS:
        raise InvalidArgument(f"people has {len(people)} entries; at most {MAX_COLLABORATORS} are allowed")
    emails = resolve_addresses(ctx, people, "people")
    current = [c.email for c in n.collaborators]
    missing = [e for e in emails if e not in current]
    if missing:
        raise InvalidArgument(f"note {n.id} is not shared with {', '.join(missing)}; "
                              f"its collaborators are {', '.join(current) or 'none'}")
    n = n.evolve(collaborators=[c for c in n.collaborators if c.email not in emails], updated=ctx.now)
    ctx.put(NOTES, n)
    return {"note": _summary(ctx, n), "removed": emails}
