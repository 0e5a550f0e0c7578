"""From the model's answer text to a spec object, or to feedback that says what to fix and where.

Models wrap JSON in code fences, add a sentence before it, stop half-way (finish_reason
"length") or give a field the wrong type. Each case becomes a `Problem` with a path, the problem
and a hint, in the same shape as the validator's feedback, so one repair prompt can carry both.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.S)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an answer: where (a JSON path, "$" for the whole answer), what, how to fix."""

    path: str
    problem: str
    hint: str = ""


class AnswerRejected(ValueError):
    """The answer cannot become a spec; `problems` say why, for the repair prompt."""

    def __init__(self, stage: str, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.path}: {p.problem}" for p in problems))
        self.stage = stage
        self.problems = problems


def extract_json(text: str, finish_reason: str | None = None) -> dict[str, Any]:
    """The one JSON object in `text` (code fences and leading prose tolerated); AnswerRejected if none."""
    body = text.strip()
    m = _FENCE.match(body)
    if m:
        body = m.group(1).strip()
    start = body.find("{")
    if start < 0:
        raise AnswerRejected("json", [Problem("$", f"the answer contains no JSON object (it begins {_head(body)})",
                                              "answer with exactly one JSON object and nothing else")])
    try:
        obj, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError as exc:
        cut = finish_reason == "length" or exc.pos >= len(body) or exc.msg.startswith("Unterminated")
        what = "the answer was cut off before the JSON object ended" if cut else "the answer is not valid JSON"
        hint = ("answer again with the complete object; keep texts short so it fits" if cut else
                "send strict JSON: double-quoted keys and strings, no comments, no trailing commas")
        problem = Problem("$", f"{what}: {exc.msg} at line {exc.lineno} column {exc.colno}", hint)
        raise AnswerRejected("json", [problem]) from None
    except RecursionError:
        raise AnswerRejected("json", [Problem("$", "the JSON is nested too deeply to read",
                                              "keep the document's nesting shallow, as the schema has it")]) from None
    return obj  # a complete object stands even if the answer was cut off after it


def validate_model(obj: dict[str, Any], model: type[T] | Callable[[dict[str, Any]], T]) -> T:
    """Build the spec from `obj`; schema errors become AnswerRejected("schema") with one Problem each.

    `model` is a pydantic model class or a loader function that raises pydantic's ValidationError,
    a SpecLoadError (its `problems` are (path, problem) pairs) or a ValueError on a bad document.
    """
    try:
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model.model_validate(obj)
        return model(obj)
    except ValidationError as exc:
        raise AnswerRejected("schema", [_pydantic_problem(e) for e in exc.errors()]) from None
    except RecursionError:
        raise AnswerRejected("schema", [Problem("$", "the document is nested too deeply to validate",
                                                "keep the document's nesting shallow, as the schema has it")]) from None
    except ValueError as exc:
        pairs = getattr(exc, "problems", None)
        if isinstance(pairs, list) and pairs and all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
            problems = [Problem(str(path) or "$", str(problem)) for path, problem in pairs]
        else:
            path = str(getattr(exc, "path", "") or "$")
            problems = [Problem(path, str(getattr(exc, "problem", "") or exc), str(getattr(exc, "hint", "") or ""))]
        raise AnswerRejected("schema", problems) from None


def json_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """A pydantic error location as a JSON path: ("world", "people", 2, "email") -> world.people[2].email."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "$"


_HINTS = {
    "missing": "add this required field",
    "extra_forbidden": "remove this field; the schema does not define it",
    "literal_error": "use one of the allowed values",
    "enum": "use one of the allowed values",
    "union_tag_invalid": "use one of the allowed kinds",
}


def _pydantic_problem(err: Any) -> Problem:
    kind = str(err.get("type", ""))
    shown = json.dumps(err.get("input"), default=str)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    problem = f"{err.get('msg')} (got {shown})" if kind != "missing" else str(err.get("msg"))
    hint = _HINTS.get(kind) or ("give a value of the type the schema asks for" if kind.endswith(("_type", "_parsing"))
                                else "")
    return Problem(json_path(err.get("loc", ())), problem, hint)


def _head(text: str) -> str:
    text = " ".join(text.split())
    return repr(text[:60] + ("..." if len(text) > 60 else "")) if text else "(empty)"
