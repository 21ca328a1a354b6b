"""No import circle of more than four modules, in the core or in any plugin; no upward import made from a string.

Every import counts: at the top of a module, inside a function, under ``TYPE_CHECKING``, relative or absolute
(read with ``ast`` by tests/unit/test_layers.py's reader). The modules of each distribution's package make a
graph; each strongly connected component of it is a circle. A circle of more than ``LIMIT`` modules fails,
unless ``KNOWN_CIRCLES`` lists it with its size and the reason it still exists; a listed circle that shrank or
went fails too, so that the list only shrinks.

A lower layer may not reach a higher one through a string either: a string constant naming a module of the
core (``"tensorplug._tracing._x"``, ``"tensorplug.kernel_reference:input_order"``), as ``importlib`` or a lazy
``"module:attr"`` spec would import it, counts as an import for the layer rule.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_layers import LAYER_OF, LAYERS, _is_module, core_modules, imports_of, place

REPO = Path(__file__).resolve().parents[2]
LIMIT = 4

# Circles over LIMIT that exist, by their smallest member, with their size and why (none today); shrink, never grow.
KNOWN_CIRCLES: dict[str, tuple[int, str]] = {}


def packages() -> dict[str, Path]:
    """Each distribution's import package -> the ``src`` folder holding it (the core and every plugin)."""
    found = {"tensorplug": REPO / "core" / "src"}
    for package in sorted((REPO / "plugins").glob("*/src/*/__init__.py")):
        found[package.parent.name] = package.parent.parent
    return found


def module_graph(package: str, src: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (dotted names), every import counted."""
    modules: dict[str, tuple[Path, bool]] = {}
    for path in (src / package).rglob("*.py"):
        if "templates" in path.relative_to(src).parts:
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        found = imports_of(name, is_package, path.read_text(), root=package, is_module=modules.__contains__)
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def all_circles() -> list[list[str]]:
    return [c for package, src in packages().items() for c in circles(module_graph(package, src))]


def test_no_import_circle_is_larger_than_the_limit() -> None:
    large = {c[0]: c for c in all_circles() if len(c) > LIMIT}
    unknown = {first: c for first, c in large.items() if first not in KNOWN_CIRCLES}
    assert not unknown, (
        f"import circles of more than {LIMIT} modules (every import counts, inside functions and under "
        f"TYPE_CHECKING too): {unknown}; break them (import downward, pass what a lower module needs down "
        "through a hook its importer calls, or merge modules that cannot live apart)"
    )
    grown = {first: (len(large[first]), size) for first, (size, _) in KNOWN_CIRCLES.items() if first in large}
    assert all(now <= size for now, size in grown.values()), f"known circles grew (now, listed): {grown}"


def test_the_known_circles_are_as_listed() -> None:
    large = {c[0]: len(c) for c in all_circles() if len(c) > LIMIT}
    stale = {first: (large.get(first), size) for first, (size, _) in KNOWN_CIRCLES.items() if large.get(first) != size}
    assert not stale, f"update KNOWN_CIRCLES (now, listed): {stale}"


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]


# -- imports made from strings -----------------------------------------------------------------------------------

_MODULE_STRING = re.compile(r"^tensorplug(\.[A-Za-z_][A-Za-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_.]*)?$")


def string_imports(source: str) -> set[str]:
    """The core modules that string constants of ``source`` name as ``importlib`` or a ``"module:attr"`` spec
    would import them."""
    named: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_STRING.match(node.value):
            module = node.value.partition(":")[0]
            while module.count(".") > 1 and not _is_module(module):  # "pkg.module.attr": the module
                module = module.rpartition(".")[0]
            if _is_module(module):  # not a key such as "tensorplug.format"
                named.add(module)
    return named


def upward_string_imports(sources: dict[str, str]) -> list[tuple[str, str]]:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = []
    for name, source in sources.items():
        importer = place(name)
        assert importer is not None
        for target in sorted(string_imports(source)):
            imported = place(target)
            if imported is not None and rank[LAYER_OF[imported]] > rank[LAYER_OF[importer]]:
                upward.append((name, target))
    return upward


def test_no_lower_layer_imports_a_higher_one_by_a_string() -> None:
    sources = {}
    for path in core_modules():
        parts = list(path.relative_to(REPO / "core" / "src").with_suffix("").parts)
        sources[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path.read_text()
    upward = upward_string_imports(sources)
    assert not upward, (
        f"these modules import a higher layer through a string (importer, imported): {upward}; let the higher "
        "layer plug itself in when it is imported (as ops gives Tensor its operators) instead"
    )


@pytest.mark.parametrize(
    "source",
    [
        'replay_gradients_with("tensorplug._tracing._gradient_programs")\n',
        'importlib.import_module("tensorplug._tracing._function")\n',
        'LAZY = {"x": "tensorplug._tracing._function:function"}\n',
    ],
)
def test_a_string_made_upward_import_is_caught(source: str) -> None:
    upward = upward_string_imports({"tensorplug._autodiff._probe": source})
    assert len(upward) == 1
    assert upward[0][1].startswith("tensorplug._tracing")


def handed_strings(name: str, source: str) -> set[tuple[str, str]]:
    """(receiver, named) for each string naming a core module that module ``name`` hands to a function of another
    core module (``_backward.replay_gradients_with("tensorplug._tracing._x")``): the receiver imports it."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # a name the module binds by import -> the core module it comes from
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            targets = imports_of(name, False, ast.unparse(node))
            for alias in node.names:
                for target in targets:
                    if target.endswith(f".{alias.name}") or len(targets) == 1:
                        bound[alias.asname or alias.name] = target
    handed = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        callee = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        callee = func.id if isinstance(func, ast.Name) else callee
        receiver = bound.get(callee or "")
        if receiver is None:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                handed.update((receiver, named) for named in string_imports(f"x = {arg.value!r}\n"))
    return handed


def test_no_module_hands_a_lower_layer_the_name_of_a_higher_one() -> None:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = []
    for path in core_modules():
        parts = list(path.relative_to(REPO / "core" / "src").with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for receiver, named in sorted(handed_strings(name, path.read_text())):
            low, high = place(receiver), place(named)
            if low is not None and high is not None and rank[LAYER_OF[high]] > rank[LAYER_OF[low]]:
                upward.append((name, receiver, named))
    assert not upward, (
        f"these modules hand a lower layer the name of a higher one to import (module, receiver, named): {upward}; "
        "hand it the function or object instead, or let the higher module plug itself in when it is imported"
    )


def test_a_name_handed_down_is_caught() -> None:
    source = (
        "from tensorplug._autodiff import _backward\n"
        "_backward.replay_gradients_with('tensorplug._tracing._gradient_programs')\n"
    )
    assert handed_strings("tensorplug", source) == {
        ("tensorplug._autodiff._backward", "tensorplug._tracing._gradient_programs")
    }
