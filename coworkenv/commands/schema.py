"""`coworkenv schema`: the JSON Schema of the environment spec format."""

from __future__ import annotations

import json

import typer


def schema() -> None:
    """Print the JSON Schema of the environment spec format (docs/spec.md explains it)."""
    from synth.spec import spec_json_schema

    typer.echo(json.dumps(spec_json_schema(), indent=2))
