"""The todo service (being split into records.py and tools.py)."""

from workspace_sim.services.todo.tools import *  # noqa: F401,F403
from workspace_sim.services.todo.tools import SERVICE  # noqa: F401
