"""The notes service (being split into records.py and tools.py)."""

from workspace_sim.services.notes.tools import *  # noqa: F401,F403
from workspace_sim.services.notes.tools import SERVICE  # noqa: F401
