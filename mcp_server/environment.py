"""What the MCP server serves: an environment contract, a Python implementation, and where one comes from.

`ServedEnvironment` is the contract `synth.EnvironmentSpec` meets; `PythonEnvironment` meets it for
workspaces built in Python. `EnvironmentSource` names where an environment is loaded from (a spec
file or a `module:function` factory) so that an episode record can rebuild its environment later.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol, runtime_checkable

from workspace_sim import Workspace

if TYPE_CHECKING:
    from workspace_sim.predicates import Evaluation


@runtime_checkable
class ServedEnvironment(Protocol):
    """An environment the server can serve: a task for the user to see, a fresh workspace, and a judge."""

    id: str
    title: str

    def task_text(self) -> str:
        """The request as the user sees it (never the predicates, solution or hidden facts)."""
        ...

    def build_workspace(self) -> Workspace:
        """A fresh workspace at the environment's start state."""
        ...

    def evaluate(self, workspace: Workspace, final_answer: str | None) -> "Evaluation":
        """Judge a workspace (its initial against its current state, its event log) and a final answer."""
        ...


@dataclass
class PythonEnvironment:
    """A `ServedEnvironment` built in Python: a task text, a workspace factory and predicate documents.

    `solution` and `hidden_facts` are never served; they exist so tests (and authors) can check
    that nothing the agent sees reveals them.
    """

    id: str
    title: str
    task: str
    workspace_factory: Callable[[], Workspace]
    predicates: list[dict[str, Any]] = field(default_factory=list)
    solution: list[dict[str, Any]] = field(default_factory=list)
    hidden_facts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from workspace_sim.predicates import parse_predicates

        self._parsed = parse_predicates(self.predicates)

    def task_text(self) -> str:
        """The request as the user sees it."""
        return self.task

    def build_workspace(self) -> Workspace:
        """A fresh workspace from the factory."""
        ws = self.workspace_factory()
        if not isinstance(ws, Workspace):
            raise TypeError(f"environment {self.id}: workspace_factory returned {type(ws).__name__}, not a Workspace")
        return ws

    def evaluate(self, workspace: Workspace, final_answer: str | None) -> "Evaluation":
        """Judge the workspace with the environment's predicates, guards credited only once a success predicate
        passes (as a spec's are: a do-nothing episode scores exactly zero; `workspace_sim.predicates.guards`)."""
        from workspace_sim.predicates import credit_guards, evaluate, is_guard

        return credit_guards(evaluate(self._parsed, workspace, final_answer), [is_guard(p) for p in self.predicates])

    def content_hash(self) -> str:
        """A short hash of the task, predicates and start state (detects edited environments)."""
        doc = {"id": self.id, "task": self.task, "predicates": self.predicates,
               "state": self.build_workspace().content_hash}
        return hashlib.blake2b(json.dumps(doc, sort_keys=True).encode(), digest_size=8).hexdigest()


class EnvironmentLoadError(ValueError):
    """An environment that cannot be loaded; the message says which and why."""

_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass(frozen=True)
class EnvironmentSource:
    """Where an environment comes from: a spec file (`kind='spec'`) or a Python factory (`kind='python'`)."""

    kind: Literal["spec", "python"]
    ref: str

    @classmethod
    def spec(cls, path: str | Path) -> "EnvironmentSource":
        """A spec file, remembered by its absolute path."""
        return cls("spec", str(Path(path).expanduser().resolve()))

    @classmethod
    def python(cls, ref: str) -> "EnvironmentSource":
        """A `module:function` reference to a factory returning a ServedEnvironment."""
        if not isinstance(ref, str) or not _REF.match(ref):
            raise EnvironmentLoadError(f"--python needs MODULE:FUNCTION (e.g. mcp_server.demo:environment), got {ref!r}")
        return cls("python", ref)

    @classmethod
    def from_json(cls, doc: Any) -> "EnvironmentSource":
        """The source recorded by `to_json`; malformed documents raise EnvironmentLoadError."""
        if not isinstance(doc, dict) or doc.get("kind") not in ("spec", "python") or not isinstance(doc.get("ref"), str):
            raise EnvironmentLoadError(f"environment source must be {{'kind': 'spec'|'python', 'ref': str}}, got {doc!r}")
        return cls.python(doc["ref"]) if doc["kind"] == "python" else cls("spec", doc["ref"])

    def to_json(self) -> dict[str, str]:
        """A JSON-ready description (written into episode records)."""
        return {"kind": self.kind, "ref": self.ref}

    def load(self) -> ServedEnvironment:
        """Load the environment; any failure raises EnvironmentLoadError naming the source."""
        env = _load_spec(self.ref) if self.kind == "spec" else _load_python(self.ref)
        missing = [m for m in ("id", "title", "task_text", "build_workspace", "evaluate") if not hasattr(env, m)]
        if missing:
            raise EnvironmentLoadError(f"{self.ref}: {type(env).__name__} is not a ServedEnvironment (lacks {', '.join(missing)})")
        return env


def _load_python(ref: str) -> ServedEnvironment:
    module_name, func_name = ref.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise EnvironmentLoadError(f"{ref}: cannot import module {module_name!r} ({e})") from None
    factory = getattr(module, func_name, None)
    if not callable(factory):
        raise EnvironmentLoadError(f"{ref}: module {module_name!r} has no function {func_name!r}")
    try:
        return factory()
    except Exception as e:
        raise EnvironmentLoadError(f"{ref}: the factory failed: {type(e).__name__}: {e}") from None


LOADER_GROUP = "coworkenv.spec_loaders"


@lru_cache(maxsize=None)
def spec_loader(name: str) -> Callable[..., Any] | None:
    """The installed spec loader `name` ('file': path -> env, 'document': JSON -> env), or None.

    The MCP server knows nothing of the spec format; the package that owns it (synth) registers
    its loaders under the entry point group `coworkenv.spec_loaders`.
    """
    from importlib.metadata import entry_points  # 15-20 ms: a `--python` environment never needs it

    for ep in entry_points(group=LOADER_GROUP, name=name):
        return ep.load()
    return None


def _load_spec(path: str) -> ServedEnvironment:
    p = Path(path)
    if not p.is_file():
        raise EnvironmentLoadError(f"{path}: no such spec file")
    load_spec = spec_loader("file")
    if load_spec is None:
        raise EnvironmentLoadError(
            f"{path}: no spec loader is installed (entry point group {LOADER_GROUP!r}, name 'file'); "
            "serve a Python factory with --python MODULE:FUNCTION instead"
        )
    try:
        return load_spec(p)
    except Exception as e:  # the spec loader names the JSON path of the problem
        raise EnvironmentLoadError(f"{path}: {e}") from None


def environment_from_document(doc: Any) -> ServedEnvironment:
    """An environment spec given inline as a JSON object (e.g. sent by a remote runner); EnvironmentLoadError if malformed."""
    parse_spec = spec_loader("document")
    if parse_spec is None:
        raise EnvironmentLoadError(f"spec documents need a loader (entry point group {LOADER_GROUP!r}, name 'document')")
    try:
        return parse_spec(doc, "spec_document")
    except Exception as e:  # the spec parser names the JSON path of the problem
        raise EnvironmentLoadError(f"spec_document: {e}") from None


def environment_hash(env: ServedEnvironment) -> str:
    """The environment's content hash when it offers one, else ''."""
    fn = getattr(env, "content_hash", None)
    if callable(fn):
        try:
            return str(fn())
        except Exception:
            return ""
    return str(fn) if isinstance(fn, str) else ""
