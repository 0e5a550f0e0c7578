"""The compositional procedural generator, its worlds and its wording.

`compose(capability, seed)` draws a small graph of typed steps (`steps`) over a profession world
and a locale (`worlds`), runs it through the templates' SpecBuilder and words it last (`wording`);
`mix.generate_mixed` is the balanced mix's draw between compositions and templates. Evidence
documents come from `evidence_docs.document(kind, facts, locale, rng)`.
"""

from .compose import SERVED, compose
from .mix import COMPOSED_SHARE, composes, generate_mixed

__all__ = ["COMPOSED_SHARE", "SERVED", "compose", "composes", "generate_mixed"]
