"""How the CRM shows its records: the JSON summaries tools return and their text renderings."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from workspace_sim.core.context import ToolContext
from workspace_sim.text.money import format_minor
from workspace_sim.text.people import PEOPLE
from .records import Account, AccountContact, Activity, Deal


def money_text(minor: int | None, currency: str) -> str | None:
    """Exact decimal text of an optional amount in minor units."""
    return None if minor is None else format_minor(minor, currency)


def account_summary(a: Account, open_deals: int = 0, last_contact: datetime | None = None) -> dict[str, Any]:
    """The fields of an account a list shows (money as exact decimal text in its currency; `last_contact` as the
    CRM derives it from logged activities)."""
    return {"id": a.id, "name": a.name, "domain": a.domain, "industry": a.industry, "tier": a.tier,
            "annual_revenue": money_text(a.annual_revenue_minor, a.currency), "currency": a.currency,
            "owner": a.owner, "status": a.status,
            "renewal_date": a.renewal_date.isoformat() if a.renewal_date else None,
            "last_contact": last_contact.isoformat() if last_contact else None, "open_deals": open_deals}


def deal_summary(d: Deal, account_name: str = "") -> dict[str, Any]:
    """The fields of a deal a list shows."""
    return {"id": d.id, "name": d.name, "account_id": d.account_id, "account_name": account_name,
            "amount": format_minor(d.amount_minor, d.currency), "amount_minor": d.amount_minor,
            "currency": d.currency, "stage": d.stage, "probability": d.probability,
            "close_date": d.close_date.isoformat() if d.close_date else None, "owner": d.owner,
            "next_step": d.next_step}


def contact_card(ctx: ToolContext, c: AccountContact) -> dict[str, Any]:
    """A CRM contact as a tool shows it: name, title and phone from the directory when the person is in it."""
    p = ctx.get(PEOPLE, c.email) if ctx.has_service("contacts") else None
    return {"email": c.email, "account_id": c.account_id, "role": c.role, "in_directory": p is not None,
            "name": p.name if p is not None else c.name, "title": p.title if p is not None else c.title,
            "phone": p.phone if p is not None else c.phone}


def activity_json(a: Activity) -> dict[str, Any]:
    """An activity's fields as JSON."""
    return {"id": a.id, "type": a.type, "subject": a.subject, "body": a.body, "account_id": a.account_id,
            "deal_id": a.deal_id, "contacts": list(a.contacts), "author": a.author,
            "occurred": a.occurred.isoformat() if a.occurred else None}


def account_line(d: dict[str, Any]) -> str:
    """One line of text for an account summary."""
    money = f", revenue {d['annual_revenue']} {d['currency']}" if d["annual_revenue"] is not None else ""
    renew = f", renews {d['renewal_date']}" if d["renewal_date"] else ""
    renew += f", last contact {d['last_contact'][:10]}" if d.get("last_contact") else ""
    tier = f" tier {d['tier']}" if d["tier"] else ""
    return (f"{d['id']} {d['name']} [{d['status']}]{tier} — {d['industry'] or 'no industry'}{money}{renew}; "
            f"owner {d['owner'] or 'none'}")


def deal_line(d: dict[str, Any]) -> str:
    """One line of text for a deal summary."""
    close = f", closes {d['close_date']}" if d["close_date"] else ""
    return (f"{d['id']} {d['name']} ({d['account_name'] or d['account_id']}) [{d['stage']} {d['probability']}%] "
            f"{d['amount']} {d['currency']}{close}; owner {d['owner'] or 'none'}")


def activity_line(a: dict[str, Any]) -> str:
    """One line of text for an activity."""
    deal = f" deal {a['deal_id']}" if a["deal_id"] else ""
    return f"{a['id']} {a['occurred'][:16].replace('T', ' ')} {a['type']}: {a['subject']} ({a['account_id']}{deal})"


def render_account(data: dict) -> str:
    """The text rendering of get_account's answer: the account, its contacts, open deals and recent activities."""
    d = data["account"]
    lines = [account_line(d)]
    if d["domain"]:
        lines.append(f"Domain: {d['domain']}")
    if d["description"]:
        lines.append(d["description"])
    lines.append(f"Contacts ({len(data['contacts'])}):")
    lines += [f"- {c['name']} <{c['email']}>" + (f", {c['role']}" if c["role"] else "")
              + ("" if c["in_directory"] else " (outside the directory)") for c in data["contacts"]]
    lines.append(f"Open deals ({len(data['open_deals'])}):")
    lines += [f"- {deal_line(x)}" for x in data["open_deals"]]
    lines.append(f"Recent activities ({len(data['recent_activities'])}):")
    lines += [f"- {activity_line(x)}" for x in data["recent_activities"]]
    return "\n".join(lines)


def render_deal(data: dict) -> str:
    """The text rendering of a deal answer: the deal, its next step, what changed and its activities."""
    d = data["deal"]
    lines = [deal_line(d), f"Next step: {d['next_step'] or 'none'}"]
    if data.get("changed") is not None:
        lines.append(f"Changed: {', '.join(data['changed']) or 'nothing'}")
    acts = data.get("activities", [])
    if acts:
        lines.append(f"Activities ({len(acts)}):")
        lines += [f"- {activity_line(x)}" for x in acts]
    return "\n".join(lines)
