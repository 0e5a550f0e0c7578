"""Mail folder and label names: what both the records and the search syntax check names against.

The system folders are fixed and lower case; other folders and labels are free text of at most MAX_NAME
characters without control characters. Labels keep their case but compare case-insensitively.
"""

from __future__ import annotations


SYSTEM_FOLDERS = ("inbox", "sent", "drafts", "archive", "trash")
MAX_NAME = 100


def _name_problem(name: object) -> str | None:
    if not isinstance(name, str):
        return f"must be a string, got {type(name).__name__}"
    if not name.strip():
        return "is empty"
    if len(name) > MAX_NAME:
        return f"is longer than {MAX_NAME} characters"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "contains control characters"
    return None


def folder_name(name: str) -> str:
    """The canonical folder name: stripped; the system folders (inbox, sent, ...) in lower case."""
    problem = _name_problem(name)
    if problem is not None:
        raise ValueError(f"folder name {name!r} {problem}")
    name = name.strip()
    return name.lower() if name.lower() in SYSTEM_FOLDERS else name


def label_name(name: str) -> str:
    """A label stripped of surrounding space (labels keep their case but compare case-insensitively)."""
    problem = _name_problem(name)
    if problem is not None:
        raise ValueError(f"label {name!r} {problem}")
    return name.strip()
