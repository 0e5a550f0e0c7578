"""Draw the targets of a mix that follows a profile, and compare a mix's marginals with a profile's.

`targets(profile, count, seed)` gives each environment its target: a task kind (drawn from the profile's kinds by
weight, in quotas so a mix of N holds each kind about N times its share, else feature by feature from the
marginals), a profession and a locale of the profile's language, and a seed; the same profile, count and seed
give the same targets (`synth.profile_mix` builds and validates them). `compare` sets a mix's marginals beside a
profile's.
"""

from __future__ import annotations

import json
import random
from typing import Any, Sequence

from ...spec import EnvironmentSpec
from .kinds import EVIDENCE_KINDS, FAMILIES, TaskKind, kind_of
from .profile import Profile, marginals_of

_LOCALES = {"en": (("en-US", 0.55), ("en-GB", 0.45)), "zh": (("zh-CN", 1.0),)}


def _quota(weights: dict[Any, float], count: int, rng: random.Random) -> list[Any]:
    """`count` values in shuffled order, each about `count` times its share (largest remainders)."""
    total = sum(weights.values()) or 1.0
    exact = {k: count * w / total for k, w in weights.items()}
    out = {k: int(x) for k, x in exact.items()}
    rest = sorted(exact, key=lambda k: (-(exact[k] - out[k]), str(k)))
    for k in rest[:count - sum(out.values())]:
        out[k] += 1
    values = [k for k in weights for _ in range(out[k])]
    rng.shuffle(values)
    return values


def _from_marginals(m: dict[str, Any], rng: random.Random) -> TaskKind:
    services = frozenset(f for f in FAMILIES if rng.random() < m["services"].get(f, 0.0))
    evidence = frozenset(e for e in EVIDENCE_KINDS if rng.random() < m["evidence"].get(e, 0.0))
    days = int(rng.choices(list(m["days"]), weights=list(m["days"].values()))[0])
    turns = rng.choices(list(m["turns"]), weights=list(m["turns"].values()))[0]
    if days > 1:
        turns = "multi"
    return TaskKind(services, evidence, days, turns, days > 1 or rng.random() < m["changes"],
                    rng.random() < m["safety"])


def targets(profile: Profile, count: int, seed: int = 0) -> list[dict[str, Any]]:
    """Each environment's target: {kind, profession, locale, seed} (see the module docstring)."""
    rng = random.Random(f"profile:{profile.name}:{seed}")
    m = profile.marginals
    if profile.kinds:
        weights: dict[TaskKind, float] = {}
        for k, w in profile.kinds:
            weights[k] = weights.get(k, 0.0) + w
        kinds = _quota(weights, count, rng)
    else:
        kinds = [_from_marginals(m, rng) for _ in range(count)]
    profs = _quota(m["professions"], count, rng)
    langs = _quota(m["languages"], count, rng)
    out = []
    for i, (k, p, lang) in enumerate(zip(kinds, profs, langs)):
        codes, w = zip(*_LOCALES[lang])
        out.append({"kind": k.to_json(), "profession": p, "locale": rng.choices(codes, weights=w)[0],
                    "seed": seed * 100_003 + i})
    return out


def mix_marginals(specs: Sequence[EnvironmentSpec]) -> dict[str, Any]:
    """The marginals of a set of environments, as a profile holds them (professions over those that name one:
    templates' worlds name none)."""
    return marginals_of([kind_of(s) for s in specs], [str(s.metadata["profession"]) for s in specs
                                                      if s.metadata.get("profession")],
                        [str(s.metadata.get("language", "en")) for s in specs])


def compare(specs: Sequence[EnvironmentSpec], profile: Profile) -> list[dict[str, Any]]:
    """Rows {marginal, value, mix, profile}: every value either side holds, the mix's share beside the profile's."""
    mine = mix_marginals(specs)
    rows = []
    for key in ("services", "evidence", "days", "turns", "professions", "languages", "safety", "changes"):
        a, b = mine.get(key, {}), profile.marginals.get(key, {})
        if not isinstance(a, dict):
            rows.append({"marginal": key, "value": "yes", "mix": a, "profile": b})
            continue
        for v in sorted(set(a) | set(b), key=str):
            if a.get(v, 0) or b.get(v, 0):
                rows.append({"marginal": key, "value": v, "mix": a.get(v, 0.0), "profile": b.get(v, 0.0)})
    return rows


def compare_text(rows: list[dict[str, Any]], name: str) -> str:
    """`compare`'s rows as a plain table: marginal, value, the mix's share, the profile's, the difference."""
    out = [f"marginals: this mix vs profile {name}", f"{'marginal':<12} {'value':<13} {'mix':>7} {'profile':>8} "
           f"{'diff':>7}"]
    for r in rows:
        out.append(f"{r['marginal']:<12} {str(r['value']):<13} {r['mix']:>7.1%} {r['profile']:>8.1%} "
                   f"{r['mix'] - r['profile']:>+7.1%}")
    return "\n".join(out)
