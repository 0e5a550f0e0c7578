"""The knowledge base service's tools (the package docstring says what the service models)."""

from __future__ import annotations

import difflib
from datetime import date, datetime
from typing import Any, Literal

from workspace_sim.core.context import ToolContext
from workspace_sim.core.errors import Conflict, InvalidArgument, NotFound
from workspace_sim.text.folding import fold
from workspace_sim.text.people import PEOPLE, resolve_address
from workspace_sim.core.registry import tool
from workspace_sim.text.validation import as_argument, clean_text, iso_date
from .records import (
    ARTICLES, SPACES, TICKETS, Status, MAX_TITLE, MAX_BODY, MAX_TAGS, MAX_RELATED, MAX_HISTORY, MAX_QUERY, TICKET_REF,
    WORD, article_tag, related_ref, unique_values, Space, ArticleVersion, Article,
)


# --- lookups and argument checks ------------------------------------------------------------------


def _article(ctx: ToolContext, ref: str) -> Article:
    a = ctx.get(ARTICLES, ref.strip())
    if a is not None:
        return a
    titles = {x.id: x.title for x in ctx.values(ARTICLES)}
    by_title = {fold(t): i for i, t in titles.items()}
    close = difflib.get_close_matches(ref.strip(), list(titles), n=3, cutoff=0.6)
    close += [by_title[t] for t in difflib.get_close_matches(fold(ref.strip()), list(by_title), n=3, cutoff=0.6)]
    hints = [f"{i} ({titles[i]})" for i in dict.fromkeys(close)]
    hint = f"; did you mean {', '.join(hints)}?" if hints else "; use search_articles to find article ids"
    raise NotFound(f"article {ref.strip()!r} not found{hint}")


def _space(ctx: ToolContext, ref: str) -> Space:
    s = ctx.get(SPACES, ref.strip().upper())
    if s is None:
        named = [x for x in ctx.values(SPACES) if fold(x.name) == fold(" ".join(ref.split()))]
        if len(named) == 1:
            return named[0]
        known = ", ".join(f"{x.key} ({x.name})" for x in ctx.values(SPACES)) or "none"
        raise NotFound(f"space {ref.strip()!r} not found; spaces: {known}")
    return s


def _person(ctx: ToolContext, value: str, what: str) -> str:
    if value.strip().lower() == "me":
        return ctx.user
    email = resolve_address(ctx, value, what)
    if ctx.has_service("contacts") and email != ctx.user and ctx.get(PEOPLE, email) is None:
        raise NotFound(f"{what} {email} is not in the directory; use search_contacts to find people")
    return email


def _date(value: str, what: str) -> date | None:
    return iso_date(value, what, "2026-01-31", required=True)


def _title(value: str) -> str:
    return " ".join(clean_text(value, "title", MAX_TITLE, required=True).split())


def _related_items(ctx: ToolContext, values: list[str]) -> list[str]:
    items = as_argument(unique_values, values, related_ref, "related", MAX_RELATED)
    if ctx.has_service("tickets"):
        missing = [x for x in items if TICKET_REF.match(x) and ctx.get(TICKETS, x) is None]
        if missing:
            raise NotFound(f"related ticket(s) {', '.join(missing)} do not exist; use search_tickets to find keys")
    return items


# --- output ---------------------------------------------------------------------------------------


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t else None


def _summary(a: Article) -> dict[str, Any]:
    return {"id": a.id, "title": a.title, "space": a.space, "status": a.status, "tags": list(a.tags),
            "owner": a.owner, "updated": _iso(a.updated),
            "last_reviewed": a.last_reviewed.isoformat() if a.last_reviewed else None, "version": a.version}


def article_json(a: Article) -> dict[str, Any]:
    """An article with its current content and the list of earlier versions kept."""
    out = _summary(a)
    out.update(body=a.body, created=_iso(a.created), related=list(a.related), editor=a.editor or a.owner,
               change_note=a.change_note,
               versions=[{"version": h.version, "editor": h.editor, "saved": _iso(h.saved), "note": h.note}
                         for h in a.history])
    return out


def _line(d: dict[str, Any]) -> str:
    reviewed = f", reviewed {d['last_reviewed']}" if d["last_reviewed"] else ", never reviewed"
    tags = f" #{' #'.join(d['tags'])}" if d["tags"] else ""
    return (f"[{d['id']}] {d['title']} ({d['space']}, {d['status']}, v{d['version']}){tags} — owner "
            f"{d['owner'] or 'none'}, updated {(d['updated'] or '')[:10]}{reviewed}")


