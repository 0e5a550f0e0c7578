"""The JSON Schema of the spec document, as `coworkenv schema` prints it: typed, or with `initial` and the
predicates left open.

The typed schema (the default) spells out what the model checks after reading: `initial` is an
object of services, each an object of its tables, each a list of that table's records with the
record class's own schema (its docstring and field descriptions), and every predicate
is one of the predicate kinds of workspace_sim.predicates, a union discriminated on `kind`. The
untyped variant (`typed=False`) keeps those two as plain objects; the LLM generator sends it, since
the typed one is many times longer than a prompt should carry (its prompt lists the tables and the
predicate schema on their own).
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from workspace_sim.core.registry import Service
from workspace_sim.predicates.combinators import Predicate
from workspace_sim.services import all_services

from .model import SPEC_VERSION, EnvironmentSpec


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_"))


def _major_units(schema: dict[str, Any]) -> None:
    """Money fields: a record stores `X_minor` (integer minor units) and its initial data may give `X` in major
    units instead (125000.5 or "125000.50"), converted once on load (the services' shared convention)."""
    props = schema.get("properties", {})
    for name in [n for n in props if n.endswith("_minor")]:
        major = name.removesuffix("_minor")
        props.setdefault(major, {"anyOf": [{"type": "number"}, {"type": "string"}], "description": (
            f"{major} in major units of the record's currency, instead of {name}; converted once on load.")})
        if name in schema.get("required", []):
            schema["required"].remove(name)
            schema.setdefault("anyOf", []).append({"required": [name]})
            schema["anyOf"].append({"required": [major]})


def _record_model(service: Service, model: type[BaseModel]) -> type[BaseModel]:
    """The record class, for its schema only: under a name unique across services (mail's and crm's `Account`
    both exist), so the schema's definitions read `MailAccount` and `CrmAccount` rather than module paths, and
    with the major-unit form of its money fields."""
    name = model.__name__ if model.__name__.startswith(_camel(service.name)) else _camel(service.name) + model.__name__
    config = {**model.model_config, "json_schema_extra": _major_units}
    return type(name, (model,), {"__doc__": model.__doc__, "__module__": model.__module__, "model_config": config})


def _tables_model(service: Service) -> type[BaseModel]:
    """A model of one service's start records: one optional list of records per table."""
    fields: dict[str, Any] = {
        table: (list[_record_model(service, model)], Field(  # type: ignore[misc]
            default_factory=list, description=f"Start records of the table {service.table_name(table)}."))
        for table, model in service.tables.items()
    }
    return create_model(f"{_camel(service.name)}Tables", __config__=ConfigDict(extra="forbid"),
                        __doc__=f"The start records of the {service.name} service, by table.", **fields)


@lru_cache(maxsize=1)
def _typed_spec() -> type[BaseModel]:
    """EnvironmentSpec with `initial` and `predicates` typed (for its JSON Schema only)."""
    services = all_services()
    initial = create_model(
        "InitialRecords", __config__=ConfigDict(extra="forbid"),
        __doc__="Start records: {service: {table: [record, ...]}}; a service must be listed in `services`.",
        **{name: (model, Field(default_factory=model, description=f"Start records of the {name} service."))
           for name, model in ((n, _tables_model(services[n])) for n in sorted(services))})
    return create_model(
        "EnvironmentSpec", __base__=EnvironmentSpec, __doc__=EnvironmentSpec.__doc__,
        initial=(initial, Field(default_factory=initial, description=EnvironmentSpec.model_fields["initial"].description)),
        predicates=(list[Predicate], Field(min_length=1, description=(
            "The checks of the episode: each a workspace_sim predicate, its `kind` saying which."))),
    )


def spec_json_schema(typed: bool = True) -> dict[str, Any]:
    """The JSON Schema of the spec document (what `coworkenv schema` prints); `typed=False` leaves `initial` and
    the predicates open objects (the form the LLM generator's prompt carries)."""
    return copy.deepcopy(_schema(typed))  # a copy the caller may change


@lru_cache(maxsize=2)
def _schema(typed: bool) -> dict[str, Any]:
    model = _typed_spec() if typed else EnvironmentSpec
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://coworkenv.dev/schema/environment-spec-v{SPEC_VERSION}.json"
    return schema
