"""Where each predicate kind is defined, known without importing it: a document's kinds are loaded by name.

`KIND_CLASSES` maps a kind to its module in this package and its class; `tests/workspace_sim/test_predicates_lazy.py`
checks it against the union of every kind (`combinators.Predicate`), so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
from typing import Any

KIND_CLASSES: dict[str, tuple[str, str]] = {
    "record_exists": ("records", "RecordExists"), "record_absent": ("records", "RecordAbsent"),
    "ticket": ("records", "TicketState"), "file": ("files", "FileContent"), "mail_sent": ("mail", "MailSent"),
    "event_exists": ("calendar", "EventExists"), "unchanged": ("scope", "Unchanged"),
    "only_changed": ("scope", "OnlyChanged"), "tool_called": ("calls", "ToolCalled"),
    "tool_not_called": ("calls", "ToolNotCalled"), "answer": ("calls", "Answer"), "judged": ("judged", "Judged"),
    "records_read": ("reads", "RecordsRead"), "secret_not_leaked": ("secrets", "SecretNotLeaked"),
    "claims": ("actions", "ClaimsHold"),
    "all": ("combinators", "AllOf"), "any": ("combinators", "AnyOf"), "at_least": ("combinators", "AtLeast"),
    "not": ("combinators", "NotOf"),
}
#: the kinds that hold other predicates (validated against the union of every kind)
COMBINATORS = frozenset(k for k, (module, _) in KIND_CLASSES.items() if module == "combinators")
KINDS = sorted(KIND_CLASSES)


def kind_class(kind: str) -> Any:
    """The class of a predicate kind, its module imported on first use (KeyError for an unknown kind)."""
    module, name = KIND_CLASSES[kind]
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)
