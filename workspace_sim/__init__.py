"""workspace_sim: a deterministic simulated workspace: files (with media), mail, calendar, contacts, tickets,
notes, to-dos, CRM, knowledge base, finance, inventory, scheduler, integrations, feeds, an offline web, typed
databases and sandboxes; stages of a multi-day scenario are checkpoints in its log."""

from .pydantic_plugins import skip_if_none_installed

skip_if_none_installed()  # before the first model: pydantic's plugin lookup costs ~20 ms when none is installed

from .config import WorkspaceConfig
from .diff import Diff, RecordChange
from .errors import SpecError, ToolError
from .events import Event, ToolResult
from .faults import Fault
from .limits import WorkspaceLimits
from .registry import Service, Tool
from .services import all_services, all_tools
from .state import State
from .workspace import Workspace

__all__ = [
    "Diff", "Event", "Fault", "RecordChange", "Service", "SpecError", "State", "Tool", "ToolError",
    "ToolResult", "Workspace", "WorkspaceConfig", "WorkspaceLimits", "all_services", "all_tools",
]
