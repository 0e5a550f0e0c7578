"""Contacts: the organisation's directory (people keyed by email), with search and lookup tools.

The address rules and name resolution the other services share live in `workspace_sim.text.people`.
"""

from __future__ import annotations

from .records import SERVICE, PEOPLE, MAX_QUERY, MAX_FIELD, MAX_NOTES, MAX_NOTE, PHONE, HOURS, Person, chain_loop
from .tools import search_contacts, find_person, get_contact, create_contact, update_contact, add_contact_note

SERVICE.add_tools(
    search_contacts, get_contact, create_contact, update_contact, add_contact_note,
)

__all__ = [
    "SERVICE", "chain_loop", "PEOPLE", "search_contacts", "find_person", "get_contact", "create_contact",
    "update_contact", "add_contact_note", "MAX_QUERY", "MAX_FIELD", "MAX_NOTES", "MAX_NOTE", "PHONE", "HOURS",
    "Person",
]
