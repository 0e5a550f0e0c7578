"""Mail: per-person mailboxes with folders, threads, labels, drafts, and attachments that refer to files.

Every stored message is one mailbox's copy, owned by `owner`. Sending stores the sender's copy in
"sent" and a copy in the inbox of every recipient who has an account; all copies of one sent mail
share `message_id` and `thread_id`. The agent acts as the workspace user and only ever sees or
changes that user's copies: another mailbox's message ids answer "not found", like missing ones.

The folder: `records.py` holds the mailboxes and messages, the start-data check (`prepare`) and `SERVICE` with its
table handles; `tools.py` the tools; `syntax.py` the Gmail-style search query language; `names.py` the folder and
label name rules that both the records and the search syntax check names against.
"""

from __future__ import annotations

from .names import SYSTEM_FOLDERS, folder_name, label_name
from .records import ACCOUNTS, MESSAGES, SERVICE, Account, Message, prepare, unique
from .syntax import Matcher, Term, parse_query
from .tools import (
    search_emails, list_mail_folders, read_email, send_email, reply_email, forward_email, create_draft,
    update_draft, send_draft, move_email, label_email, mark_email_read, delete_email
)

SERVICE.add_tools(search_emails, list_mail_folders, read_email, send_email, reply_email, forward_email, create_draft, update_draft, send_draft, move_email, label_email, mark_email_read, delete_email)

__all__ = ["SERVICE", "ACCOUNTS", "MESSAGES", "Account", "Message", "prepare", "unique", "SYSTEM_FOLDERS", "folder_name",
           "label_name", "Matcher", "Term", "parse_query", "search_emails", "list_mail_folders", "read_email", "send_email", "reply_email", "forward_email", "create_draft", "update_draft", "send_draft", "move_email", "label_email", "mark_email_read", "delete_email"]
