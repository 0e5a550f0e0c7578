"""Tool schemas from the registry, generated once per tool set (pydantic schema generation is slow)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from workspace_sim import all_tools


@lru_cache(maxsize=256)
def input_schema(name: str) -> dict[str, Any]:
    """The registry's JSON Schema of a tool's arguments (shared; do not mutate)."""
    return all_tools()[name].input_schema


def openai_schemas(names: Iterable[str]) -> list[dict[str, Any]]:
    """The tools in OpenAI's function format, in the order given."""
    tools = all_tools()
    return [{"type": "function", "function": {"name": n, "description": tools[n].description,
                                              "parameters": input_schema(n)}} for n in names]
