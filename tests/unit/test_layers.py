"""The core's layers: every import of a module of tensorplug runs downward (see docs/architecture.md).

Each layer of ``core/src/tensorplug`` is a folder (``_runtime/``, ``_plugins/``...), and a module's layer is
its folder's; the public modules and packages, which keep their paths at the top, are placed by name in
``LAYER_OF``. Every import of every module, read with ``ast`` (at the top of the module, inside functions,
under ``TYPE_CHECKING``, relative or absolute), may reach its own layer or a lower one. An import from a
higher layer fails this test, unless it is the inherent tie (``TIE``) or a known debt listed in
``KNOWN_UPWARD`` with its reason; a listed pair that no longer exists fails too, so that the list only shrinks.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "core" / "src"
PACKAGE = SRC / "tensorplug"

LAYERS = (
    "runtime",  # _runtime/: errors, dtypes, thread state, Tensor/Variable, Backend, registry tables, Program, engine
    "plugins",  # _plugins/: registration, overrides, provenance, plugin discovery, loading with rollback, validation
    "ops",  # ops/, gradients/, kernel_reference/: ops and gradients, Tensor indexing, the kernel reference
    "autodiff",  # _autodiff/: the tape and the backward pass; train/, losses, initializers
    "tracing",  # _tracing/: tp.function (trace, passes, replay, signature)
    "inspection",  # _inspection/: profile, debug, coverage, memory
    "tools",  # _tools/: CLI, info, demo, scaffold, bench; datasets/, testing/, and the package's public face
)

# What sits at the top of the package: the layer folders, and the public modules and packages (by name).
LAYER_OF: dict[str, str] = {
    # runtime
    "_runtime": "runtime",
    "kernel_names": "runtime",
    # plugins
    "_plugins": "plugins",
    "hookspecs": "plugins",
    "kernel_factories": "plugins",
    # ops
    "ops": "ops",
    "gradients": "ops",
    "kernel_reference": "ops",
    # autodiff
    "_autodiff": "autodiff",
    "train": "autodiff",
    "losses": "autodiff",
    "initializers": "autodiff",
    # tracing
    "_tracing": "tracing",
    # inspection
    "_inspection": "inspection",
    # tools
    "_tools": "tools",
    "testing": "tools",
    "datasets": "tools",
    "__init__": "tools",
    "__main__": "tools",
}

# Tensor's operators and methods are ops, attached by the ops layer when it is imported
# (``tensorplug.ops._tensor_methods``): the runtime imports no op. (importer, imported), dotted inside tensorplug.
TIE: set[tuple[str, str]] = set()

# Upward imports that exist today, each with why; remove a line when its import goes.
KNOWN_UPWARD: dict[tuple[str, str], str] = {
    # none today: add a line only with a reason, e.g. ("_runtime._engine", "_inspection._profile"): "why"
}


def _module_name(path: Path, src: Path = SRC) -> tuple[str, bool]:
    """The dotted name of the module at ``path`` (under the ``src`` folder of its distribution), and whether it is
    a package's ``__init__``."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _is_module(dotted: str) -> bool:
    base = SRC.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imported_modules(path: Path) -> set[str]:
    """Every tensorplug module the module at ``path`` imports, wherever the import statement stands."""
    name, is_package = _module_name(path)
    return imports_of(name, is_package, path.read_text())


def imports_of(
    name: str,
    is_package: bool,
    source: str,
    *,
    root: str = "tensorplug",
    is_module: Callable[[str], bool] = _is_module,
) -> set[str]:
    """Every module of package ``root`` that ``source``, the module ``name`` (a package's __init__ or not),
    imports; ``is_module(dotted)`` says whether a name is a module of it (``from pkg import name``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == root)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != root:
                continue
            for alias in node.names:  # `from tensorplug import ops` imports the module tensorplug.ops
                submodule = f"{target}.{alias.name}"
                found.add(submodule if is_module(submodule) else target)
    return found


def place(dotted: str) -> str | None:
    """The key of ``LAYER_OF`` that places module ``dotted`` (``tensorplug._runtime._tensor`` -> ``_runtime``)."""
    parts = dotted.split(".")[1:]
    if not parts:
        return "__init__"
    return parts[0] if parts[0] in LAYER_OF else None


def core_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "templates" not in p.relative_to(PACKAGE).parts)


def upward_imports() -> set[tuple[str, str]]:
    """Every (importer, imported) pair of modules (dotted, inside tensorplug) where the imported one's layer is
    higher than the importer's."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    pairs = set()
    for path in core_modules():
        name = _module_name(path)[0]
        importer = place(name)
        assert importer is not None
        for target in imported_modules(path):
            imported = place(target)
            assert imported is not None, f"{path} imports {target}, which is in no layer"
            if rank[LAYER_OF[imported]] > rank[LAYER_OF[importer]]:
                pairs.add((name.partition(".")[2] or "__init__", target.partition(".")[2]))
    return pairs


