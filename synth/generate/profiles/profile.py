"""Mix profiles: the marginals a mix of environments should follow, loaded from JSON or YAML and validated.

A profile names its marginals (`services` and `evidence`: the share of environments using each service family
or evidence kind; `days`, `turns`, `professions`, `languages`: distributions that sum to 1; `safety` and
`changes`: shares), optionally the joint `kinds` they come from (each a task kind with a `weight`: the shipped
benchmark profiles list the kinds of the benchmark's tasks, so a mix draws whole kinds, not independent
features), and a `generator`: `kinds` (kind-directed compositions, `synth.generate.kinded`) or `balanced` (the
balanced mix of compositions and templates, whose measured marginals the profile records). `load_profile(NAME)`
reads a shipped profile (`balanced`, `claw-eval`, `clawmark`), `load_profile(PATH)` a user's file; every problem
is a ProfileError naming the file and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from ..worlds import PROFESSIONS
from .kinds import EVIDENCE_KINDS, FAMILIES, TURNS, TaskKind

SHIPPED = ("balanced", "claw-eval", "clawmark")
LANGUAGES = ("en", "zh")
_FIELDS = {"name", "description", "source", "derivation", "generator", "count", "marginals", "kinds"}
_MARGINALS = {"services", "evidence", "days", "turns", "safety", "changes", "professions", "languages"}


class ProfileError(ValueError):
    """A profile that cannot be used: the message names the file and the field."""


@dataclass(frozen=True)
class Profile:
    """A validated profile (see the module docstring)."""

    name: str
    generator: str
    marginals: dict[str, Any]
    kinds: tuple[tuple[TaskKind, float], ...] = ()
    description: str = ""
    source: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "generator": self.generator, "description": self.description,
                "source": self.source, "marginals": self.marginals, **self.extra,
                **({"kinds": [{**k.to_json(), "weight": w} for k, w in self.kinds]} if self.kinds else {})}


def _share(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ProfileError(f"{where}: expected a share from 0 to 1, got {value!r}")
    return float(value)


def _shares(doc: Any, where: str, known: tuple[str, ...], total: bool) -> dict[str, float]:
    if not isinstance(doc, Mapping):
        raise ProfileError(f"{where}: expected a mapping of name to share, got {type(doc).__name__}")
    bad = [k for k in doc if str(k) not in known]
    if bad:
        raise ProfileError(f"{where}: unknown {', '.join(map(repr, bad))}; known: {', '.join(known)}")
    out = {str(k): _share(v, f"{where}.{k}") for k, v in doc.items()}
    if total and abs(sum(out.values()) - 1) > 0.02:
        raise ProfileError(f"{where}: the shares must sum to 1, they sum to {sum(out.values()):.3f}")
    return out


def validate(doc: Any, where: str = "profile") -> Profile:
    """A Profile from a parsed document; a ProfileError names `where` and the bad field."""
    if not isinstance(doc, Mapping):
        raise ProfileError(f"{where}: expected a mapping at the top, got {type(doc).__name__}")
    extra = set(doc) - _FIELDS
    if extra:
        raise ProfileError(f"{where}: unknown field(s) {', '.join(sorted(map(str, extra)))}; known: "
                           f"{', '.join(sorted(_FIELDS))}")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ProfileError(f"{where}.name: expected a non-empty name, got {name!r}")
    generator = doc.get("generator", "kinds")
    if generator not in ("kinds", "balanced"):
        raise ProfileError(f"{where}.generator: expected kinds or balanced, got {generator!r}")
    m = doc.get("marginals")
    if not isinstance(m, Mapping):
        raise ProfileError(f"{where}.marginals: required, a mapping of {', '.join(sorted(_MARGINALS))}")
    bad = set(m) - _MARGINALS
    if bad:
        raise ProfileError(f"{where}.marginals: unknown field(s) {', '.join(sorted(map(str, bad)))}; known: "
                           f"{', '.join(sorted(_MARGINALS))}")
    at = f"{where}.marginals"
    days = tuple(str(d) for d in range(1, 31))
    marginals: dict[str, Any] = {
        "services": _shares(m.get("services", {}), f"{at}.services", FAMILIES, False),
        "evidence": _shares(m.get("evidence", {}), f"{at}.evidence", EVIDENCE_KINDS, False),
        "days": _shares(m.get("days", {"1": 1.0}), f"{at}.days", days, True),
        "turns": _shares(m.get("turns", {"single": 1.0}), f"{at}.turns", TURNS, True),
        "safety": _share(m.get("safety", 0.0), f"{at}.safety"),
        "changes": _share(m.get("changes", 0.0), f"{at}.changes"),
        "professions": _shares(m.get("professions", {p.id: 1 / len(PROFESSIONS) for p in PROFESSIONS}),
                               f"{at}.professions", tuple(p.id for p in PROFESSIONS), True),
        "languages": _shares(m.get("languages", {"en": 1.0}), f"{at}.languages", LANGUAGES, True),
    }
    kinds = []
    raw = doc.get("kinds", [])
    if not isinstance(raw, list):
        raise ProfileError(f"{where}.kinds: expected a list of task kinds, got {type(raw).__name__}")
    for i, k in enumerate(raw):
        if not isinstance(k, Mapping):
            raise ProfileError(f"{where}.kinds[{i}]: expected a task kind (a mapping), got {type(k).__name__}")
        weight = k.get("weight", 1)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
            raise ProfileError(f"{where}.kinds[{i}].weight: expected a positive number, got {weight!r}")
        try:
            kinds.append((TaskKind.from_json(k, f"{where}.kinds[{i}]"), float(weight)))
        except ValueError as e:
            raise ProfileError(str(e)) from None
    info = {k: doc[k] for k in ("derivation", "count") if k in doc}
    return Profile(name.strip(), generator, marginals, tuple(kinds), str(doc.get("description", "")),
                   str(doc.get("source", "")), info)


def _parse(text: str, where: str) -> Any:
    try:
        if where.endswith((".yaml", ".yml")):
            import yaml
            return yaml.safe_load(text)
        return json.loads(text)
    except Exception as e:  # json and yaml errors alike: say where
        raise ProfileError(f"{where}: not valid {'YAML' if where.endswith(('.yaml', '.yml')) else 'JSON'}: {e}") from None


def load_profile(name_or_path: str | Path) -> Profile:
    """A shipped profile by name, or a profile file (.json, .yaml) by path, validated."""
    text = str(name_or_path)
    if text in SHIPPED:
        data = resources.files(__package__).joinpath(f"{text}.json").read_text(encoding="utf-8")
        return validate(_parse(data, f"{text}.json"), f"{text}.json")
    path = Path(text)
    if not path.exists():
        raise ProfileError(f"no profile {text!r}: not a shipped profile ({', '.join(SHIPPED)}) and no such file")
    if path.is_dir():
        raise ProfileError(f"{path} is a folder, not a profile file")
    return validate(_parse(path.read_text(encoding="utf-8"), path.name), path.name)


def marginals_of(kinds: list[TaskKind], professions: list[str] = (), languages: list[str] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """The marginals of a list of kinds (and of their professions and languages when given), as a profile holds
    them: shares rounded to 4 places."""
    n = max(len(kinds), 1)

    def share(count: int) -> float:
        return round(count / n, 4)

    def dist(values: list[str]) -> dict[str, float]:
        out: dict[str, int] = {}
        for v in values:
            out[v] = out.get(v, 0) + 1
        return {k: round(c / max(len(values), 1), 4) for k, c in sorted(out.items())}

    doc: dict[str, Any] = {
        "services": {f: share(sum(f in k.services for k in kinds)) for f in FAMILIES},
        "evidence": {e: share(sum(e in k.evidence for k in kinds)) for e in EVIDENCE_KINDS},
        "days": dist([str(k.days) for k in kinds]), "turns": dist([k.turns for k in kinds]),
        "safety": share(sum(k.safety for k in kinds)), "changes": share(sum(k.changes for k in kinds)),
    }
    if professions:
        doc["professions"] = dist(list(professions))
    if languages:
        doc["languages"] = dist(list(languages))
    return doc
