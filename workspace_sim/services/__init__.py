"""The simulated services. Every module here defining a `SERVICE` is discovered; none is listed by hand."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from ..registry import Service, Tool


@lru_cache(maxsize=1)
def all_services() -> dict[str, Service]:
    """Every service found in this package, by name."""
    found: dict[str, Service] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        service = getattr(module, "SERVICE", None)
        if isinstance(service, Service):
            found[service.name] = service
    seen: dict[str, str] = {}
    for service in found.values():
        for name in service.tools:
            if name in seen:
                raise RuntimeError(f"tool {name} defined by both {seen[name]} and {service.name}")
            seen[name] = service.name
    return found


def all_tools() -> dict[str, Tool]:
    """Every tool of every service, by name."""
    return {name: t for s in all_services().values() for name, t in s.tools.items()}
