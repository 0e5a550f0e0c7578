"""The house rules, checked by reading the source: no import circle at any level (imports inside functions and
under TYPE_CHECKING count, as a reader follows them too), no source file over 700 lines, no function over 120,
and every service folder of the one shape (`service_folder_problems`).

Run `python tests/house_scan.py` to print every offender; tests/test_house.py asserts there are none.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("workspace_sim", "mcp_server", "synth", "trainers", "coworkenv", "benchmarks")
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 120
SERVICES = ROOT / "workspace_sim" / "services"
SERVICE_FILES = ("__init__.py", "records.py", "tools.py")  # every service folder has these
SERVICE_HELPERS = ("views.py", "syntax.py")  # helper kinds a folder may add without a word; any other file is
# named in the folder's __init__ docstring, which says what it holds


@dataclass(frozen=True)
class Module:
    """One source module: its dotted name, its file, and whether it is a package's __init__."""

    name: str
    path: Path
    is_package: bool


def modules(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, Module]:
    """Every module of our packages by dotted name (a package by its own name, for its __init__.py)."""
    found: dict[str, Module] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


def _absolute(module: Module, level: int, target: str | None) -> str:
    """The dotted name a relative import in `module` refers to."""
    if level == 0:
        return target or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([target] if target else []))


def imports_of(module: Module, known: dict[str, Module]) -> set[str]:
    """The modules of ours that `module` imports anywhere in its text (functions, TYPE_CHECKING included)."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
    out: set[str] = set()

    def add(name: str) -> None:
        # the deepest module of ours that the dotted name names
        parts = name.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts:
            out.add(".".join(parts))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.level, node.module)
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                if full in known:
                    out.add(full)
                else:
                    add(base)
    out.discard(module.name)
    return out


def import_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports."""
    known = modules(root, packages)
    return {name: imports_of(mod, known) for name, mod in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def circles(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[tuple[str, list[str]]]:
    """Every import circle, at the level of modules and at the level of each package's children.

    At a package P's level each module below P counts as the child of P that holds it (P's own __init__ is a
    child of its own, "P.__init__"), so a circle between two subpackages shows even when no two modules import
    each other. Returns (level, the circle's members)."""
    graph = import_graph(root, packages)
    found: list[tuple[str, list[str]]] = [("modules", c) for c in _cycles(graph)]
    inits = {name for name, mod in modules(root, packages).items() if mod.is_package}
    for package in sorted(inits | {""}):
        prefix = f"{package}." if package else ""

        def child(name: str) -> str | None:
            if name == package:
                return f"{package}.__init__" if package else None
            if not name.startswith(prefix):
                return None
            return prefix + name[len(prefix):].split(".")[0]

        level: dict[str, set[str]] = defaultdict(set)
        for src, targets in graph.items():
            a = child(src)
            if a is None:
                continue
            for dst in targets:
                b = child(dst)
                if b is not None and b != a:
                    level[a].add(b)
        found.extend((package or "<top>", c) for c in _cycles(dict(level)))
    # a circle of plain modules shows at the module level already; keep each once
    seen: set[tuple[str, ...]] = set()
    unique = []
    for lvl, c in found:
        if tuple(c) in seen:
            continue
        seen.add(tuple(c))
        unique.append((lvl, c))
    return unique


def source_files(root: Path = ROOT) -> list[Path]:
    """Every Python file of the project (packages, tests, examples), none of the virtual environment."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if rel[0].startswith(".") or "node_modules" in rel or rel[0] in ("build", "dist"):
            continue
        out.append(path)
    return out


def long_files(root: Path = ROOT) -> list[tuple[str, int]]:
    """Files over MAX_FILE_LINES lines."""
    out = []
    for path in source_files(root):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_FILE_LINES:
            out.append((str(path.relative_to(root)), n))
    return out


def long_functions(root: Path = ROOT) -> list[tuple[str, str, int]]:
    """Functions (and methods) over MAX_FUNCTION_LINES lines, decorators and docstring included."""
    out = []
    for path in source_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                n = (node.end_lineno or node.lineno) - start + 1
                if n > MAX_FUNCTION_LINES:
                    out.append((f"{path.relative_to(root)}:{node.lineno}", node.name, n))
    return out


def _assigned(node: ast.stmt) -> set[str]:
    """The names a module-level assignment binds (none for any other statement)."""
    if not isinstance(node, ast.Assign | ast.AnnAssign):
        return set()
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _declares_service(node: ast.stmt) -> bool:
    """Whether a module-level statement declares the service or a table handle: an assignment to SERVICE, or one
    whose value makes a `Service(...)` or takes `SERVICE.table(...)`."""
    value = getattr(node, "value", None) if _assigned(node) else None
    calls = {ast.unparse(n.func) for n in ast.walk(value) if isinstance(n, ast.Call)} if value is not None else set()
    return "SERVICE" in _assigned(node) or bool(calls & {"Service", "SERVICE.table", "SERVICE.handles"})


def _marks_tools(tree: ast.Module) -> bool:
    """Whether a module marks a function as a tool (`@tool(...)` or `@tool`): it is a tool module."""
    return any(ast.unparse(d.func if isinstance(d, ast.Call) else d) == "tool"
               for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for d in n.decorator_list)


def _folder_imports(tree: ast.Module, package: str) -> set[str]:
    """The modules of its own folder a module imports anywhere (`from .x import`, `from . import x`, or the folder's
    absolute name), by file name."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            out |= {n.module.split(".")[0]} if n.module else {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith(package + "."):
            out.add(n.module[len(package) + 1:].split(".")[0])  # type: ignore[index]
        elif isinstance(n, ast.ImportFrom) and n.module == package:
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.Import):
            out |= {a.name[len(package) + 1:].split(".")[0] for a in n.names if a.name.startswith(package + ".")}
    return {f"{m}.py" for m in out}


def service_folder_problems(folder: Path) -> list[str]:
    """What keeps a service folder from the one shape, as sentences (none when it is of it): it has `__init__.py`,
    `records.py` and `tools.py`; `records.py` declares `SERVICE` (with its table handles and start-data check) and no
    other module declares the service or a handle; `records.py` imports no tool module of its folder; and every
    other file is a helper kind (SERVICE_HELPERS) or is named in the folder's `__init__` docstring."""
    name = folder.name
    problems = [f"{name}: the folder has no {f}" for f in SERVICE_FILES if not (folder / f).is_file()]
    if problems:
        return problems
    trees = {p.name: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in sorted(folder.glob("*.py"))}
    for file, tree in trees.items():
        declared = [ast.unparse(n).splitlines()[0] for n in tree.body if _declares_service(n)]
        if file == "records.py" and not any("SERVICE" in _assigned(n) for n in tree.body):
            problems.append(f"{name}: records.py does not declare SERVICE (`SERVICE = Service(...)`)")
        elif file != "records.py" and declared:
            problems.append(f"{name}: {file} declares `{declared[0]}`; SERVICE, its table handles and its "
                            "start-data check belong in records.py")
    tool_modules = {f for f, tree in trees.items() if _marks_tools(tree)}
    package = f"workspace_sim.services.{name}"
    problems += [f"{name}: records.py imports the tool module {f}" for f in
                 sorted(_folder_imports(trees["records.py"], package) & (tool_modules | {"tools.py"}))]
    doc = ast.get_docstring(trees["__init__.py"]) or ""
    problems += [f"{name}: {f} is not one of {', '.join(SERVICE_FILES + SERVICE_HELPERS)}, and the folder's __init__ "
                 f"docstring does not say what it holds" for f in trees
                 if f not in SERVICE_FILES + SERVICE_HELPERS and not re.search(rf"(?<![\w.]){re.escape(f)}", doc)]
    return problems


def service_folders(services: Path = SERVICES) -> list[Path]:
    """The service folders of the services package (every sub-folder but __pycache__)."""
    return sorted(p for p in services.iterdir() if p.is_dir() and not p.name.startswith("__"))


def main() -> int:
    """Print every offender; exit 1 if there is one."""
    bad = 0
    for level, members in circles():
        bad += 1
        print(f"circle at {level}: {' <-> '.join(members)}")
    for path, n in long_files():
        bad += 1
        print(f"file over {MAX_FILE_LINES} lines: {path} ({n})")
    for where, name, n in long_functions():
        bad += 1
        print(f"function over {MAX_FUNCTION_LINES} lines: {where} {name} ({n})")
    for folder in service_folders():
        for problem in service_folder_problems(folder):
            bad += 1
            print(f"service folder not of the one shape: {problem}")
    print(f"{bad} offenders")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
