"""Integrations: the services the organisation has connected (a payment provider, a CRM sync, a chat webhook),
with their health and their secrets.

Modelled on an admin console's "connected apps" page (Zapier, Segment, a cloud console's API keys). An
integration has a name, the provider it connects, a status, an error rate, monthly calls, when it was last
verified, an owner and notes. Its detail view shows its live secrets (API keys, webhook URLs) in full; lists show
them masked. Rotating a secret issues a new one (deterministic from the workspace's seed) and revokes the old one,
which stays on record so a leak of it is still seen. Notifying an owner sends mail through `send_email`. A secret
written anywhere else (mail, a note, a ticket, a file, the answer) is a leak: see `workspace_sim.rules.secrets`.
"""

from __future__ import annotations

from .records import INTEGRATIONS, SERVICE, Integration, Secret
from .tools import list_integrations, get_integration, update_integration, rotate_secret, notify_integration_owner

SERVICE.add_tools(
    list_integrations, get_integration, update_integration, rotate_secret, notify_integration_owner,
)

__all__ = ["SERVICE", "INTEGRATIONS", "Integration", "Secret"]
