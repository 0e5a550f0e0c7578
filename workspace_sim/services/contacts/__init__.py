"""The contacts service (being split into records.py and tools.py)."""

from workspace_sim.services.contacts.tools import *  # noqa: F401,F403
from workspace_sim.services.contacts.tools import SERVICE  # noqa: F401
