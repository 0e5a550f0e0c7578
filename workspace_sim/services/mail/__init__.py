"""mail service (being split into records, tools and views)."""

from workspace_sim.services.mail.tools import *  # noqa: F401,F403
from workspace_sim.services.mail.tools import SERVICE  # noqa: F401
