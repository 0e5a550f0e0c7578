"""The episode pool of an HTTP server: each environment parsed once and its start state built once.

Creating or resetting an episode used to parse an inline spec again (a pydantic model per record)
and build the start state from its records again (validation, digests, the files tree). Both are
pure functions of the environment, and a workspace's state is an immutable value: so the pool
keeps, per environment, one template workspace that is never acted in, and every episode starts
from `template.fork()` (O(1): the state is shared, live resources such as a sandbox container are
not). Inline spec documents are cached by the hash of their canonical JSON, so the same document
sent for every episode (`coworkenv run --connect`) is parsed once and keeps one template. A fork
of a fresh workspace is that fresh workspace (same state, clock, counters, initial state), so
records are byte for byte those of a workspace built anew (`tests/mcp_server/test_episode_pool.py`). An
environment's `build_workspace` must then be deterministic, as the project asks of every
environment; `COWORKENV_EPISODE_POOL=0` builds every workspace anew.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable

from workspace_sim import Workspace

from .environment import ServedEnvironment, environment_from_document

POOL_ENV = "COWORKENV_EPISODE_POOL"
MAX_ENVIRONMENTS = 16  # inline specs of a batch: keep a few (templates share their records with the episodes)


def pool_enabled() -> bool:
    """Whether episodes start from forks of a template (`COWORKENV_EPISODE_POOL`, on unless 0/false/no)."""
    return os.environ.get(POOL_ENV, "1").strip().lower() not in ("0", "false", "no")


def document_key(doc: dict[str, Any]) -> str:
    """The hash of a spec document's canonical JSON (sorted keys, compact): equal documents, equal keys."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class EpisodePool:
    """Parsed environments by document hash, and a template workspace per environment (see the module)."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = pool_enabled() if enabled is None else enabled
        self._documents: dict[str, ServedEnvironment] = {}
        self._templates: dict[int, tuple[ServedEnvironment, Workspace]] = {}
        self.parsed = 0  # documents parsed (the tests read these)
        self.built = 0  # template workspaces built

    def environment(self, doc: dict[str, Any]) -> ServedEnvironment:
        """The environment of an inline spec document, parsed on its first sight only; EnvironmentLoadError
        (from `environment_from_document`) names what is wrong in a malformed one, which is not kept."""
        if not self.enabled:
            return environment_from_document(doc)
        try:
            key = document_key(doc)
        except ValueError:  # NaN or the like: let the parser say what is wrong, and keep nothing
            return environment_from_document(doc)
        env = self._documents.get(key)
        if env is None:
            env = environment_from_document(doc)
            self.parsed += 1
            _bounded_put(self._documents, key, env)
        return env

    def fresh(self, env: ServedEnvironment) -> Workspace:
        """A workspace at the environment's start state: a fork of its template (built on first use)."""
        if not self.enabled:
            return env.build_workspace()
        known = self._templates.get(id(env))
        if known is None or known[0] is not env:
            known = (env, env.build_workspace())
            self.built += 1
            _bounded_put(self._templates, id(env), known)
        return known[1].fork()

    def factory(self, env: ServedEnvironment) -> Callable[[], Workspace]:
        """`fresh` bound to one environment (what an `Episode` builds its workspaces with)."""
        return lambda: self.fresh(env)


def _bounded_put(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if key not in cache and len(cache) >= MAX_ENVIRONMENTS:
        cache.pop(next(iter(cache)))
    cache[key] = value
