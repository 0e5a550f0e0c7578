"""Finding environment specs for a batch: spec files and folders of them, loaded with clear errors."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from synth.errors import SpecLoadError
from synth.spec import EnvironmentSpec, load_spec

SPEC_SUFFIXES = (".json", ".yaml", ".yml")


class SourceError(ValueError):
    """Environments that cannot be found or loaded; the message names the path and the problem."""


def spec_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Every spec file named, or found (sorted) under a named folder; missing paths raise SourceError."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SPEC_SUFFIXES)
            if not found:
                raise SourceError(f"{p}: no spec files (*.json, *.yaml, *.yml) in this folder")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise SourceError(f"{p}: no such spec file or folder")
    if not out:
        raise SourceError("no environments given")
    return out


def load_specs(paths: Iterable[str | Path]) -> list[EnvironmentSpec]:
    """Load every spec; the first that fails raises SourceError with its file, field path and problem.

    Two files with the same environment id are refused, since records and reports key on it.
    """
    specs: list[EnvironmentSpec] = []
    seen: dict[str, Path] = {}
    for p in spec_paths(paths):
        try:
            spec = load_spec(p)
        except SpecLoadError as e:
            raise SourceError(str(e)) from None
        if spec.id in seen:
            raise SourceError(f"{p}: environment id {spec.id!r} is also the id of {seen[spec.id]}")
        seen[spec.id] = p
        specs.append(spec)
    return specs