def test_every_module_is_in_a_layer() -> None:
    unplaced = [str(p.relative_to(SRC)) for p in core_modules() if place(_module_name(p)[0]) is None]
    assert not unplaced, (
        f"put these modules into their layer's folder (a private one), or give them a line in LAYER_OF in "
        f"{__file__} (a public one): {unplaced}"
    )
    assert set(LAYER_OF.values()) <= set(LAYERS)


def test_every_line_of_the_layer_table_names_a_module() -> None:
    stale = [key for key in LAYER_OF if key != "__init__" and not _is_module(f"tensorplug.{key}")]
    assert not stale, f"LAYER_OF names modules that no longer exist: {stale}"


def test_private_modules_live_in_layer_folders() -> None:
    loose = sorted(
        p.name for p in PACKAGE.iterdir() if p.suffix == ".py" and p.name.startswith("_") and p.stem not in LAYER_OF
    )
    assert not loose, f"move these private modules into their layer's folder: {loose}"


def test_imports_run_downward() -> None:
    upward = upward_imports()
    new = sorted(upward - TIE - set(KNOWN_UPWARD))
    assert not new, (
        "these modules import from a higher layer (importer, imported): "
        f"{new}; import downward only (docs/architecture.md), or pass what is needed down through a hook"
    )


def test_the_known_upward_imports_still_exist() -> None:
    upward = upward_imports()
    gone = sorted((TIE | set(KNOWN_UPWARD)) - upward)
    assert not gone, f"these upward imports are gone: take them off TIE / KNOWN_UPWARD: {gone}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from tensorplug._inspection._debug import debug\n", {"tensorplug._inspection._debug"}),
        ("def f():\n    from .._inspection import _debug\n", {"tensorplug._inspection._debug"}),
        ("from ..ops import _unary\n", {"tensorplug.ops._unary"}),
        ("import tensorplug._inspection._profile as p\n", {"tensorplug._inspection._profile"}),
        ("if TYPE_CHECKING:\n    from tensorplug._runtime._program import Program\n", {"tensorplug._runtime._program"}),
        ("from . import _shape\n", {"tensorplug.gradients._shape"}),
        ("from tensorplug import __version__\n", {"tensorplug"}),
    ],
)
def test_the_reader_sees_every_form_of_import(source: str, expected: set[str]) -> None:
    assert imports_of("tensorplug.gradients._probe", False, source) == expected


def test_an_upward_import_is_caught() -> None:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    source = "def f():\n    from tensorplug._inspection._debug import debug\n"
    targets = imports_of("tensorplug._runtime._probe", False, source)
    assert [t for t in targets if rank[LAYER_OF[place(t) or "?"]] > rank["runtime"]] == [
        "tensorplug._inspection._debug"
    ]


PLUGINS = SRC.parents[1] / "plugins"


def test_no_plugin_imports_a_private_module_of_the_core() -> None:
    """A plugin builds on the public contract only (``tensorplug``, ``tensorplug.testing``...): a private module of
    the core (any dotted part starting with ``_``) may change without notice."""
    found = []
    for path in sorted(PLUGINS.glob("*/src/**/*.py")):
        name, is_package = _module_name(path, PLUGINS / path.relative_to(PLUGINS).parts[0] / "src")
        for module in sorted(imports_of(name, is_package, path.read_text())):
            if any(part.startswith("_") for part in module.split(".")[1:]):
                found.append(f"{path.relative_to(PLUGINS)} imports {module}")
    assert len(list(PLUGINS.glob("*/src"))) >= 5  # the walk found the plugins
    assert not found, found
