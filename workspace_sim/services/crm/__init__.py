"""CRM: accounts, their contacts, deals through the sales stages, an activity log, and CSV reports.

Modelled on Salesforce and HubSpot as people use them. A CRM contact *is* a directory person when
the address is in `contacts.people` (read by table name; this module imports no other service):
its name, title and phone come from the directory and the CRM stores only the link (account and
role). Outside customers who are not in the directory are CRM contacts too, and then carry their
own name, title and phone. Money is integer minor units plus an ISO 4217 code (`workspace_sim.text.money`);
amounts in different currencies are never converted, so revenue and amount ranges compare in each
record's own currency (add a currency filter to compare like with like). Deal stages run
prospecting -> qualification -> proposal -> negotiation -> closed_won / closed_lost; the probability
follows the stage unless given, and a closed deal reopens only with `reopen=true`. An account's last
contact is the latest logged call, meeting or e-mail with it that has happened, or the `last_contact`
its initial data gives when that is later (history imported without activities); it is derived, never
written back, so logging an activity changes the activity log alone.

The folder: `records.py` holds the records, the start-data check (`prepare`) and `SERVICE` with its table handles.
The tools are split by subject into four tool modules: `tools.py` the account tools, `deals.py` the deal tools,
`activities.py` the activity log and `reports.py` the CSV export. `lookups.py` holds the lookups and argument checks
they share (records by id or name, owners, dates, paging, amount bounds, each account's last contact) and `views.py`
the JSON summaries and text renderings. The service's tool list is made here, from all four, in the order tool
lists show.
"""

from __future__ import annotations

from .activities import list_activities, log_activity
from .deals import (
    DEAL_SORTS, DealStatus, create_deal, find_deals, get_deal, search_deals, update_deal,
)
from .lookups import last_contacts
from .records import (
    ACCOUNT_STATUSES, ACCOUNTS, ACTIVITIES, ACTIVITY_TYPES, CLOSED, CONTACT_TYPES, CONTACTS, DEALS, SERVICE,
    STAGE_PROBABILITY, STAGES, Account, AccountContact, AccountStatus, Activity, ActivityType, Deal, Stage, domain_name, prepare,
    probability_problem, short_text,
)
from .reports import (
    ACCOUNT_COLUMNS, DEAL_COLUMNS, DEFAULT_COLUMNS, MAX_EXPORT_ROWS, ReportFilters, export_report,
)
from .tools import (
    ACCOUNT_SORTS, account_json, add_account_contact, create_account, find_accounts, get_account, search_accounts,
    update_account,
)

SERVICE.add_tools(
    search_accounts, get_account, create_account, update_account, add_account_contact,
    search_deals, get_deal, create_deal, update_deal,
    log_activity, list_activities,
    export_report,
)

__all__ = [
    "SERVICE", "ACCOUNTS", "CONTACTS", "DEALS", "ACTIVITIES", "Account", "AccountContact", "Deal", "Activity",
    "AccountStatus", "ActivityType", "Stage", "DealStatus", "ACCOUNT_STATUSES", "ACTIVITY_TYPES", "CLOSED",
    "CONTACT_TYPES", "STAGES", "STAGE_PROBABILITY", "domain_name", "short_text", "probability_problem", "prepare",
    "last_contacts", "find_accounts", "find_deals", "account_json", "ACCOUNT_SORTS", "DEAL_SORTS", "ACCOUNT_COLUMNS",
    "DEAL_COLUMNS", "DEFAULT_COLUMNS", "MAX_EXPORT_ROWS", "ReportFilters",
    "search_accounts", "get_account", "create_account", "update_account", "add_account_contact", "search_deals",
    "get_deal", "create_deal", "update_deal", "log_activity", "list_activities", "export_report",
]
