"""The JSON Schema of the spec document, as `coworkenv schema` prints it."""

from __future__ import annotations

from typing import Any

from .model import SPEC_VERSION, EnvironmentSpec


def spec_json_schema() -> dict[str, Any]:
    """The JSON Schema of the spec document (what `coworkenv schema` prints)."""
    schema = EnvironmentSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://coworkenv.dev/schema/environment-spec-v{SPEC_VERSION}.json"
    return schema
