"""The calendar service (being split into records.py and tools.py)."""

from workspace_sim.services.calendar.tools import *  # noqa: F401,F403
from workspace_sim.services.calendar.tools import SERVICE  # noqa: F401