def _render_search(data: dict) -> str:
    if not data["articles"]:
        return "No articles match."
    first = data["offset"] + 1
    lines = [f"Articles {first}-{first + len(data['articles']) - 1} of {data['total']}:"]
    for d in data["articles"]:
        lines.append(f"- {_line(d)}")
        if d.get("snippet"):
            lines.append(f"    {d['snippet']}")
    return "\n".join(lines)


def _render_article(data: dict) -> str:
    d = data["article"]
    if data.get("historical"):
        head = f"[{d['id']}] {d['title']} — version {d['version']} of {data['current_version']} " \
               f"(an earlier version), saved {(d['saved'] or '')[:16].replace('T', ' ')} by {d['editor'] or 'unknown'}"
        return "\n".join([head, f"Tags: {', '.join(d['tags']) or 'none'}", "", d["body"]])
    lines = [_line(d)]
    if d["related"]:
        lines.append(f"Related: {', '.join(d['related'])}")
    if d["versions"]:
        lines.append("Earlier versions: " + ", ".join(
            f"v{v['version']} ({(v['saved'] or '')[:10]}{', ' + v['note'] if v['note'] else ''})"
            for v in d["versions"]))
    if data.get("changed") is not None:
        lines.append(f"Changed: {', '.join(data['changed']) or 'nothing'}")
    return "\n".join([*lines, "", d["body"]])


# --- tools ----------------------------------------------------------------------------------------


@tool(read_only=True, render=lambda d: "\n".join(
    [f"- {s['key']} {s['name']}: {s['published']} published, {s['draft']} draft, {s['archived']} archived"
     + (f" — {s['description']}" if s["description"] else "") for s in d["spaces"]]) or "No spaces.")
def list_spaces(ctx: ToolContext) -> dict:
    """List the knowledge base's spaces (sections) with how many articles each holds per status."""
    counts: dict[str, dict[str, int]] = {}
    for a in ctx.values(ARTICLES):
        c = counts.setdefault(a.space, {"draft": 0, "published": 0, "archived": 0})
        c[a.status] += 1
    return {"spaces": [{"key": s.key, "name": s.name, "description": s.description,
                        **counts.get(s.key, {"draft": 0, "published": 0, "archived": 0})} for s in ctx.values(SPACES)]}


def _score(a: Article, words: list[str]) -> tuple[int, int]:
    """(words matched, weighted score): title words count 3, tags 3, body occurrences 1 each (at most 3)."""
    title = set(WORD.findall(fold(a.title)))
    title_text, body = fold(a.title), fold(a.body)
    tags = {fold(t) for t in a.tags} | set(WORD.findall(fold(" ".join(a.tags))))
    matched = score = 0
    for w in words:
        s = 3 if w in title else 2 if w in title_text else 0
        s += 3 if w in tags else 0
        s += min(body.count(w), 3)
        if s:
            matched += 1
            score += s
    return matched, score


def _snippet(a: Article, words: list[str], width: int = 160) -> str:
    body = " ".join(a.body.split())
    folded = fold(body)
    spots = [folded.find(w) for w in words if folded.find(w) >= 0] if len(folded) == len(body) else []
    start = max(0, min(spots) - 40) if spots else 0
    text = body[start:start + width]
    return ("…" if start else "") + text + ("…" if start + width < len(body) else "")


