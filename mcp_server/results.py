"""Shaping workspace results into MCP tool answers under a size limit, with pages for long ones.

An answer is the readable text plus, for a success, the structured data. When both together exceed
the episode's limit (`WorkspaceConfig.max_result_chars`), the structured part is dropped and the
text is cut into pages; the first page ends with a note naming the pager tool and the result id
that fetch the next page. Pages are cut deterministically (at a line end when one is near).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Annotated, Any

from pydantic import Field

from workspace_sim import ToolResult
from workspace_sim.media import MediaPart, media_parts, strip_media
from workspace_sim.core.registry import ToolHints, make_tool

def read_result_page(ctx: Any, result_id: str, page: Annotated[int, Field(ge=1)]) -> dict[str, Any]:
    """Read another page of a tool result that was too long to return at once. A long result ends with a note giving its result_id and the next page number; pass them here.

    Args:
        result_id: The id given in the truncated result's note, e.g. 'r12'.
        page: Page number, from 1.
    """
    raise NotImplementedError("served by ResultPager.page; this function only defines the tool")


# The pager is the MCP layer's own tool, not a service's, but its schema comes from the registry all the same.
PAGER = make_tool(read_result_page, "mcp", ToolHints(read_only=True, idempotent=True))
PAGER_TOOL = PAGER.name
NOTE_RESERVE = 400  # room kept on each page for the note that follows it
KEEP_RESULTS = 64  # long results kept per episode for paging (oldest dropped first)


@dataclass(frozen=True)
class Answer:
    """One MCP tool answer: text, optional structured content, whether it is an error, and the images or audio
    it carries (sent as MCP image/audio content after the text; not counted against the size limit)."""

    text: str
    structured: dict[str, Any] | None
    is_error: bool
    result_id: str | None = None
    pages: int = 1
    media: tuple[MediaPart, ...] = ()

    @property
    def size(self) -> int:
        """Characters the answer occupies: the text plus the structured content's JSON (media not counted)."""
        return len(self.text) + (len(_dumps(self.structured)) if self.structured is not None else 0)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _shown(value: Any, most: int = 80) -> str:
    """A value for an error message, cut short: an argument is never echoed at length."""
    text = repr(value)
    return text if len(text) <= most else f"{text[:most]}... ({len(text):,} characters)"


def split_pages(text: str, page_chars: int) -> list[str]:
    """Cut text into pages of at most `page_chars`, preferring a line end in each page's last fifth."""
    if page_chars < 1:
        raise ValueError("page_chars must be positive")
    pages, start = [], 0
    while start < len(text):
        end = min(start + page_chars, len(text))
        if end < len(text):
            nl = text.rfind("\n", start + page_chars * 4 // 5, end)
            if nl != -1:
                end = nl + 1
        pages.append(text[start:end])
        start = end
    return pages or [""]


class ResultPager:
    """Shapes one episode's results to the size limit and keeps long ones for `read_result_page`."""

    def __init__(self, limit: int) -> None:
        if limit < NOTE_RESERVE + 100:
            raise ValueError(f"max_result_chars must be at least {NOTE_RESERVE + 100}, got {limit}")
        self.limit = limit
        self._kept: OrderedDict[str, list[str]] = OrderedDict()
        self._events: dict[str, Any] = {}  # result id -> its workspace event, which records the pages delivered

    def shape(self, result: ToolResult) -> Answer:
        """The answer for a workspace result: whole when it fits, else page 1 with a note."""
        if not result.ok:
            return Answer(self._clip(result.text), None, True)
        data = result.data
        media = media_parts(data)
        structured = strip_media(data) if isinstance(data, dict) else {"result": data}
        whole = Answer(result.text, structured, False, media=media)
        if whole.size <= self.limit:
            return whole
        result_id = f"r{result.event.index}"
        pages = split_pages(result.text, self.limit - NOTE_RESERVE)
        self._kept[result_id] = pages
        self._events[result_id] = result.event
        result.event.delivered = [pages[0]]
        while len(self._kept) > KEEP_RESULTS:
            self._events.pop(self._kept.popitem(last=False)[0], None)
        first = self._page_answer(result_id, pages, 1)
        return replace(first, media=media) if media else first

    def page(self, result_id: Any, page: Any) -> Answer:
        """Another page of a kept result, or an error answer saying what was wrong (a missing argument by name,
        with the ids kept now)."""
        if result_id is None or not isinstance(result_id, str):
            said = "result_id is missing" if result_id is None else f"result_id must be a string, got {_shown(result_id)}"
            return Answer(f"Error (invalid_argument): {said}; {PAGER_TOOL} needs result_id and page, both given in "
                          f"the note at the end of a truncated result ({self._known()})", None, True)
        if result_id not in self._kept:
            return Answer(f"Error (not_found): no long result with id {_shown(result_id)}; ids come from the note at the "
                          f"end of a truncated result ({self._known()})", None, True)
        pages = self._kept[result_id]
        if page is None:
            return Answer(f"Error (invalid_argument): page is missing; give a whole number from 1 to {len(pages)} "
                          f"for {result_id}", None, True)
        if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= len(pages):
            return Answer(f"Error (invalid_argument): page must be a whole number from 1 to {len(pages)} for "
                          f"{result_id}, got {_shown(page)}", None, True)
        ev = self._events.get(result_id)
        if ev is not None and isinstance(ev.delivered, list) and pages[page - 1] not in ev.delivered:
            ev.delivered.append(pages[page - 1])
        return self._page_answer(result_id, pages, page)

    def _known(self) -> str:
        if not self._kept:
            return "none is kept: no result of this episode has been long enough to be cut into pages"
        return "kept now: " + ", ".join(f"{rid} ({len(p)} pages)" for rid, p in self._kept.items())

    def _page_answer(self, result_id: str, pages: list[str], n: int) -> Answer:
        total = sum(len(p) for p in pages)
        first = sum(len(p) for p in pages[: n - 1]) + 1
        last = first + len(pages[n - 1]) - 1
        if n < len(pages):
            note = (f"\n\n[Result truncated: page {n} of {len(pages)} (characters {first}-{last} of {total}). "
                    f"To read on, call {PAGER_TOOL} with result_id \"{result_id}\" and page {n + 1}.]")
        else:
            note = f"\n\n[Last page, {n} of {len(pages)} (characters {first}-{last} of {total}) of result {result_id}.]"
        return Answer(pages[n - 1] + note, None, False, result_id, len(pages))

    def _clip(self, text: str) -> str:
        if len(text) <= self.limit:
            return text
        note = f"\n\n[Message cut to {self.limit - NOTE_RESERVE} of {len(text)} characters.]"
        return text[: self.limit - NOTE_RESERVE] + note
