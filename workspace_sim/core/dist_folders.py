"""The installed distributions' metadata folders on `sys.path`, found the way `importlib.metadata` finds them.

Two cold-start shortcuts read installed metadata without importing `importlib.metadata` (and the email
parser with it, 15-20 ms): the server's version (`mcp_server.identity.dist_info_version`) and whether any
pydantic plugin is installed (`workspace_sim.core.pydantic_plugins`). Both walk the same folders in the same
order, and both must give up where the two lookups could differ.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator


class Undecidable(Exception):
    """importlib.metadata could see distributions this walk does not (a zip or an egg on `sys.path`, another
    distribution finder): the caller asks importlib.metadata instead."""


def metadata_folders() -> Iterator[str]:
    """Each `*.dist-info` and `*.egg-info` folder on `sys.path`, in `sys.path` order (a folder's entries in
    `os.listdir` order); raises Undecidable, when it reaches one, where importlib.metadata would read what this
    does not."""
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        raise Undecidable("another distribution finder is installed")
    for entry in sys.path:
        folder = entry or "."
        if os.path.isfile(folder) or folder.lower().endswith(".egg"):
            raise Undecidable(f"{folder} is a zip archive or an egg")
        try:
            children = os.listdir(folder)
        except OSError:
            continue
        for child in children:
            if child.lower().endswith((".dist-info", ".egg-info")):
                yield os.path.join(folder, child)
