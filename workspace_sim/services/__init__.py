"""The simulated services. Every module or package here defining a `SERVICE` is discovered; none is listed by hand.

Each service is one folder of one shape, `<name>/` with `__init__.py` (exports `SERVICE` and registers the tools),
`records.py` (typed records, a description on every field, the start-data check, and `SERVICE` with its table
handles) and `tools.py` (the tools; each docstring is its schema), plus `views.py` or `syntax.py` where needed and
any other module named in the folder's docstring; inside a folder modules import each other relatively, so a
folder can be copied.
Service folders kept outside this package are added with `add_services_path(folder)` or by listing folders in
the `COWORKENV_SERVICES_PATH` environment variable (os.pathsep-separated, read at import): every sub-folder of
such a folder that defines a `SERVICE` is then discovered, and imported, as `workspace_sim.services.<sub-folder>`.

Discovering them all imports every service module (about 0.15 s); a workspace needs only its own,
so `services_named` imports just the modules (or packages) named after the services asked for (a service whose
module has another name, or a name not found, falls back to discovering them all).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
from functools import lru_cache
from typing import Iterable

from workspace_sim.core.registry import Service, Tool

_loaded: dict[str, Service] = {}  # services imported one by one, by name
SERVICES_PATH_VARIABLE = "COWORKENV_SERVICES_PATH"


def add_services_path(folder: str | os.PathLike[str]) -> None:
    """Discover the service folders inside `folder` too (each sub-folder defining a `SERVICE`), as packages of
    this one; raises NotADirectoryError when `folder` is not a folder. Adding a folder twice changes nothing."""
    path = os.path.abspath(os.fspath(folder))
    if not os.path.isdir(path):
        raise NotADirectoryError(f"services path {path} is not a folder")
    if path not in __path__:
        __path__.append(path)
        all_services.cache_clear()


def remove_services_path(folder: str | os.PathLike[str]) -> None:
    """Stop discovering the service folders of `folder` (added by `add_services_path`): the services imported
    from it are forgotten and their modules taken out of sys.modules."""
    path = os.path.abspath(os.fspath(folder))
    if path in __path__[1:]:
        __path__.remove(path)
        for name, service in list(_loaded.items()):
            if _module_folder(service) == path:
                del _loaded[name]
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None) or ""
            if name.startswith(__name__ + ".") and os.path.abspath(file).startswith(path + os.sep):
                del sys.modules[name]
        all_services.cache_clear()


def _module_folder(service: Service) -> str | None:
    """The folder holding the package that defines `service` (where its tools were defined)."""
    for tool in service.tools.values():
        file = getattr(importlib.import_module(tool.fn.__module__), "__file__", None)
        return os.path.dirname(os.path.dirname(os.path.abspath(file))) if file else None
    return None


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
    _loaded.update(found)
    return found


def _own_module_service(name: str) -> Service | None:
    """The service `name` when the module of that name defines it, else None (nothing else is imported)."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    qualified = f"{__name__}.{name}"
    try:
        if importlib.util.find_spec(qualified) is None:
            return None
    except (ImportError, ValueError):
        return None
    service = getattr(importlib.import_module(qualified), "SERVICE", None)
    return service if isinstance(service, Service) and service.name == name else None


def services_named(names: Iterable[str]) -> dict[str, Service]:
    """The named services that exist, by name, importing as few service modules as it can; unknown names are
    left out (the caller says which, against `all_services()`)."""
    wanted = list(dict.fromkeys(names))
    for name in wanted:
        if name not in _loaded:
            service = _own_module_service(name)
            if service is None:
                known = all_services()
                return {n: known[n] for n in wanted if n in known}
            _loaded[name] = service
    return {n: _loaded[n] for n in wanted}


def tools_named(names: Iterable[str]) -> dict[str, Tool]:
    """The named tools, from the services loaded so far when they hold them all, else from every service."""
    wanted = list(names)
    loaded = {n: t for s in list(_loaded.values()) for n, t in s.tools.items()}
    if all(n in loaded for n in wanted):
        return {n: loaded[n] for n in wanted}
    tools = all_tools()
    return {n: tools[n] for n in wanted if n in tools}


def all_tools() -> dict[str, Tool]:
    """Every tool of every service, by name."""
    return {name: t for s in all_services().values() for name, t in s.tools.items()}


for _folder in filter(None, os.environ.get(SERVICES_PATH_VARIABLE, "").split(os.pathsep)):
    add_services_path(_folder)