@tool(read_only=True, render=_render_search)
def search_articles(
    ctx: ToolContext, query: str = "", space: str | None = None, tag: str | None = None, status: Status | None = None,
    owner: str | None = None, not_updated_since: str | None = None, not_reviewed_since: str | None = None,
    limit: int = 10, offset: int = 0,
) -> dict:
    """Search knowledge-base articles, best matches first: articles matching more query words rank higher, and a word
    in the title or tags counts more than one in the body. Each result shows its id (cite it), a snippet, the owner, and
    when it was updated and last reviewed. Archived articles are left out unless status is archived.

    Args:
        query: Words to look for in titles, tags and bodies, e.g. 'vpn reset'. Empty lists articles, newest update
            first.
        space: Only articles of this space (key or name).
        tag: Only articles with this tag.
        status: Only articles with this status: draft, published or archived.
        owner: Only articles owned by this person (an address, a directory name, or 'me').
        not_updated_since: Only stale articles: last updated before this date (YYYY-MM-DD).
        not_reviewed_since: Only articles not reviewed since this date (YYYY-MM-DD); never-reviewed ones included.
        limit: Most articles to return (1-50).
        offset: Matching articles to skip (for paging).
    """
    if not 1 <= limit <= 50:
        raise InvalidArgument("limit must be between 1 and 50")
    if offset < 0:
        raise InvalidArgument("offset must be zero or positive")
    if len(query) > MAX_QUERY:
        raise InvalidArgument(f"query is longer than {MAX_QUERY} characters; use a few words")
    words = list(dict.fromkeys(WORD.findall(fold(query))))
    in_space = _space(ctx, space).key if space is not None else None
    want_tag = as_argument(article_tag, tag) if tag is not None else None
    who = _person(ctx, owner, "owner") if owner is not None else None
    stale = _date(not_updated_since, "not_updated_since") if not_updated_since is not None else None
    unreviewed = _date(not_reviewed_since, "not_reviewed_since") if not_reviewed_since is not None else None
    ranked: list[tuple[tuple[int, int], Article]] = []
    for a in ctx.values(ARTICLES):
        if (status is None and a.status == "archived") or (status is not None and a.status != status):
            continue
        if in_space is not None and a.space != in_space or want_tag is not None and want_tag not in a.tags:
            continue
        if who is not None and a.owner != who:
            continue
        if stale is not None and (a.updated or ctx.now).date() >= stale:
            continue
        if unreviewed is not None and a.last_reviewed is not None and a.last_reviewed >= unreviewed:
            continue
        rank = _score(a, words) if words else (0, 0)
        if words and not rank[0]:
            continue
        ranked.append((rank, a))
    ranked.sort(key=lambda ra: (-ra[0][0], -ra[0][1], -(ra[1].updated or ctx.now).timestamp(), ra[1].id))
    page = []
    for rank, a in ranked[offset:offset + limit]:
        page.append({**_summary(a), "score": rank[1], "snippet": _snippet(a, words)})
    return {"query": query, "total": len(ranked), "offset": offset, "limit": limit, "articles": page}


@tool(read_only=True, render=_render_article)
def get_article(ctx: ToolContext, article_id: str, version: int | None = None) -> dict:
    """Get an article's full text and details (id, owner, status, tags, related tickets or links, updated and reviewed
    dates, earlier versions), or the text of one earlier version.

    Args:
        article_id: The article id, e.g. kb-0001abcd.
        version: An earlier version number to read instead of the current one.
    """
    a = _article(ctx, article_id)
    if version is None or version == a.version:
        return {"article": article_json(a), "historical": False, "current_version": a.version}
    old = next((h for h in a.history if h.version == version), None)
    if old is None:
        kept = (f"versions kept: {', '.join(str(h.version) for h in a.history)}" if a.history
                else "no earlier versions are kept")
        raise NotFound(f"article {a.id} has no version {version} (current is {a.version}; {kept})")
    return {"article": {"id": a.id, **old.model_dump(mode="json")}, "historical": True, "current_version": a.version}


@tool(render=_render_article)
def create_article(
    ctx: ToolContext, space: str, title: str, body: str, tags: list[str] = [], status: Literal["draft", "published"] =
    "draft", related: list[str] = [], owner: str = "me",
) -> dict:
    """Create an article in a space; it gets a new stable id (e.g. kb-0001abcd) and version 1.

    Args:
        space: The space key or name, e.g. IT.
        title: The article's title; must not repeat another title in the space.
        body: Its text (Markdown).
        tags: Tags, free text in any script, e.g. ["vpn", "remote access", "远程办公"].
        status: draft (the default) or published.
        related: Related ticket keys (e.g. OPS-12) or https:// links.
        owner: Who owns it: an address, a directory name, or 'me'.
    """
    s = _space(ctx, space)
    t = _title(title)
    clash = [x for x in ctx.values(ARTICLES) if x.space == s.key and fold(x.title) == fold(t)]
    if clash:
        raise InvalidArgument(f"space {s.key} already has an article titled {t!r} ({clash[0].id}); update it instead")
    key = ctx.new_id("kb")
    while ctx.get(ARTICLES, key) is not None:  # seeded data may already use an id of the same shape
        key = ctx.new_id("kb")
    a = Article(id=key, space=s.key, title=t, body=clean_text(body, "body", MAX_BODY),
                tags=as_argument(unique_values, tags, article_tag, "tags", MAX_TAGS), owner=_person(ctx, owner, "owner"),
                status=status, created=ctx.now, updated=ctx.now, version=1, editor=ctx.user,
                related=_related_items(ctx, related))
    ctx.put(ARTICLES, a)
    return {"article": article_json(a)}


def _check_version(a: Article, expected: int | None) -> None:
    if expected is not None and expected != a.version:
        raise Conflict(f"article {a.id} is at version {a.version}, not the version {expected} you expected: someone "
                       "changed it since you read it; get_article again and redo your change on the current text")


