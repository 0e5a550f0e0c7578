"""crm service (being split into records, tools and views)."""

from workspace_sim.services.crm.tools import *  # noqa: F401,F403
from workspace_sim.services.crm.tools import SERVICE  # noqa: F401
