"""workspace_sim: a deterministic simulated workspace: files (with media), mail, calendar, contacts, tickets,
notes, to-dos, CRM, knowledge base, finance, inventory, scheduler, integrations, feeds, an offline web, typed
databases and sandboxes; stages of a multi-day scenario are checkpoints in its log."""

from workspace_sim.core.pydantic_plugins import skip_if_none_installed

skip_if_none_installed()  # before the first model: pydantic's plugin lookup costs ~20 ms when none is installed

from workspace_sim.runtime.config import WorkspaceConfig
from workspace_sim.core.diff import Diff, RecordChange
from workspace_sim.core.errors import SpecError, ToolError
from workspace_sim.core.events import Event, ToolResult
from workspace_sim.rules.faults import Fault
from workspace_sim.core.limits import WorkspaceLimits
from workspace_sim.core.registry import Service, Tool
from workspace_sim.services import all_services, all_tools
from workspace_sim.core.state import State
from workspace_sim.runtime.workspace import Workspace

__all__ = [
    "Diff", "Event", "Fault", "RecordChange", "Service", "SpecError", "State", "Tool", "ToolError",
    "ToolResult", "Workspace", "WorkspaceConfig", "WorkspaceLimits", "all_services", "all_tools",
]
