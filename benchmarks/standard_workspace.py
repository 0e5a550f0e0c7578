"""The reproducible standard workspace used by the core benchmarks.

200 files of about 2 KB in nested folders, 300 messages over 4 folders, 100 events over 10 people,
50 contacts, 100 tickets with 3 comments each. Built from a seeded RNG, so every run measures the
same data.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

from workspace_sim import Workspace, WorkspaceConfig

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
WORDS = ("budget report meeting draft review launch invoice roadmap vendor contract hiring quarterly "
         "forecast design metrics customer support incident release planning offsite training").split()
USER = "ana.lopez@example.com"


def _text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + "\n"
        out.append(line)
        n += len(line)
    return "".join(out)[:size]


def standard_data(seed: int = 0) -> dict[str, Any]:
    """The standard workspace's initial data `{service: {table: [records]}}`."""
    rng = random.Random(seed)
    people = [f"person{i:02d}@example.com" for i in range(49)] + [USER]
    zones = ["Europe/London", "America/New_York", "Asia/Tokyo", "Europe/Berlin", "UTC"]
    contacts = [
        {"email": p, "name": f"Person {i}", "title": rng.choice(["Engineer", "Manager", "Analyst"]),
         "department": rng.choice(["Finance", "Sales", "Engineering", "Ops"]), "timezone": rng.choice(zones),
         "phone": f"+1-555-{i:04d}"}
        for i, p in enumerate(people)
    ]
    files = []
    for i in range(200):
        folder = f"/projects/p{i % 10}/{['docs', 'data', 'notes'][i % 3]}"
        files.append({"path": f"{folder}/file{i:03d}.txt", "content": _text(rng, 2048)})
    folders = ["inbox", "sent", "archive", "drafts"]
    messages = []
    for i in range(300):
        folder = folders[i % 4]
        sender = USER if folder in ("sent", "drafts") else rng.choice(people[:-1])
        messages.append({
            "id": f"msg-{i:04d}", "owner": USER, "folder": folder, "thread_id": f"thr-{i // 3:04d}",
            "sender": sender, "to": [USER if sender != USER else rng.choice(people[:-1])], "cc": [], "bcc": [],
            "subject": " ".join(rng.choice(WORDS) for _ in range(4)).capitalize(), "body": _text(rng, 600),
            "date": (NOW - timedelta(hours=i)).isoformat(), "labels": [], "read": i % 3 == 0, "attachments": [],
        })
    events = []
    for i in range(100):
        start = NOW + timedelta(days=i % 10, hours=rng.randint(0, 8))
        org = people[i % 10]
        events.append({
            "id": f"evt-{i:04d}", "title": " ".join(rng.choice(WORDS) for _ in range(3)).title(),
            "start": start.isoformat(), "end": (start + timedelta(minutes=rng.choice([30, 60]))).isoformat(),
            "organizer": org, "attendees": [{"email": org, "response": "accepted"},
                                            {"email": people[(i + 1) % 10], "response": "needs_action"}],
        })
    tickets = []
    for i in range(100):
        tickets.append({
            "key": f"OPS-{i + 1}", "project": "OPS", "title": " ".join(rng.choice(WORDS) for _ in range(5)),
            "description": _text(rng, 300), "status": rng.choice(["Open", "In Progress", "Resolved"]),
            "reporter": rng.choice(people), "assignee": rng.choice(people),
            "comments": [{"id": f"c-{i}-{j}", "author": rng.choice(people), "body": _text(rng, 120),
                          "created": (NOW - timedelta(days=j)).isoformat()} for j in range(3)],
            "created": (NOW - timedelta(days=30)).isoformat(), "updated": NOW.isoformat(),
        })
    return {
        "files": {"files": files},
        "mail": {"accounts": [{"email": USER, "name": "Ana Lopez"}], "messages": messages},
        "calendar": {"events": events},
        "contacts": {"people": contacts},
        "tickets": {"projects": [{"key": "OPS", "name": "Operations"}], "tickets": tickets},
    }


def standard_workspace(seed: int = 0) -> Workspace:
    """The standard workspace, ready to call."""
    return Workspace.create(WorkspaceConfig(user=USER, now=NOW, seed=seed), standard_data(seed))
