"""uvicorn's `Config` and `Server` without its command line: ~30 ms less of an HTTP server's cold start.

`import uvicorn` runs the package's `__init__`, which imports `uvicorn.main`: its click command line and, for
`--reload`, the file-watching supervisors (watchfiles, multiprocessing): about 30 ms here, none of which a
server started from Python uses. `config_and_server` makes the `uvicorn` package module without running that
`__init__`, imports `uvicorn.config` and `uvicorn.server` (what serving needs) and gives the package the
names its own modules import from it (`Config`, `Server`, `__version__`). Any other name asked of the package
later (`uvicorn.run`, `uvicorn.main`) runs the real `__init__` first, so the package then is what
`import uvicorn` makes. Where uvicorn is already imported, or its layout is not the expected one, it is
imported as always.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any


def config_and_server() -> tuple[type, type]:
    """uvicorn's `Config` and `Server` classes, imported without `uvicorn.main` when uvicorn is not loaded yet."""
    if "uvicorn" not in sys.modules:
        try:
            return _lean()
        except Exception:  # an unexpected layout: back to the ordinary import, from scratch
            for name in [m for m in sys.modules if m == "uvicorn" or m.startswith("uvicorn.")]:
                del sys.modules[name]
    import uvicorn

    return uvicorn.Config, uvicorn.Server


def _lean() -> tuple[type, type]:
    spec = importlib.util.find_spec("uvicorn")
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        raise ImportError("uvicorn is not an ordinary package here")
    package = importlib.util.module_from_spec(spec)
    finished: list[bool] = []

    def __getattr__(name: str) -> Any:
        if name.startswith("__") or finished:
            raise AttributeError(f"module 'uvicorn' has no attribute {name!r}")
        finished.append(True)
        spec.loader.exec_module(package)  # type: ignore[union-attr]  # the real __init__, in this module
        return getattr(package, name)

    package.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules["uvicorn"] = package
    # import statements, not importlib.import_module: `python -X importtime` reports only these
    from uvicorn._version import __version__
    from uvicorn.config import Config
    from uvicorn.server import Server

    package.__version__, package.Config, package.Server = __version__, Config, Server  # type: ignore[attr-defined]
    return Config, Server


def is_lean(module: types.ModuleType) -> bool:
    """Whether `module` (the `uvicorn` package) was made here and its `__init__` has not run yet."""
    return "main" not in module.__dict__ and callable(module.__dict__.get("__getattr__"))
