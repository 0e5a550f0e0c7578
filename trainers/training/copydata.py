"""Copy sequences in the demo's chat and tool-call format: the curriculum that teaches a student to copy.

A student trained from scratch on teacher demonstrations learns tool names and constant values but
does not learn to copy a value from its context into a call's arguments (issue 15): nothing in the
demonstrations forces copying more than memorising. These examples do. Each is an HF-format SFT
example (`{"messages": [...], "tools": [...]}`, calls with dict arguments) whose assistant calls
repeat, verbatim, values that only the context holds: fresh random names, paths, emails, keys,
numbers and titles, never drawn from a fixed list, so no amount of memorising predicts them.

Two kinds:

- `repeat`: the request (and the system prompt's user) hold the values; the call must repeat them
  exactly, then the answer quotes what the tool returned;
- `select`: the request names one item by its title; a search returns several candidates (each a
  fresh key and title); the next call must use the key of the one candidate whose title matches.

`max_chars` bounds each value's length, so a training loop raises it as a curriculum (short spans
first). Every example is fixed by its `random.Random`, so a seed reproduces the stream.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["name", "path", "email", "key", "number", "title"]
KINDS: tuple[Kind, ...] = ("name", "path", "email", "key", "number", "title")
MIN_CHARS = 5  # the shortest value drawn
SHORTEST_BOUND = 8  # the smallest `max_chars` every kind can meet (an email: `ba@ce.io`)
MAX_CHARS = 30

_CONSONANTS = "bcdfghjklmnprstvwxz"
_VOWELS = "aeiou"
_EXTENSIONS = (".txt", ".md", ".csv", ".pdf", ".json", ".log", ".bak", ".docx")
_TLDS = (".com", ".io", ".co", ".net", ".example")

# One-line signatures are what the demo's student sees (`compact_tools`); descriptions are kept short.
_TOOL_ARGS: dict[str, tuple[str, ...]] = {
    "create_record": ("name", "email", "owner"),
    "create_ticket": ("project", "title", "assignee"),
    "move_file": ("source", "destination"),
    "send_message": ("to", "subject", "body"),
    "set_value": ("key", "value"),
    "search_items": ("query",),
    "update_item": ("key", "status"),
}
# Which argument of a repeat tool takes which kind of value.
_ARG_KIND: dict[str, Kind] = {
    "name": "name", "email": "email", "owner": "email", "project": "key", "title": "title", "assignee": "email",
    "source": "path", "destination": "path", "to": "email", "subject": "title", "body": "title", "key": "key",
    "value": "number",
}
_REPEAT_TOOLS = ("create_record", "create_ticket", "move_file", "send_message", "set_value")
_STATUSES = ("Open", "In Progress", "Resolved", "Closed")


@dataclass
class CopyExample:
    """One generated example and what it asks to copy: `values` are the argument values the calls
    must repeat (each a verbatim span of the context before its call); for a select example,
    `candidates` are the keys the search returned and `answer` the one right key."""

    kind: Literal["repeat", "select"]
    example: dict[str, Any]
    values: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    answer: str | None = None


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) + (rng.choice(_CONSONANTS) if rng.random() < 0.3
                                                                    else "") for _ in range(syllables))


def _fit(make: Any, rng: random.Random, max_chars: int) -> str:
    """Draw from `make(rng, budget)` until the value has between MIN_CHARS and `max_chars` characters."""
    for _ in range(100):
        budget = rng.randint(MIN_CHARS, max_chars)
        value = make(rng, budget)
        if MIN_CHARS <= len(value) <= max_chars:
            return value
    raise RuntimeError(f"could not draw a value of at most {max_chars} characters")  # pragma: no cover


def _name(rng: random.Random, budget: int) -> str:
    first = _word(rng, max(1, min(3, budget // 6))).capitalize()
    last = _word(rng, max(1, min(4, (budget - len(first) - 1) // 3))).capitalize()
    return f"{first} {last}"


def _path(rng: random.Random, budget: int) -> str:
    parts: list[str] = []
    while sum(len(p) + 1 for p in parts) + 12 < budget and len(parts) < 4:
        parts.append(_word(rng, rng.randint(1, 2)))
    return "/" + "/".join([*parts, _word(rng, 1) + rng.choice(_EXTENSIONS)])


def _email(rng: random.Random, budget: int) -> str:
    local = _word(rng, max(1, (budget - 8) // 6)) + ("." + _word(rng, 1) if budget > 16 else "")
    tlds = _TLDS if budget > 10 else (".io", ".co")
    return f"{local}@{_word(rng, max(1, (budget - len(local)) // 6))}{rng.choice(tlds)}"


def _key(rng: random.Random, budget: int) -> str:
    letters = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(rng.randint(2, min(8, max(2, budget - 3)))))
    digits = max(1, min(6, budget - len(letters) - 1))
    return f"{letters}-{rng.randint(10 ** (digits - 1), 10 ** digits - 1)}"


def _number(rng: random.Random, budget: int) -> str:
    n = max(MIN_CHARS, min(budget, 16))
    return str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))


def _title(rng: random.Random, budget: int) -> str:
    words = [_word(rng, rng.randint(1, 3))]
    while len(" ".join(words)) + 5 < budget:
        words.append(_word(rng, rng.randint(1, 2)))
    return " ".join(words).capitalize()


_MAKERS = {"name": _name, "path": _path, "email": _email, "key": _key, "number": _number, "title": _title}


def random_value(rng: random.Random, kind: Kind, max_chars: int = MAX_CHARS) -> str:
    """A fresh random value of `kind`, MIN_CHARS to `max_chars` characters long (made of random syllables
    and digits, so it is almost never one seen before)."""
    if kind not in _MAKERS:
        raise ValueError(f"unknown value kind {kind!r}; known: {', '.join(KINDS)}")
    if not SHORTEST_BOUND <= max_chars <= 200:
        raise ValueError(f"max_chars must be between {SHORTEST_BOUND} and 200, got {max_chars}")
    return _fit(_MAKERS[kind], rng, max_chars)


def _tool_schema(name: str) -> dict[str, Any]:
    args = _TOOL_ARGS[name]
    return {"type": "function", "function": {
        "name": name, "description": name.replace("_", " ").capitalize() + ".",
        "parameters": {"type": "object", "properties": {a: {"type": "string"} for a in args}, "required": list(args)}}}


def _system(rng: random.Random, max_chars: int) -> tuple[str, str, str]:
    user, email = random_value(rng, "name", max_chars), random_value(rng, "email", max_chars)
    org = _word(rng, 2).capitalize()
    text = rng.choice((f"You act for {user} <{email}> at {org}.",
                       f"You are an AI coworker acting for {user} <{email}> at {org}, in their workspace."))
    return text, user, email


def repeat_example(rng: random.Random, max_chars: int = MAX_CHARS) -> CopyExample:
    """A request holding fresh values and one call that must repeat them (the user's own email may
    come from the system prompt), then an answer quoting the tool's reply."""
    system, _user, user_email = _system(rng, max_chars)
    tool = rng.choice(_REPEAT_TOOLS)
    args: dict[str, str] = {}
    phrases = []
    for arg in _TOOL_ARGS[tool]:
        if arg in ("owner", "assignee") and rng.random() < 0.3:
            args[arg] = user_email
            phrases.append(f"{arg} me")
            continue
        args[arg] = random_value(rng, _ARG_KIND[arg], max_chars)
        phrases.append(f"{arg} {args[arg]}")
    request = rng.choice(("Please {verb} with {args}.", "Could you {verb}? Use {args}.", "{Verb}: {args}."))
    verb = tool.replace("_", " ")
    request = request.format(verb=verb, Verb=verb.capitalize(), args=", ".join(phrases))
    receipt = random_value(rng, "key", max_chars)
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": request},
        {"role": "assistant", "tool_calls": [_call(tool, args, 0)]},
        {"role": "tool", "content": f"Done: {receipt}", "tool_call_id": "call_0", "name": tool},
        {"role": "assistant", "content": f"Done, the reference is {receipt}."},
    ]
    tools = [_tool_schema(t) for t in sorted({tool, *rng.sample(_REPEAT_TOOLS, 2)})]
    return CopyExample("repeat", {"messages": messages, "tools": tools}, [*args.values(), receipt])