@tool(render=_render_article)
def update_article(
    ctx: ToolContext, article_id: str, body: str | None = None, mode: Literal["replace", "append"] = "replace",
    title: str | None = None, tags: list[str] | None = None, related: list[str] | None = None,
    owner: str | None = None, expected_version: int | None = None, note: str = "",
) -> dict:
    """Edit an article: replace its body or append to it, and/or change title, tags, related items or owner. A change
    saves the previous version in its history and adds one to the version number. Give expected_version (the version
    you read) to refuse the edit with a conflict if someone changed the article in between. Archived articles cannot be
    edited; publish them first.

    Args:
        article_id: The article id.
        body: New text: replaces the body (mode replace) or is added at its end after a blank line (mode append).
        mode: replace or append, for body.
        title: New title.
        tags: The complete new list of tags.
        related: The complete new list of related ticket keys or https:// links.
        owner: New owner: an address, a directory name, or 'me'.
        expected_version: The version you based the edit on; the edit fails if the article is at another version.
        note: A short note saying what changed, kept with the version history.
    """
    a = _article(ctx, article_id)
    _check_version(a, expected_version)
    if all(v is None for v in (body, title, tags, related, owner)):
        raise InvalidArgument("nothing to change; give body, title, tags, related or owner")
    if a.status == "archived":
        raise InvalidArgument(f"article {a.id} is archived; publish_article it first to edit it")
    changes: dict[str, Any] = {}
    if body is not None:
        text = clean_text(body, "body", MAX_BODY)
        if mode == "append":
            if not text:
                raise InvalidArgument("body to append is empty")
            text = f"{a.body.rstrip()}\n\n{text}" if a.body.strip() else text
            if len(text) > MAX_BODY:
                raise InvalidArgument(f"the appended body would be {len(text)} characters; "
                                      f"at most {MAX_BODY} are allowed")
        changes["body"] = text
    if title is not None:
        changes["title"] = _title(title)
        clash = [x for x in ctx.values(ARTICLES) if x.id != a.id and x.space == a.space
                 and fold(x.title) == fold(changes["title"])]
        if clash:
            raise InvalidArgument(f"space {a.space} already has an article titled {changes['title']!r} ({clash[0].id})")
    if tags is not None:
        changes["tags"] = as_argument(unique_values, tags, article_tag, "tags", MAX_TAGS)
    if related is not None:
        changes["related"] = _related_items(ctx, related)
    if owner is not None:
        changes["owner"] = _person(ctx, owner, "owner")
    note_text = clean_text(note, "note", 300)
    changed = sorted(k for k, v in changes.items() if getattr(a, k) != v)
    if changed:
        saved = ArticleVersion(version=a.version, title=a.title, body=a.body, tags=list(a.tags),
                               editor=a.editor or a.owner, saved=a.updated, note=a.change_note)
        history = [*a.history, saved][-MAX_HISTORY:]
        a = a.evolve(**{k: changes[k] for k in changed}, version=a.version + 1, history=history, updated=ctx.now,
                     editor=ctx.user, change_note=note_text)
        ctx.put(ARTICLES, a)
    return {"article": article_json(a), "changed": changed}


def _set_status(ctx: ToolContext, article_id: str, status: str, expected: int | None) -> dict:
    a = _article(ctx, article_id)
    _check_version(a, expected)
    if a.status == status:
        raise InvalidArgument(f"article {a.id} is already {status}")
    a = a.evolve(status=status, updated=ctx.now)
    ctx.put(ARTICLES, a)
    return {"article": article_json(a), "changed": ["status"]}


@tool(render=_render_article)
def publish_article(ctx: ToolContext, article_id: str, expected_version: int | None = None) -> dict:
    """Publish a draft article, or restore an archived one, so readers see it.

    Args:
        article_id: The article id.
        expected_version: The version you reviewed; refused with a conflict if the article changed since.
    """
    return _set_status(ctx, article_id, "published", expected_version)


@tool(render=_render_article)
def archive_article(ctx: ToolContext, article_id: str) -> dict:
    """Archive an article: it leaves search results (unless searching archived ones) but keeps its text and history.

    Args:
        article_id: The article id.
    """
    return _set_status(ctx, article_id, "archived", None)


@tool(idempotent=True, render=_render_article)
def mark_article_reviewed(ctx: ToolContext, article_id: str) -> dict:
    """Record that an article was reviewed and is still accurate today (sets last_reviewed; the content is unchanged).

    Args:
        article_id: The article id.
    """
    a = _article(ctx, article_id)
    today = ctx.now.date()
    changed = [] if a.last_reviewed == today else ["last_reviewed"]
    if changed:
        a = a.evolve(last_reviewed=today)
        ctx.put(ARTICLES, a)
    return {"article": article_json(a), "changed": changed}
