"""The contract every service meets, checked per service: one folder of one shape (records.py declaring SERVICE, its
table handles and its start-data check; tools.py; other files a helper kind or named in the folder's docstring), a
description on every record field (nested models included), a docstring and typed, documented arguments on
every tool, and a checked handle for every declared table."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import typing
from pathlib import Path

import house_scan
import pytest
from pydantic import BaseModel

from workspace_sim.core.registry import Service, Table
from workspace_sim.services import all_services

SERVICES = all_services()
# Services another change is converting to the one shape; each leaves this set when it is converted (the strict
# xfail then fails, as a reminder to take it out).
PENDING: set[str] = set()


def _package(service: Service) -> str:
    """The package a service's tools were defined in (`workspace_sim.services.<folder>`)."""
    modules = {inspect.getmodule(t.fn).__name__ for t in service.tools.values()}  # type: ignore[union-attr]
    packages = {m.rsplit(".", 1)[0] for m in modules}
    assert len(packages) == 1, f"service {service.name}: tools defined in several packages {sorted(modules)}"
    return packages.pop()


def _models(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models an annotation names, at any depth (list[Collaborator], X | None, ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _record_models(service: Service) -> list[type[BaseModel]]:
    """Every record class of the service's tables, every model its records.py defines, and every model nested in
    their fields."""
    seen: dict[type[BaseModel], None] = {}
    todo: list[type[BaseModel]] = list(service.tables.values())
    try:
        records = importlib.import_module(_package(service) + ".records")
    except ModuleNotFoundError:
        records = None
    todo += [m for m in vars(records).values() if isinstance(m, type) and issubclass(m, BaseModel)
             and m.__module__ == records.__name__] if records else []
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen[model] = None
        for info in model.model_fields.values():
            todo.extend(_models(info.annotation))
    return list(seen)


@pytest.fixture(params=sorted(SERVICES), ids=str)
def service(request: pytest.FixtureRequest) -> Service:
    return SERVICES[request.param]


def _judge(service: Service, problems: list[str]) -> None:
    """Fail on the problems found; a PENDING service is expected to have some (xfail), and fails once it has none."""
    if service.name in PENDING:
        if not problems:
            pytest.fail(f"service {service.name} is now in the one shape: take it out of PENDING")
        pytest.xfail(f"service {service.name} is not yet in the one shape: {problems[0]}")
    assert not problems, problems


def test_a_service_is_one_folder_of_the_one_shape(service: Service) -> None:
    package = _package(service)
    folder = Path(importlib.import_module(package).__file__).parent  # type: ignore[arg-type]
    problems = [f"{service.name}: {folder} has no {name}" for name in ("__init__.py", "records.py", "tools.py")
                if not (folder / name).is_file()]
    if not package.startswith("workspace_sim.services."):
        problems.append(f"{service.name}: its tools are in {package}, not a folder of workspace_sim.services")
    if getattr(importlib.import_module(package), "SERVICE", None) is not service:
        problems.append(f"{service.name}: {package} does not export SERVICE")
    problems += [f"{service.name}: the record of table {table} ({model.__qualname__}) is defined in "
                 f"{model.__module__}, not its folder's records.py"
                 for table, model in service.tables.items() if model.__module__ != package + ".records"]
    problems += house_scan.service_folder_problems(folder)
    records = importlib.import_module(package + ".records")
    if getattr(records, "SERVICE", None) is not service:
        problems.append(f"{service.name}: {package}.records does not define the SERVICE the package exports")
    _judge(service, problems)


def test_tools_are_marked_and_registered_in_one_place(service: Service) -> None:
    """Every tool is marked `@tool(...)` in its module and registered by the folder's __init__ with
    `SERVICE.add_tools(...)`, so importing a tool module registers nothing and the tool list's order is read in
    one place."""
    package = _package(service)
    folder = Path(importlib.import_module(package).__file__).parent  # type: ignore[arg-type]
    problems = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    if isinstance(target, ast.Attribute) and target.attr == "tool":
                        problems.append(f"{service.name}: {path.name} registers {node.name} on import "
                                        f"(@{ast.unparse(target)}); mark it @tool(...) and list it in add_tools")
    init = ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))
    listed = [ast.unparse(a).rsplit(".", 1)[-1] for n in ast.walk(init) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Attribute) and n.func.attr == "add_tools" for a in n.args]
    if listed != list(service.tools):
        problems.append(f"{service.name}: __init__'s add_tools lists {listed}, the service has {list(service.tools)}")
    _judge(service, problems)


def test_every_record_field_has_a_description(service: Service) -> None:
    missing = [f"{service.name}: {m.__qualname__}.{name} has no description" for m in _record_models(service)
               for name, info in m.model_fields.items() if not (info.description or "").strip()]
    _judge(service, missing)


def test_every_tool_has_a_docstring_and_typed_documented_arguments(service: Service) -> None:
    for name, tool in service.tools.items():
        assert tool.description.strip(), f"{name} has no docstring"
        hints = typing.get_type_hints(tool.fn)
        params = list(inspect.signature(tool.fn).parameters)[1:]
        assert all(p in hints for p in params), f"{name}: untyped arguments"
        schema = tool.input_schema.get("properties", {})
        assert set(schema) == set(params), name
        assert all(schema[p].get("description") for p in params), f"{name}: undocumented arguments"


def test_every_declared_table_has_a_checked_handle(service: Service) -> None:
    for short, model in service.tables.items():
        handle = service.table(short)
        assert isinstance(handle, Table) and handle.name == f"{service.name}.{short}"
        assert handle.model is model and handle.service == service.name
    with pytest.raises(LookupError, match=f"service {service.name} declares no table 'no_such_table'"):
        service.table("no_such_table")


# Where a table is named as text outside its service: modules below the services (text, core) and modules that must
# not import a service (rules.policies is loaded with every workspace, which imports only its own services).
_QUALIFIED = re.compile(r"""["']([a-z_]+)\.([a-z_]+)["']""")


def test_table_names_written_as_text_name_declared_tables() -> None:
    root = Path(importlib.import_module("workspace_sim").__file__).parent  # type: ignore[arg-type]
    declared = {f"{s.name}.{t}" for s in SERVICES.values() for t in s.tables}
    unknown = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _QUALIFIED.finditer(line):
                if m.group(1) in SERVICES and m.group(0)[1:-1] not in declared:
                    unknown.append(f"{path.relative_to(root)}:{number}: {m.group(0)}")
    assert not unknown, f"table names that no service declares: {unknown}"
