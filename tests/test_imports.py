"""The arrows of the code (issue 23; CONTRIBUTING.md, "Layout and the direction of imports"): no import
cycle among the project's modules, shared code never imports a feature, ``lessons`` never imports
``review``. Every import counts, including one inside a function; only ``if TYPE_CHECKING:`` blocks
(annotations, never run) are left out."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "lessons", "review")
AREAS = ("drafts", "hosts", "imports", "jobs", "lessons", "log", "outcomes", "piles", "written")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[_module_name(path)] = path
    return found


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imported(tree: ast.AST, name: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (a ``from x import y`` of a submodule ``x.y`` counts as
    ``x.y``, else as ``x``)."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
        stack.extend(ast.iter_child_nodes(node))
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    """Each project module -> the project modules it imports."""
    modules = _modules()
    return {
        name: _imported(ast.parse(path.read_text()), name, path.name == "__init__.py", modules)
        for name, path in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_walk_finds_a_cycle_and_a_chain_apart():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycle_among_the_projects_modules():
    assert cycles(import_graph()) == []


def test_lessons_never_imports_review():
    graph = import_graph()
    assert {
        m: sorted(x for x in graph[m] if x.startswith("review")) for m in graph if m.startswith("lessons")
    } == {m: [] for m in graph if m.startswith("lessons")}


def test_shared_code_imports_no_feature():
    """lessons/core imports nothing else of the project; review/web and review/services import no area's
    pages."""
    graph = import_graph()
    core = {
        m: sorted(x for x in graph[m] if not x.startswith("lessons.core"))
        for m in graph
        if m.startswith("lessons.core")
    }
    assert core == {m: [] for m in core}
    areas = tuple(f"review.{area}" for area in AREAS)
    shared = {
        m: sorted(x for x in graph[m] if x.startswith(areas))
        for m in graph
        if m.startswith(("review.web", "review.services"))
    }
    assert shared == {m: [] for m in shared}
