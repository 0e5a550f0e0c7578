"""Notes: notebooks and notes (title, text or markdown body, tags, pinned, archived) with sharing.

Modelled on Apple Notes, OneNote, Google Keep and Evernote as people use them at work. A note has an
owner; the owner can share it with collaborators who may `view` or `edit` it. The agent acts as the
user: it sees the user's own notes and those shared with the user, can edit the latter only with
`edit` permission, and only an owner may delete, move or share a note. Notebooks are personal
folders. Sharing can also send each new collaborator the note by e-mail, through the mail service's
`send_email` tool in the same call, so mail policies judge the share as a whole. A note may list its
participants (who took part in the meeting it records), named by address or by a directory name;
being a participant gives no access.
"""

from __future__ import annotations

from .records import (
    SERVICE, NOTEBOOKS, NOTES, Permission, Format, MAX_TITLE, MAX_TEXT, MAX_NAME, MAX_TAGS, MAX_COLLABORATORS,
    MAX_QUERY, MAX_MESSAGE, MAX_PARTICIPANTS, Notebook, Collaborator, Note,
)
from .tools import (
    note_json, search_notes, get_note, create_note, update_note, delete_note, move_note,
    list_notebooks, create_notebook, share_note, unshare_note
)

SERVICE.add_tools(
    search_notes, get_note, create_note, update_note, delete_note, move_note, list_notebooks, create_notebook,
    share_note, unshare_note,
)

__all__ = [
    "SERVICE", "NOTEBOOKS", "NOTES", "note_json", "search_notes", "get_note", "create_note", "update_note",
    "delete_note", "move_note", "list_notebooks", "create_notebook", "share_note", "unshare_note", "Permission",
    "Format", "MAX_TITLE", "MAX_TEXT", "MAX_NAME", "MAX_TAGS", "MAX_COLLABORATORS", "MAX_QUERY", "MAX_MESSAGE",
    "MAX_PARTICIPANTS", "Notebook", "Collaborator", "Note",
]
