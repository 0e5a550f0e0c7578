"""tickets service (being split into records, tools and views)."""

from workspace_sim.services.tickets.tools import *  # noqa: F401,F403
from workspace_sim.services.tickets.tools import SERVICE  # noqa: F401
