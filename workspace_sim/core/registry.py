"""The one tool registry: a service's typed Python function is the single source of every schema.

A tool is a plain function `fn(ctx, **args)` with type hints and a Google-style docstring. From it
come the argument validator (a pydantic model), the JSON Schema (used by MCP and written into SFT
data), the OpenAI function format, and the MCP annotations. Every served tool's schema comes from here;
the only hand-written ones are those of made-up practice tools, e.g. `trainers/training/copydata.py`'s
copy-task tools, which are no service's.

Every schema also has a *strict* form (`strict_schema`, `Tool.strict_input_schema`), the subset of
JSON Schema that OpenAI's strict function calling accepts: no `$ref`, every object closed, every
property required, an optional property nullable and described instead of defaulted. A strict caller
sends `null` for an optional argument it does not want; the arguments model reads that `null` as "not
given" (the default) wherever the argument's type does not itself accept null, so the strict and the
ordinary form of a call mean the same thing.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
from functools import cached_property
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model, model_validator

from workspace_sim.core.records import Record


@dataclass(frozen=True)
class ToolHints:
    """MCP-style behaviour hints for a tool."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


@functools.lru_cache(maxsize=None)
def _bare_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON Schema without its titles (built once per model, shared: do not mutate)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


@dataclass
class Tool:
    """A registered tool: its function, validator, schema and hints."""

    name: str
    service: str
    fn: Callable[..., Any]
    description: str
    hints: ToolHints
    build_args_model: Callable[[], type[BaseModel]]
    render: Callable[[Any], str] | None = None
    # arguments whose strings may be as long as a record (limits.max_record_chars), not just an argument
    large_arguments: frozenset[str] = frozenset()

    @cached_property
    def args_model(self) -> type[BaseModel]:
        """The validator of the tool's arguments (a pydantic model), built on first use: a server's cold start
        registers every tool of its services and answers its first request before it needs one."""
        return self.build_args_model()

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (an object schema; built once, shared: do not mutate)."""
        return _bare_schema(self.args_model)

    @cached_property
    def strict_input_schema(self) -> dict[str, Any]:
        """The strict form of `input_schema` (see `strict_schema`; built once, shared: do not mutate)."""
        return strict_schema(self.input_schema, self.name)

    def openai_schema(self, strict: bool = False) -> dict[str, Any]:
        """The tool in OpenAI's function-calling format; `strict` gives the strict form, marked `strict: true`."""
        if strict:
            return strict_openai_tool(self.openai_schema())
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


class Table(str):
    """A checked handle on one of a service's tables, made by `Service.table`: it *is* the qualified table name
    (`SERVICE.table("accounts") == "crm.accounts"`, so it keys states, diffs and predicates as the name does) and
    also says which service declared it (`service`), its short name (`short`) and its record class (`model`).
    Immutable; pickled or copied it becomes the plain name."""

    service: str
    short: str
    model: type[Record]

    def __new__(cls, service: str, short: str, model: type[Record]) -> "Table":
        handle = super().__new__(cls, f"{service}.{short}")
        object.__setattr__(handle, "service", service)
        object.__setattr__(handle, "short", short)
        object.__setattr__(handle, "model", model)
        return handle

    @property
    def name(self) -> str:
        """The qualified table name, e.g. 'crm.accounts' (as a plain string)."""
        return str.__str__(self)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"table handle {self.name} is immutable")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"table handle {self.name} is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (str, (self.name,))

    def __copy__(self) -> str:
        return self.name

    def __deepcopy__(self, memo: Any) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Table({self.name!r})"


@dataclass
class Service:
    """A simulated service: its tables (name -> record model, declared once) and tools; `table(name)` gives a
    checked handle on one of the tables."""

    name: str
    tables: Mapping[str, type[Record]]
    title: str = ""
    tools: dict[str, Tool] = field(default_factory=dict)
    prepare: Callable[[dict[str, dict[str, Record]], Any], None] | None = None
    # how a world event writes one of its records, for a service whose records need more than the record model's
    # checks (a database row's values against its database's schema): `(table, old, op, given, get, now)` ->
    # the record to store, or ValueError saying what is wrong. `table` is the qualified name; `op` "put" (`old`
    # None or the record replaced, `given` the validated record) or "patch" (`given` the fields); `get(table,
    # key)` reads a record as the event has left it so far. None: a put stores the record, a patch sets the fields.
    world_write: Callable[[str, Record | None, str, Any, Callable[[str, str], Record | None], Any], Record] | None = None
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

    def table(self, table: str) -> Table:
        """The checked handle on the declared table `table` (its short name, e.g. 'accounts' for
        'crm.accounts'); raises LookupError naming the service and its tables when it declares no such table,
        so a mistyped name fails when the module defining the handle is imported."""
        model = self.tables.get(table)
        if model is None:
            declared = ", ".join(sorted(self.tables)) or "none"
            raise LookupError(f"service {self.name} declares no table {table!r} (its tables: {declared})")
        return Table(self.name, table, model)

    def handles(self) -> dict[str, Table]:
        """A checked handle on every declared table, by short name."""
        return {t: self.table(t) for t in self.tables}

    def add_tools(self, *fns: Callable[..., Any]) -> "Service":
        """Register functions marked with `tool(...)` as this service's tools, in the order given (the order tool
        lists show); returns the service. A service whose tools span several modules lists them all here, in one
        place, so importing a tool module registers nothing."""
        for fn in fns:
            options = getattr(fn, "tool_options", None)
            if not isinstance(options, ToolOptions):
                raise TypeError(f"{getattr(fn, '__name__', fn)!r} is not marked as a tool; decorate it with @tool(...)")
            if fn.__name__ in self.tools:
                raise TypeError(f"service {self.name} already has a tool named {fn.__name__}")
            hints = ToolHints(options.read_only, options.destructive, options.idempotent or options.read_only)
            self.tools[fn.__name__] = make_tool(fn, self.name, hints, options.render, options.large)
        return self


