"""The one tool registry: a service's typed Python function is the single source of every schema.

A tool is a plain function `fn(ctx, **args)` with type hints and a Google-style docstring. From it
come the argument validator (a pydantic model), the JSON Schema (used by MCP and written into SFT
data), the OpenAI function format, and the MCP annotations. Nothing else in the project writes a
tool schema.
"""

from __future__ import annotations

import inspect
from functools import cached_property
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field, create_model

from .records import Record


@dataclass(frozen=True)
class ToolHints:
    """MCP-style behaviour hints for a tool."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


@dataclass
class Tool:
    """A registered tool: its function, validator, schema and hints."""

    name: str
    service: str
    fn: Callable[..., Any]
    description: str
    hints: ToolHints
    args_model: type[BaseModel]
    render: Callable[[Any], str] | None = None
    # arguments whose strings may be as long as a record (limits.max_record_chars), not just an argument
    large_arguments: frozenset[str] = frozenset()

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (an object schema; built once, shared: do not mutate)."""
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return schema

    def openai_schema(self) -> dict[str, Any]:
        """The tool in OpenAI's function-calling format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        }

    def mcp_annotations(self) -> dict[str, bool]:
        """The MCP ToolAnnotations hints (the simulated workspace is a closed world)."""
        return {
            "readOnlyHint": self.hints.read_only,
            "destructiveHint": self.hints.destructive,
            "idempotentHint": self.hints.idempotent,
            "openWorldHint": False,
        }


@dataclass
class Service:
    """A simulated service: its tables (name -> record model) and tools."""

    name: str
    tables: Mapping[str, type[Record]]
    title: str = ""
    tools: dict[str, Tool] = field(default_factory=dict)
    prepare: Callable[[dict[str, dict[str, Record]], Any], None] | None = None
    blocking: bool = False  # tools that may take seconds (sandboxes): servers run them off the event loop
    availability: Callable[[Any], tuple[bool, str]] | None = None

    def available(self, config: Any) -> tuple[bool, str]:
        """Whether the service can offer its tools under `config` (e.g. an engine it needs is
        reachable), with the reason when not; services without an `availability` check always can."""
        if self.availability is None:
            return True, ""
        try:
            return self.availability(config)
        except Exception as e:  # a broken check must not break workspace creation
            return False, f"availability check failed: {type(e).__name__}: {e}"

    def table_name(self, table: str) -> str:
        """The qualified state table name, e.g. 'mail.messages'."""
        return f"{self.name}.{table}"

    def tool(
        self,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        render: Callable[[Any], str] | None = None,
        large: tuple[str, ...] = (),
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering a function as one of this service's tools.

        `large` names arguments that carry long text besides the usual ones (TEXT_ARGUMENTS).
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            hints = ToolHints(read_only, destructive or False, idempotent or read_only)
            self.tools[fn.__name__] = make_tool(fn, self.name, hints, render, large)
            return fn

        return register


# Arguments with these names carry text of a record's size (a file's content, a mail's body), so the
# per-argument string limit does not apply to them; every other string is an id, a name, a path, a query.
TEXT_ARGUMENTS = frozenset({"content", "body", "description", "comment", "code", "command", "edits", "notes", "note",
                            "append", "message", "text", "summary"})

_SECTION = re.compile(r"^\s*(Args|Arguments|Returns|Raises|Examples?|Notes?):\s*$")
_ARG = re.compile(r"^\s{2,}(\*{0,2}\w+)\s*(\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument texts."""
    lines = inspect.cleandoc(doc or "").splitlines()
    desc: list[str] = []
    args: dict[str, str] = {}
    section = None
    current = None
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            current = None
            continue
        if section is None:
            desc.append(line)
        elif section in ("Args", "Arguments"):
            am = _ARG.match("    " + line if not line.startswith(" ") else line)
            if am and (not line.startswith("        ")):
                current = am.group(1)
                args[current] = am.group(3).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
    description = " ".join(" ".join(desc).split())
    return description, args


def make_tool(
    fn: Callable[..., Any], service: str, hints: ToolHints, render: Callable[[Any], str] | None = None,
    large: tuple[str, ...] = (),
) -> Tool:
    """Build a Tool from a function `fn(ctx, ...)`; every argument must be typed and documented."""
    sig = inspect.signature(fn)
    hints_map = typing.get_type_hints(fn, include_extras=True)
    description, arg_docs = parse_docstring(fn.__doc__ or "")
    if not description:
        raise TypeError(f"tool {fn.__name__} has no docstring")
    fields: dict[str, Any] = {}
    params = list(sig.parameters.values())[1:]  # first is the context
    for p in params:
        if p.name not in hints_map:
            raise TypeError(f"tool {fn.__name__}: argument {p.name} has no type hint")
        if p.name not in arg_docs:
            raise TypeError(f"tool {fn.__name__}: argument {p.name} is not documented in Args:")
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints_map[p.name], Field(default, description=arg_docs[p.name]))
    model = create_model(  # type: ignore[call-overload]
        f"{fn.__name__}_args",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
        **fields,
    )
    names = {p.name for p in params}
    unknown = set(large) - names
    if unknown:
        raise TypeError(f"tool {fn.__name__}: large names unknown argument(s) {sorted(unknown)}")
    return Tool(fn.__name__, service, fn, description, hints, model, render,
                frozenset(names & (TEXT_ARGUMENTS | set(large))))
