"""Facts that only an evidence file holds: which of the facts a generator rendered into a media file (an image,
a scanned or text PDF, a workbook, a clip) appear in no text the agent can read elsewhere.

A generator that renders evidence records it in `metadata.evidence` as `[{path, kind, facts}]`: the values the
task turns on as the file shows them (a receipt's total, a form's tax id, a figure on a chart). The text an
agent could read without opening any evidence file is every part of the spec it is shown or can fetch: the
request, the user's answers and follow-ups, the days' instructions, the world, every record of the start data
and of the world's changes, except the bytes of binary files; the predicates, the reference solution and the
metadata are not. A fact counts when neither it nor any usual spelling of it (a number with or without
thousands separators, fewer decimals, or in minor units) appears there, and its file exists in the start data
or arrives with a world change.
"""

from __future__ import annotations

import re
from typing import Any

from .spec import EnvironmentSpec

_HIDDEN = ("predicates", "reference", "metadata")
_NUMBER = re.compile(r"^-?[\d,]*\d(\.\d+)?$")


def _strip_binary(node: Any, paths: set[str]) -> Any:
    """The node with binary file contents taken out (and their paths collected)."""
    if isinstance(node, dict):
        if node.get("encoding") == "base64" and "content" in node:
            if isinstance(node.get("path"), str):
                paths.add(node["path"])
            return {k: _strip_binary(v, paths) for k, v in node.items() if k != "content"}
        return {k: _strip_binary(v, paths) for k, v in node.items()}
    if isinstance(node, list):
        return [_strip_binary(v, paths) for v in node]
    return node


def _flatten(node: Any, out: list[str]) -> None:
    if isinstance(node, dict):
        for v in node.values():
            _flatten(v, out)
    elif isinstance(node, list):
        for v in node:
            _flatten(v, out)
    elif node is not None:
        out.append(str(node))


def visible_text(spec: EnvironmentSpec) -> tuple[str, set[str]]:
    """Everything an agent can read without opening an evidence file, as one text, and the binary files' paths."""
    doc = spec.model_dump(mode="json")
    paths: set[str] = set()
    parts: list[str] = []
    _flatten(_strip_binary({k: v for k, v in doc.items() if k not in _HIDDEN}, paths), parts)
    return "\n".join(parts), paths


def spellings(fact: str) -> list[str]:
    """The ways a fact may be written in text: a number also without separators, with fewer decimals and in
    minor units ('1,240.50' -> '1240.50', '1240.5', '124050'); anything else as it is."""
    fact = fact.strip()
    out = [fact]
    if _NUMBER.match(fact):
        plain = fact.replace(",", "")
        out.append(plain)
        if "." in plain:
            whole, dec = plain.split(".")
            out.append(f"{whole}.{dec.rstrip('0')}".rstrip("."))
            if len(dec) == 2:
                out.append(str(int(whole + dec)))
    return list(dict.fromkeys(s for s in out if s))


def _appears(text: str, fact: str) -> bool:
    for s in spellings(fact):
        if _NUMBER.match(s):
            if re.search(rf"(?<![\d]){re.escape(s)}(?![\d])", text):
                return True
        elif s.lower() in text.lower():
            return True
    return False


def evidence_only_facts(spec: EnvironmentSpec) -> list[dict[str, str]]:
    """The declared evidence facts that no visible text holds: [{path, kind, fact}]."""
    declared = spec.metadata.get("evidence") or []
    if not declared:
        return []
    text, binaries = visible_text(spec)
    out = []
    for item in declared:
        path = item.get("path", "")
        if path not in binaries:
            continue
        for fact in item.get("facts", []):
            if str(fact).strip() and not _appears(text, str(fact)):
                out.append({"path": path, "kind": item.get("kind", ""), "fact": str(fact)})
    return out