def select_example(rng: random.Random, max_chars: int = MAX_CHARS, candidates: int | None = None) -> CopyExample:
    """A request naming an item by title, a search (the query copies the title) returning several
    candidates with fresh keys, and an update that must use the one matching candidate's key."""
    system, _, _ = _system(rng, max_chars)
    n = candidates or rng.randint(2, 5)
    titles: list[str] = []
    while len(titles) < n:
        t = random_value(rng, "title", max_chars)
        if all(t not in o and o not in t for o in titles):  # no candidate's title holds another's
            titles.append(t)
    keys: list[str] = []
    while len(keys) < n:
        k = random_value(rng, "key", max_chars)
        if all(k not in o and o not in k for o in keys):
            keys.append(k)
    right = rng.randrange(n)
    status = rng.choice(_STATUSES)
    request = f"Find the item titled \"{titles[right]}\" and set its status to {status}."
    listing = "\n".join(f"{k} [{rng.choice(_STATUSES)}] {t}" for k, t in zip(keys, titles))
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": request},
        {"role": "assistant", "tool_calls": [_call("search_items", {"query": titles[right]}, 0)]},
        {"role": "tool", "content": f"{n} items:\n{listing}", "tool_call_id": "call_0", "name": "search_items"},
        {"role": "assistant", "tool_calls": [_call("update_item", {"key": keys[right], "status": status}, 1)]},
        {"role": "tool", "content": f"{keys[right]} is now {status}.", "tool_call_id": "call_1", "name": "update_item"},
        {"role": "assistant", "content": f"Set {keys[right]} to {status}."},
    ]
    tools = [_tool_schema("search_items"), _tool_schema("update_item")]
    return CopyExample("select", {"messages": messages, "tools": tools}, [titles[right], keys[right], status],
                       candidates=keys, answer=keys[right])


