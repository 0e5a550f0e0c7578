"""Issue 24 item 7: `allowed_recipient_domains` holds for notes shared without a notifying e-mail.

A collaborator reads a shared note as a recipient reads a mail, so `share_note` to an outside address
escaped the rule whenever `notify_by_email` was off. Now the policy looks at new collaborators too.
"""

from __future__ import annotations

from support import call_error

from workspace_sim import Workspace, WorkspaceConfig

ME, DANA, OUT = "me@acme.com", "dana@acme.com", "pat@partner.org"
POLICY = {"type": "allowed_recipient_domains", "domains": ["ACME.com"]}


def make(notes: list[dict]) -> Workspace:
    data = {"notes": {"notes": notes}, "contacts": {"people": [{"email": OUT, "name": "Pat Partner"}]}}
    return Workspace.create(WorkspaceConfig(services=["notes", "contacts"], user=ME, policies=[POLICY]), data)


def test_sharing_a_note_outside_the_allowed_domains_without_mail_is_blocked_and_changes_nothing() -> None:
    ws = make([{"id": "n1", "title": "Pricing", "body": "Floor price: 41k"}])
    before = ws.content_hash
    for people in ([OUT], ["Pat Partner"], [DANA, OUT]):  # by address, by directory name, among allowed ones
        message = call_error(ws, "share_note", {"id": "n1", "people": people})
        assert message.startswith("policy_violation") and OUT in message and "n1" in message
    assert ws.content_hash == before and ws.table("notes.notes")["n1"].collaborators == []
    assert ws.call("share_note", {"id": "n1", "people": [DANA], "permission": "edit"}).ok  # the domain's own people


def test_a_collaborator_already_outside_keeps_access_and_the_note_can_still_be_edited() -> None:
    # the rule is about what the agent shares, not about what the world already shared
    ws = make([{"id": "n1", "title": "Joint plan", "body": "v1", "collaborators": [{"email": OUT}]}])
    assert ws.call("update_note", {"id": "n1", "body": "v2"}).ok
    assert ws.call("share_note", {"id": "n1", "people": [OUT, DANA], "permission": "edit"}).ok
