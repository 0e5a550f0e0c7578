"""The python service (being split into records.py and tools.py)."""

from workspace_sim.services.python.tools import *  # noqa: F401,F403
from workspace_sim.services.python.tools import SERVICE  # noqa: F401
