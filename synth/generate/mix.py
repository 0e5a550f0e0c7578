"""The balanced mix's draw between kind-directed compositions, compositions and templates.

For a capability a benchmark's kinds of work fit (`KIND_FITS`), a seeded coin gives, `KIND_SHARE` of the time, a
kind-directed composition (`kinded.compose_kind`) of a task kind drawn from the Claw-Eval-like or the
ClawMark-like profile (one or the other by a coin, then a kind of it that fits the capability, by weight), so the
balanced mix also holds the kinds of work the benchmarks hold (issue 32); if none fits or the drawn environment
misses what the capability demands, the draw falls through. Otherwise, for a capability compositions serve, a
seeded coin gives a composition `COMPOSED_SHARE` of the time and one of the capability's templates otherwise (so
every template keeps its coverage); other capabilities come from their templates. Same capability and seed, same
environment.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Callable

from ..procedural import TemplateError, generate
from ..spec import EnvironmentSpec
from .compose import SERVED, compose
from .kinded import SUPPORTED, compose_kind
from .profiles.kinds import TaskKind, kind_of
from .profiles.profile import load_profile

COMPOSED_SHARE = 0.85
KIND_SHARE = 0.08
KIND_SHARES = {"dynamic_world": 0.4, "long_horizon": 0.4, "cross_service": 0.3}
"""The kind-directed share by capability where it differs from KIND_SHARE (the multi-day, many-service kinds of
ClawMark have few capabilities to come through)."""
KIND_PROFILES = ("claw-eval", "clawmark")
_WRITES = SUPPORTED - {"contacts", "web"}


def _plain(k: TaskKind) -> bool:
    return k.days == 1 and k.turns == "single" and not k.safety


KIND_FITS: dict[str, Callable[[TaskKind], bool]] = {
    "information_retrieval": lambda k: _plain(k) and not k.services & _WRITES,
    "document_from_data": lambda k: _plain(k) and bool(k.services & _WRITES),
    "media_evidence": lambda k: _plain(k) and bool(k.evidence),
    "web_research": lambda k: _plain(k) and "web" in k.services,
    "clarification": lambda k: k.turns == "clarify" and not k.safety,
    "dynamic_world": lambda k: k.days >= 2 and not k.safety and bool(k.services & _WRITES),
    "long_horizon": lambda k: k.days >= 3 and not k.safety and len(k.services & _WRITES) >= 2,
    "cross_service": lambda k: k.days >= 2 and not k.safety and len(k.services & _WRITES) >= 2,
    "policy_compliance": lambda k: k.safety,
}
"""Which benchmark kinds a capability's kind-directed draw may take."""


@lru_cache(maxsize=None)
def _pool(name: str, cap: str) -> tuple[tuple[TaskKind, float], ...]:
    return tuple((k, w) for k, w in load_profile(name).kinds if KIND_FITS[cap](k))


def _demands_met(cap: str, spec: EnvironmentSpec) -> bool:
    calls = sum(1 for s in spec.reference.calls() if not s.expect_error)
    if cap == "dynamic_world":
        return len(spec.stages) >= 2 and any(e.announce is None for e in spec.events)
    if cap == "long_horizon":
        return len(spec.stages) >= 3 and calls >= 15
    if cap == "cross_service":  # the reference changes two services or more (sheets and reports are both files)
        fams = kind_of(spec).services & _WRITES
        return len({"files" if f == "sheets" else f for f in fams}) >= 2
    return True


def kind_for(capability: str, seed: int) -> TaskKind | None:
    """The benchmark kind the mix draws for (capability, seed), or None when it draws no kind-directed one."""
    rng = random.Random(f"mix-kind:{capability}:{seed}")
    if capability not in KIND_FITS or rng.random() >= KIND_SHARES.get(capability, KIND_SHARE):
        return None
    names = [n for n in KIND_PROFILES if _pool(n, capability)]
    if not names:
        return None
    pool = _pool(rng.choice(names), capability)
    kinds, weights = zip(*pool)
    return rng.choices(kinds, weights=weights)[0]


def composes(capability: str, seed: int) -> bool:
    """Whether the mix draws a composition for (capability, seed) (when it draws no kind-directed one)."""
    return capability in SERVED and random.Random(f"mix:{capability}:{seed}").random() < COMPOSED_SHARE


def generate_mixed(capability: str, seed: int) -> EnvironmentSpec:
    """The balanced mix's environment for (capability, seed): kind-directed, a composition or a template's."""
    kind = kind_for(capability, seed)
    if kind is not None:
        try:
            spec = compose_kind(kind, seed, capability=capability)
            if _demands_met(capability, spec):
                return spec
        except TemplateError:
            pass
    return compose(capability, seed) if composes(capability, seed) else generate(capability, seed)
