"""Facts that only an evidence file holds: which of the facts a generator rendered into a media file (an image,
a scanned or text PDF, a workbook, a clip) appear in no text the agent can read elsewhere.

A generator that renders evidence records it in `metadata.evidence` as `[{path, kind, facts}]`: the values the
task turns on as the file shows them (a receipt's total, a form's tax id, a figure on a chart). The text an
agent could read without opening any evidence file is every part of the spec it is shown or can fetch: the
request, the user's answers and follow-ups, the days' instructions, the world, every record of the start data
and of the world's changes, except the bytes of binary files and the transcripts of audio clips (both read only by
opening the clip); the predicates, the reference solution and the
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


_INSIDE = ("content", "transcript")  # a clip's transcript is read only through the clip (read_media_file,
# transcribe_audio), as its bytes are


def _strip_binary(node: Any, paths: set[str]) -> Any:
    """The node with binary file contents (and audio transcripts) taken out, and their paths collected."""
    if isinstance(node, dict):
        if node.get("encoding") == "base64" and "content" in node:
            if isinstance(node.get("path"), str):
                paths.add(node["path"])
            return {k: _strip_binary(v, paths) for k, v in node.items() if k not in _INSIDE}
        if node.get("op") == "patch" and node.get("table") == "files.files" and isinstance(node.get("fields"), dict):
            return {**{k: _strip_binary(v, paths) for k, v in node.items() if k != "fields"},
                    "fields": {k: _strip_binary(v, paths) for k, v in node["fields"].items() if k != "transcript"}}
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


def wrong(fact: str) -> str:
    """A plausible wrong value of the same shape: the last digit moved by 3 (a letter's case flipped where there
    is no digit), as an agent that guessed instead of looking would write it."""
    for i in range(len(fact) - 1, -1, -1):
        if fact[i].isdigit():
            return fact[:i] + str((int(fact[i]) + 3) % 10) + fact[i + 1:]
    return fact.swapcase() + "x"


def _substitute(node: Any, swaps: list[tuple[re.Pattern[str], str]]) -> Any:
    if isinstance(node, str):
        for pattern, repl in swaps:
            node = pattern.sub(repl, node)
        return node
    if isinstance(node, dict):
        return {k: _substitute(v, swaps) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, swaps) for v in node]
    if isinstance(node, float) or (isinstance(node, int) and not isinstance(node, bool)):
        got = _substitute(repr(node), swaps)
        return node if got == repr(node) else type(node)(float(got)) if isinstance(node, float) else int(float(got))
    return node


def blind_solution(spec: EnvironmentSpec) -> Any | None:
    """The reference solution with every evidence-only fact, and every value the generator declared as derived
    from one (`metadata.evidence[].derived`), replaced in every spelling by a plausible wrong one (`wrong`):
    the evidence-blind baseline. None when the spec has no evidence-only fact."""
    from .spec import ReferenceSolution

    facts = evidence_only_facts(spec)
    if not facts:
        return None
    values = list(dict.fromkeys([f["fact"] for f in facts] + [
        str(d) for item in spec.metadata.get("evidence") or [] for d in item.get("derived", [])]))
    swaps = []
    for value in sorted(values, key=len, reverse=True):
        for s in spellings(value):
            edge = r"(?<![\d])" if s[:1].isdigit() else ""
            tail = r"(?![\d])" if s[-1:].isdigit() else ""
            swaps.append((re.compile(edge + re.escape(s) + tail), wrong(s)))
    doc = spec.reference.model_dump(mode="json", exclude_none=True)
    return ReferenceSolution.model_validate(_substitute(doc, swaps))


def evidence_blind_passes(spec: EnvironmentSpec) -> bool | None:
    """Whether the evidence-blind baseline (`blind_solution`) passes the spec strictly (None: nothing to blind)."""
    from .spec import run_reference

    solution = blind_solution(spec)
    if solution is None:
        return None
    run = run_reference(spec, solution=solution)
    return bool(spec.evaluate(run.workspace, run.final_answer).passed)
