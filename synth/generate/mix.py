"""The balanced mix's draw between compositions and templates.

For a capability compositions serve, a seeded coin gives a composition `COMPOSED_SHARE` of the time
and one of the capability's templates otherwise (so every template keeps its coverage); other
capabilities come from their templates. Same capability and seed, same environment.
"""

from __future__ import annotations

import random

from ..procedural import generate
from ..spec import EnvironmentSpec
from .compose import SERVED, compose

COMPOSED_SHARE = 0.85


def composes(capability: str, seed: int) -> bool:
    """Whether the mix draws a composition for (capability, seed)."""
    return capability in SERVED and random.Random(f"mix:{capability}:{seed}").random() < COMPOSED_SHARE


def generate_mixed(capability: str, seed: int) -> EnvironmentSpec:
    """The balanced mix's environment for (capability, seed): a composition or a template's."""
    return compose(capability, seed) if composes(capability, seed) else generate(capability, seed)
