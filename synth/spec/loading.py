"""Reading spec documents: JSON or YAML text or files into a validated EnvironmentSpec.

Every problem raises `SpecLoadError` carrying (field path, problem) pairs, e.g.
'reference.steps[2].tool'; documents of an older readable version load unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from ..errors import SpecLoadError
from .model import READABLE_VERSIONS, SPEC_VERSION, EnvironmentSpec


def validation_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """Each pydantic error as (field path like 'reference.steps[2].tool', problem)."""
    out = []
    for err in exc.errors():
        parts: list[str] = []
        loc = err.get("loc", ())
        for i, p in enumerate(loc):
            if isinstance(p, int):
                parts.append(f"[{p}]")
            elif i > 0 and isinstance(loc[i - 1], int) and p in ("call", "say", "ask", "end_stage") or "[" in str(p):
                continue  # the tag pydantic adds for a member of a discriminated union
            else:
                parts.append(("." if parts else "") + str(p))
        path = "".join(parts)
        ctx = err.get("ctx") or {}
        if err.get("type") == "spec_problem":
            sub = str(ctx.get("path", ""))
            path = f"{path}.{sub}" if path and sub and not sub.startswith("[") else path + sub
            msg = str(ctx.get("problem", err.get("msg")))
        else:
            msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
            if err.get("type") != "value_error" and "input" in err:
                shown = repr(err["input"])
                if len(shown) <= 80:
                    msg = f"{msg} (got {shown})"
        out.append((path, msg))
    return out


def parse_spec(doc: Any, source: str = "") -> EnvironmentSpec:
    """Validate a spec document (already parsed JSON/YAML); problems raise SpecLoadError with paths."""
    if not isinstance(doc, dict):
        raise SpecLoadError([("", f"a spec must be an object (mapping), got {type(doc).__name__}")], source)
    version = doc.get("version", SPEC_VERSION)
    if str(version) not in READABLE_VERSIONS:
        raise SpecLoadError([("version", f"unsupported spec version {version!r}; this build reads "
                              f"{', '.join(sorted(READABLE_VERSIONS))}")], source)
    try:
        return EnvironmentSpec.model_validate({**doc, "version": SPEC_VERSION})
    except ValidationError as e:
        raise SpecLoadError(validation_problems(e), source) from None


def loads_spec(text: str, fmt: Literal["json", "yaml", "auto"] = "auto", source: str = "") -> EnvironmentSpec:
    """Parse spec text (JSON or YAML) and validate it."""
    try:
        if fmt == "json" or (fmt == "auto" and text.lstrip().startswith("{")):
            doc = json.loads(text)
        else:
            doc = yaml.safe_load(text)
    except json.JSONDecodeError as e:
        raise SpecLoadError([("", f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}")], source) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise SpecLoadError([("", f"not valid YAML: {getattr(e, 'problem', None) or e}{where}")], source) from None
    return parse_spec(doc, source)


def load_spec(path: str | Path) -> EnvironmentSpec:
    """Read and validate a spec file (.json, .yaml or .yml); errors name the file, field path and problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecLoadError([("", "file not found")], str(p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpecLoadError([("", f"cannot read file: {e}")], str(p)) from None
    suffix = p.suffix.lower()
    fmt: Literal["json", "yaml", "auto"] = "json" if suffix == ".json" else "yaml" if suffix in (".yaml", ".yml") else "auto"
    return loads_spec(text, fmt, str(p))