def _call(name: str, args: dict[str, str], n: int) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": dict(args)}, "id": f"call_{n}"}


def copy_example(rng: random.Random, max_chars: int = MAX_CHARS, select_share: float = 0.4) -> CopyExample:
    """A repeat example, or with probability `select_share` a select example."""
    if not 0.0 <= select_share <= 1.0:
        raise ValueError(f"select_share must be between 0 and 1, got {select_share}")
    return select_example(rng, max_chars) if rng.random() < select_share else repeat_example(rng, max_chars)


def curriculum_chars(progress: float, start: int = 8, end: int = MAX_CHARS, ramp: float = 0.5) -> int:
    """The value-length bound at `progress` (0..1) through training: from `start` up to `end`,
    reached at `ramp`, then held (short spans first, as in the issue's curriculum)."""
    if not 0.0 <= ramp <= 1.0:
        raise ValueError(f"ramp must be between 0 and 1, got {ramp}")
    p = 1.0 if ramp == 0 else min(1.0, max(0.0, progress) / ramp)
    return max(SHORTEST_BOUND, round(start + (end - start) * p))


def copy_examples(seed: int, count: int, max_chars: int = MAX_CHARS, select_share: float = 0.4) -> list[CopyExample]:
    """`count` examples drawn from `random.Random(seed)`."""
    rng = random.Random(seed)
    return [copy_example(rng, max_chars, select_share) for _ in range(count)]
