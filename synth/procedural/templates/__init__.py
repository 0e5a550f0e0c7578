"""Task templates, one module per capability family; each registers itself with `@template`.

A template is `fn(builder, size) -> act`: it adds start data with distractors and its part of the
request, and returns `act()`, which runs the reference solution live and adds predicates, guards
and answer sentences. Setup and acting are split so that templates compose: several set up in one
builder, then act in turn. `size` scales how many items the task covers.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from ..builder import Act, SpecBuilder


@dataclass(frozen=True)
class Template:
    """A registered template: its capability, name and builder function."""

    capability: str
    name: str
    fn: Callable[[SpecBuilder, int], Act]
    composable: bool = True
    weight: int = 1  # how often the generator picks it among its capability's templates, relative to the others


_REGISTRY: dict[str, dict[str, Template]] = {}


def template(capability: str, name: str, composable: bool = True,
             weight: int = 1) -> Callable[[Callable[[SpecBuilder, int], Act]], Callable[[SpecBuilder, int], Act]]:
    """Register a template function under a capability (`weight`: its relative share of the capability's draws)."""
    if weight < 1:
        raise ValueError(f"template {capability}/{name}: weight must be at least 1, got {weight}")

    def register(fn: Callable[[SpecBuilder, int], Act]) -> Callable[[SpecBuilder, int], Act]:
        _REGISTRY.setdefault(capability, {})[name] = Template(capability, name, fn, composable, weight)
        return fn

    return register


@lru_cache(maxsize=1)
def registry() -> dict[str, dict[str, Template]]:
    """Every template by capability and name (modules of this package are imported once)."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        importlib.import_module(f"{__name__}.{info.name}")
    return {cap: dict(sorted(t.items())) for cap, t in sorted(_REGISTRY.items())}
