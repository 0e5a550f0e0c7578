"""Reading predicate documents: `parse_predicates` validates a JSON list of predicates at load and names the JSON
path of the first problem; documents nested deeper than `MAX_DEPTH` are refused before validation."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from workspace_sim.core.errors import SpecError
from workspace_sim.predicates.kinds import COMBINATORS, KINDS, kind_class


MAX_DEPTH = 64  # JSON nesting of a predicate document (all/any/not and conditions); deeper is refused


def _too_deep(doc: Any, root: str, limit: int = MAX_DEPTH) -> None:
    """Refuse documents nested deeper than `limit` (checked without recursion, before validation)."""
    stack: list[tuple[Any, str, int]] = [(doc, root, 0)]
    while stack:
        v, where, depth = stack.pop()
        if isinstance(v, (list, dict)):
            if depth >= limit:
                raise SpecError(where, f"nested deeper than {limit} levels; flatten the all/any/not combinations")
            items = v.items() if isinstance(v, dict) else enumerate(v)
            stack.extend((x, f"{where}[{k}]" if isinstance(v, list) else f"{where}.{k}", depth + 1) for k, x in items)


def parse_predicates(doc: Any, root: str = "predicates") -> list[Any]:
    """Validate a JSON list of predicates; a problem raises SpecError naming its JSON path. Only the kinds the
    document uses are imported (every kind when it combines predicates); the first problem is the one a
    validation of the whole list against the union of every kind reports first."""
    if not isinstance(doc, list):
        raise SpecError(root, f"must be a list of predicates, got {type(doc).__name__}")
    _too_deep(doc, root)
    for i, item in enumerate(doc):
        if not isinstance(item, dict):
            raise SpecError(f"{root}[{i}]", f"must be an object, got {type(item).__name__}")
        if item.get("kind") not in KINDS:
            raise SpecError(f"{root}[{i}].kind", f"unknown kind {item.get('kind')!r}; one of {', '.join(KINDS)}")
    out = []
    for i, item in enumerate(doc):
        kind = item["kind"]
        try:
            if kind in COMBINATORS:
                from workspace_sim.predicates.combinators import PREDICATE

                out.append(PREDICATE.validate_python(item))  # its errors' locations start with the kind
            else:
                out.append(kind_class(kind).model_validate(item))
        except ValidationError as e:
            err = e.errors()[0]
            loc = (i, *err["loc"]) if kind in COMBINATORS else (i, kind, *err["loc"])  # as the union's list names it
            raise spec_error(root, loc, err) from None
    return out


def spec_error(root: str, loc: tuple[Any, ...], err: Any) -> SpecError:
    """The SpecError for a validation error at `loc` (as validating the list against the union locates it): the
    kind tags the union adds after an index (or a `not`'s `predicate`) are left out of the path."""
    parts = [p for i, p in enumerate(loc) if not (p in KINDS and i > 0 and not isinstance(p, int)
                                                  and (isinstance(loc[i - 1], int) or loc[i - 1] == "predicate"))]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
    shown = repr(err.get("input"))
    return SpecError(f"{root}{path}", f"{err['msg']} (got {shown[:80]})")
