"""pydantic's plugin lookup, skipped when no pydantic plugin is installed: ~20 ms of every cold start.

The first pydantic model a process builds imports `pydantic.plugin._loader`, which imports
`importlib.metadata` (and with it the email parser, zipfile, csv: ~17 ms here) and reads every
installed distribution's entry points (~5 ms) to find the `pydantic` group's plugins. Most
installs have none. `skip_if_none_installed` reads the `entry_points.txt` of every `*.dist-info`
and `*.egg-info` folder on `sys.path` itself (~1 ms) and, when none of them mentions a `pydantic`
section, puts a stand-in for that loader module in `sys.modules` (`workspace_sim` does this
before it defines its models; a process that built a pydantic model before is left as it is): its `get_plugins()` answers what
pydantic's would (no plugins), and any other name is read from the real module, loaded then.
Wherever the two lookups could differ (a zip or an egg on `sys.path`, another distribution
finder, a file it cannot read, `PYDANTIC_DISABLE_PLUGINS` set) nothing is replaced and pydantic
looks as always. `tests/mcp_server/test_cold_start.py` checks both ways.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

LOADER = "pydantic.plugin._loader"
GROUP = "pydantic"


def plugins_may_be_installed() -> bool:
    """False only when no distribution on `sys.path` can declare an entry point of the `pydantic` group (the
    folders importlib.metadata would read, read the same way); True when one may, or when this cannot tell."""
    from workspace_sim.core.dist_folders import Undecidable, metadata_folders

    try:
        for base in metadata_folders():
            try:
                with open(os.path.join(base, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except (FileNotFoundError, NotADirectoryError):
                continue
            except (OSError, UnicodeDecodeError):
                return True
            for line in text.splitlines():
                line = line.strip()
                if line.startswith("[") and GROUP in line.lower():
                    return True
    except Undecidable:
        return True
    return False


def _real_loader() -> types.ModuleType:
    """pydantic's own loader module, loaded under its name in place of the stand-in."""
    import importlib

    sys.modules.pop(LOADER, None)
    return importlib.import_module(LOADER)


def _stand_in() -> types.ModuleType:
    module = types.ModuleType(LOADER, "Stand-in for pydantic's plugin loader: no pydantic plugin is installed "
                                      "(workspace_sim.core.pydantic_plugins).")

    def get_plugins() -> tuple[()]:
        """No plugins (none is installed: checked when this stand-in was put in place)."""
        return ()

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):  # the import system asks for __path__ and the like: a plain module has none
            raise AttributeError(name)
        return getattr(_real_loader(), name)

    module.get_plugins = get_plugins  # type: ignore[attr-defined]
    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    return module


def skip_if_none_installed() -> bool:
    """Put the stand-in loader in place when no pydantic plugin is installed (see the module); whether it did."""
    if LOADER in sys.modules or os.environ.get("PYDANTIC_DISABLE_PLUGINS") is not None:
        return False
    if plugins_may_be_installed():
        return False
    sys.modules[LOADER] = _stand_in()
    return True