class ToolArgs(BaseModel):
    """Base of every tool's arguments model: unknown arguments are refused, and `null` for an optional
    argument whose type does not accept it means "not given" (the strict form's way to leave it out)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)
    null_means_default: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        names = cls.null_means_default
        if names and isinstance(data, Mapping) and any(data.get(n, 0) is None for n in names):
            return {k: v for k, v in data.items() if not (v is None and k in names)}
        return data


def _accepts_none(annotation: Any, metadata: list[Any]) -> bool:
    try:
        TypeAdapter(typing.Annotated[(annotation, *metadata)] if metadata else annotation).validate_python(None)
    except ValidationError:
        return False
    return True


# Keywords the strict form keeps as they are; `default`, `minLength` and `maxLength` are turned into words
# of the description; any other keyword makes the conversion fail, naming it.
_STRICT_KEEP = frozenset({"type", "description", "properties", "required", "additionalProperties", "items", "anyOf",
                          "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                          "multipleOf", "pattern", "minItems", "maxItems"})
_STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})


class StrictSchemaError(TypeError):
    """A schema that has no strict form (an open object, a recursive or unknown reference, an unknown keyword)."""


def _nullable(node: dict[str, Any]) -> bool:
    t = node.get("type")
    return t == "null" or (isinstance(t, list) and "null" in t) or any(_nullable(v) for v in node.get("anyOf", ()))


def _strict_node(node: Any, defs: Mapping[str, Any], where: str, seen: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise StrictSchemaError(f"{where}: a schema must be an object, got {node!r}")
    if "$ref" in node:
        ref = node["$ref"]
        name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
        if name is None or name == ref or name not in defs:
            raise StrictSchemaError(f"{where}: reference {ref!r} is not to this schema's $defs")
        if name in seen:
            raise StrictSchemaError(f"{where}: {name} refers to itself; a recursive type has no strict form")
        target = _strict_node(defs[name], defs, where, seen + (name,))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return _strict_node({**target, **siblings}, defs, where, seen) if siblings else target
    out: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in node.items():
        if key in ("title", "$defs", "default"):
            continue
        if key == "minLength":
            notes.append(f"At least {value} character{'s' * (value != 1)}.")
        elif key == "maxLength":
            notes.append(f"At most {value} characters.")
        elif key == "format":
            if value in _STRICT_FORMATS:
                out[key] = value
            else:
                notes.append(f"Format: {value}.")
        elif key not in _STRICT_KEEP:
            raise StrictSchemaError(f"{where}: keyword {key!r} has no strict form")
        elif key == "items":
            out[key] = _strict_node(value, defs, f"{where}[]", seen)
        elif key == "anyOf":
            out[key] = [_strict_node(v, defs, where, seen) for v in value]
        elif key == "properties":
            out[key] = {}
        else:
            out[key] = copy.deepcopy(value)
    if "properties" in node or out.get("type") == "object":
        if node.get("additionalProperties", False) is not False:
            raise StrictSchemaError(f"{where}: an object open to any property has no strict form; give it a typed model")
        required = set(node.get("required", ()))
        props = {}
        for name, prop in node.get("properties", {}).items():
            p = _strict_node(prop, defs, f"{where}.{name}" if where else name, seen)
            if name not in required:
                if "default" in prop and prop["default"] is not None:
                    hint = f"Optional: null means the default ({json.dumps(prop['default'], ensure_ascii=False)})."
                else:
                    hint = "Optional: null to leave it out."
                if not _nullable(p):
                    desc = p.pop("description", None)
                    p = {"anyOf": [p, {"type": "null"}], **({"description": desc} if desc else {})}
                p["description"] = f"{p['description']} {hint}" if p.get("description") else hint
            props[name] = p
        out["type"] = "object"
        out["properties"] = props
        out["required"] = list(props)
        out["additionalProperties"] = False
    if notes:
        out["description"] = " ".join([out.get("description", ""), *notes]).strip()
    if not any(k in out for k in ("type", "anyOf", "enum", "const")):
        raise StrictSchemaError(f"{where or 'the arguments'}: a value of any type has no strict form; give it a type")
    return out


def strict_schema(schema: Mapping[str, Any], name: str = "tool") -> dict[str, Any]:
    """The strict form of an object schema made by the registry: references inlined, every object closed
    (`additionalProperties: false`) with all its properties required, each optional property made
    nullable (its default told in its description), titles and defaults dropped, length limits put in
    words; the result is what OpenAI's strict function calling (and the Agents SDK's
    `ensure_strict_json_schema`) accepts unchanged. Raises StrictSchemaError naming the place when the
    schema has no strict form."""
    try:
        out = _strict_node(dict(schema), schema.get("$defs", {}), "", ())
    except StrictSchemaError as e:
        raise StrictSchemaError(f"tool {name}: {e}") from None
    if out.get("type") != "object":
        raise StrictSchemaError(f"tool {name}: the arguments schema must be an object")
    return out


def strict_openai_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool (`{"type": "function", "function": {...}}`, as `Tool.openai_schema` makes)
    with its parameters in strict form and `strict: true`."""
    fn = tool["function"]
    return {"type": "function", "function": {**fn, "parameters": strict_schema(fn.get("parameters") or {
        "type": "object", "properties": {}}, str(fn.get("name"))), "strict": True}}


