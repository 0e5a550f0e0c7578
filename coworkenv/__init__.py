"""coworkenv: the command line and the public API, re-exported from the packages that hold it."""

from workspace_sim import Workspace, WorkspaceConfig

__version__ = "0.1.0"
__all__ = ["Workspace", "WorkspaceConfig", "__version__"]
