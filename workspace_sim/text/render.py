"""Text renderings shared by services' tools (a tool's `render` turns its JSON result into what the agent reads)."""

from __future__ import annotations

from typing import Any, Callable


def render_list(key: str, line: Callable[[dict[str, Any]], str], empty: str) -> Callable[[dict], str]:
    """A renderer for a page of results under `key`: a 'Key a-b of total:' head (from `offset` and `total`), then
    one '- ' line per row made by `line`; `empty` when the page has no rows."""
    def render(data: dict) -> str:
        rows = data[key]
        if not rows:
            return empty
        first = data.get("offset", 0) + 1
        head = f"{key.capitalize()} {first}-{first + len(rows) - 1} of {data['total']}:"
        return "\n".join([head, *(f"- {line(r)}" for r in rows)])

    return render