def strict_arguments(schema: Mapping[str, Any], args: Any, root: Mapping[str, Any] | None = None) -> Any:
    """Arguments as a strict caller sends them: every optional property left out is there as null, at every
    level of `schema` (the tool's ordinary `input_schema`, whose `required` tells the optional ones apart).
    Anything that is not an object of the schema's shape is returned as it is."""
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
    if isinstance(args, list) and isinstance(schema.get("items"), Mapping):
        return [strict_arguments(schema["items"], a, root) for a in args]
    if not isinstance(args, dict):
        return args
    objects = [schema] if "properties" in schema else [
        v for v in schema.get("anyOf", ()) if isinstance(v, Mapping) and ("properties" in v or "$ref" in v)]
    if not objects:
        return args
    obj = objects[0]
    if "$ref" in obj:
        return strict_arguments(obj, args, root)
    props = obj["properties"]
    out = {k: strict_arguments(props[k], v, root) if k in props else v for k, v in args.items()}
    for k in props:
        if k not in obj.get("required", ()):
            out.setdefault(k, None)
    return out


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
    """Build a Tool from a function `fn(ctx, ...)`; every argument must be typed and documented. Its arguments
    model is built, and checked as a definition, on first use (`Tool.args_model`)."""
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
    names = {p.name for p in params}
    unknown = set(large) - names
    if unknown:
        raise TypeError(f"tool {fn.__name__}: large names unknown argument(s) {sorted(unknown)}")

    def build_model() -> type[BaseModel]:
        """The arguments model, checked as a definition (raises TypeError naming the tool and argument)."""
        model = create_model(f"{fn.__name__}_args", __base__=ToolArgs, **fields)  # type: ignore[call-overload]
        null_default: set[str] = set()
        for name, info in model.model_fields.items():
            if info.is_required():
                continue
            if not _accepts_none(info.annotation, info.metadata):
                null_default.add(name)
            elif info.default is not None:  # null must mean the default in the strict form, so it must be the default
                raise TypeError(f"tool {fn.__name__}: argument {name} accepts None, so its default must be None "
                                f"(got {info.default!r})")
        model.null_means_default = frozenset(null_default)
        for dname, d in _bare_schema(model).get("$defs", {}).items():  # nested models: null is None, not a default
            for pname, prop in d.get("properties", {}).items():
                if pname not in d.get("required", ()) and (prop.get("default") is not None or not _nullable(prop)):
                    raise TypeError(f"tool {fn.__name__}: {dname}.{pname} is optional inside a nested model, so it "
                                    "must accept None and default to None")
        return model

    return Tool(fn.__name__, service, fn, description, hints, build_model, render,
                frozenset(names & (TEXT_ARGUMENTS | set(large))))


@dataclass(frozen=True)
class ToolOptions:
    """How `tool(...)` marked a function: the hints and rendering `Service.add_tools` registers it with."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    render: Callable[[Any], str] | None = None
    large: tuple[str, ...] = ()


def tool(
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    render: Callable[[Any], str] | None = None,
    large: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator marking a function as a tool without registering it; the service's package registers its marked
    functions with `Service.add_tools`. `read_only` tools change nothing (and are idempotent), `destructive` ones
    remove or overwrite, `render` turns the result into the text the model reads, and `large` names arguments that
    carry long text besides the usual ones (TEXT_ARGUMENTS). The function is returned unchanged apart from its
    `tool_options`."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.tool_options = ToolOptions(read_only, destructive, idempotent, render, tuple(large))  # type: ignore[attr-defined]
        return fn

    return mark
