"""The procedural generator: deterministic, offline environments for every capability.

`generate(capability, seed)` picks one of the capability's templates by seed (in proportion to their
weights), draws a world with
Faker seeded per environment, lets the template write the task into a SpecBuilder (running the
reference live), and returns the EnvironmentSpec. Same capability and seed, same bytes.
"""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from ..capabilities import CAPABILITIES
from ..spec import EnvironmentSpec
from .builder import SpecBuilder, TemplateError
from .templates import Template, registry
from .world import WorldMaker

MAX_ATTEMPTS = 8

__all__ = ["SpecBuilder", "Template", "TemplateError", "generate", "templates_for"]


def templates_for(capability: str) -> list[Template]:
    """The templates registered for a capability (ValueError for an unknown id)."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}; known: {', '.join(CAPABILITIES)}")
    found = list(registry().get(capability, {}).values())
    if not found:
        raise ValueError(f"no procedural templates for capability {capability!r}")
    return found


def _start_time(rng: random.Random, tz: str) -> datetime:
    """A Monday to Thursday morning in 2026, in the user's time zone."""
    day = datetime(2026, 1, 5) + timedelta(weeks=rng.randint(0, 40), days=rng.randint(0, 3))
    return datetime.combine(day.date(), time(rng.choice((8, 9)), rng.choice((0, 15, 30))), tzinfo=ZoneInfo(tz))


def generate(capability: str, seed: int, template: str | None = None) -> EnvironmentSpec:
    """A new environment for `capability`, determined entirely by (capability, seed, template)."""
    options = templates_for(capability)
    pick = random.Random(f"pick:{capability}:{seed}")
    if template is None:
        if all(t.weight == 1 for t in options):  # the original uniform draw (keeps unweighted capabilities' bytes)
            chosen = options[pick.randrange(len(options))]
        else:
            chosen = pick.choices(options, weights=[t.weight for t in options])[0]
    else:
        match = [t for t in options if t.name == template]
        if not match:
            raise ValueError(f"no template {template!r} for {capability}; have {', '.join(t.name for t in options)}")
        chosen = match[0]
    problems = []
    for attempt in range(MAX_ATTEMPTS):  # a draw that does not fit the template is redrawn, deterministically
        maker = WorldMaker(seed, f"{capability}/{chosen.name}/{attempt}")
        world = maker.world(colleagues=maker.rng.randint(5, 8), externals=2, lookalikes=2)
        b = SpecBuilder(maker, world, _start_time(maker.rng, world.user.timezone), seed)
        try:
            chosen.fn(b, 1)()
            break
        except TemplateError as e:
            problems.append(str(e))
    else:
        raise TemplateError(f"{chosen.name} found no fitting draw for seed {seed}: {'; '.join(problems)}")
    b.capabilities = [capability] + [c for c in b.capabilities if c != capability]  # the requested one first
    difficulty = "hard" if capability in ("long_horizon", "dynamic_world", "cross_service") else \
        "easy" if len(b.steps) <= 4 else "medium"
    return b.build(f"{capability.replace('_', '-')}-{chosen.name.replace('_', '-')}-{seed}", difficulty)
