"""The core's layers: every import of a module of tensorplug runs downward (see docs/architecture.md).

Each module of ``core/src/tensorplug`` is placed in one layer by ``LAYER_OF`` (a package placed there
places its submodules too). Its imports, read with ``ast`` (at the top of the module, inside
functions, under ``TYPE_CHECKING``, relative or absolute), may reach its own layer or a lower one.
An import from a higher layer fails this test, unless it is the inherent tie (``TIE``) or a known debt
listed in ``KNOWN_UPWARD`` with its reason; a listed pair that no longer exists fails too, so that the
list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "core" / "src"
PACKAGE = SRC / "tensorplug"

LAYERS = (
    "runtime",  # errors, dtypes, thread state, Tensor/Variable, Backend, registry tables, Program, engine, observers
    "plugins",  # registration, overrides, provenance, plugin discovery, loading with rollback, validation, hookspecs
    "ops",  # ops and gradients, Tensor indexing, the kernel reference
    "autodiff",  # the tape, training, losses, initialisers
    "tracing",  # tp.function: trace, replay, signature
    "inspection",  # profile, debug, coverage, memory
    "tools",  # CLI, info, demo, scaffold, bench, datasets, the testing kit, and the package's public face
)

# One line per module of the core; a package's line covers its submodules. A new module must be placed here.
LAYER_OF: dict[str, str] = {
    # runtime
    "_errors": "runtime",
    "_state": "runtime",
    "_dtypes": "runtime",
    "kernel_names": "runtime",
    "_registry": "runtime",
    "_absent_kernels": "runtime",
    "_backend": "runtime",
    "_storage": "runtime",
    "_printing": "runtime",
    "_tensor": "runtime",
    "_variable": "runtime",
    "_program": "runtime",
    "_engine": "runtime",
    "_observe": "runtime",
    "_lazy": "runtime",
    # registries and plugin machinery
    "_overrides": "plugins",
    "_provenance": "plugins",
    "_registration": "plugins",
    "kernel_factories": "plugins",
    "hookspecs": "plugins",
    "_entry_points": "plugins",
    "_plugin_env": "plugins",
    "_plugin_guard": "plugins",
    "_plugin_notes": "plugins",
    "_plugin_specs": "plugins",
    "_plugin_hooks": "plugins",
    "_plugins": "plugins",
    # ops and gradients
    "ops": "ops",
    "gradients": "ops",
    "_index": "ops",
    "kernel_reference": "ops",
    # autodiff and training
    "_autodiff": "autodiff",
    "_backward": "autodiff",
    "train": "autodiff",
    "losses": "autodiff",
    "initializers": "autodiff",
    # tracing
    "_function": "tracing",
    "_tracer": "tracing",
    "_replay": "tracing",
    "_passes": "tracing",
    "_signature": "tracing",
    # inspection
    "_profile": "inspection",
    "_debug": "inspection",
    "_coverage": "inspection",
    "_memory": "inspection",
    # tools
    "__init__": "tools",
    "__main__": "tools",
    "_cli": "tools",
    "_info": "tools",
    "_demo": "tools",
    "_scaffold": "tools",
    "_bench": "tools",
    "datasets": "tools",
    "testing": "tools",
}

# The one inherent tie: Tensor's operators and indexing call ops, which make Tensors, and a Variable (a Tensor)
# makes its values with ops. _tensor and _variable import them at their end (a late import), once the class exists.
TIE = {
    ("_tensor", "ops"),
    ("_tensor", "_index"),
    ("_variable", "ops"),
}

# Upward imports that exist today, each with why; remove a line when its import goes.
KNOWN_UPWARD: dict[tuple[str, str], str] = {
    # none today: add a line only with a reason, e.g. ("_engine", "_profile"): "why it cannot go through a hook"
}


def _module_name(path: Path) -> tuple[str, bool]:
    """The dotted name of the module at ``path``, and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
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


def imports_of(name: str, is_package: bool, source: str) -> set[str]:
    """Every tensorplug module that ``source``, the module ``name`` (a package's __init__ or not), imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "tensorplug")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "tensorplug":
                continue
            for alias in node.names:  # `from tensorplug import ops` imports the module tensorplug.ops
                submodule = f"{target}.{alias.name}"
                found.add(submodule if _is_module(submodule) else target)
    return found


def place(dotted: str) -> str | None:
    """The key of ``LAYER_OF`` that places module ``dotted`` (``tensorplug.ops._unary`` -> ``ops``), or None."""
    parts = dotted.split(".")[1:]
    if not parts:
        return "__init__"
    if ".".join(parts) in LAYER_OF:
        return ".".join(parts)
    if parts[0] in LAYER_OF and (PACKAGE / parts[0]).is_dir():
        return parts[0]
    return None


def core_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "templates" not in p.relative_to(PACKAGE).parts)


def upward_imports() -> set[tuple[str, str]]:
    """Every (importer, imported) pair of LAYER_OF keys where the imported module's layer is higher."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    pairs = set()
    for path in core_modules():
        importer = place(_module_name(path)[0])
        assert importer is not None
        for target in imported_modules(path):
            imported = place(target)
            assert imported is not None, f"{path} imports {target}, which no line of LAYER_OF places"
            if rank[LAYER_OF[imported]] > rank[LAYER_OF[importer]]:
                pairs.add((importer, imported))
    return pairs


def test_every_module_is_placed_in_a_layer() -> None:
    unplaced = [str(p.relative_to(SRC)) for p in core_modules() if place(_module_name(p)[0]) is None]
    assert not unplaced, f"place these modules in a layer (LAYER_OF in {__file__}): {unplaced}"
    assert set(LAYER_OF.values()) <= set(LAYERS)


def test_every_line_of_the_layer_table_names_a_module() -> None:
    stale = [key for key in LAYER_OF if key != "__init__" and not _is_module(f"tensorplug.{key}")]
    assert not stale, f"LAYER_OF names modules that no longer exist: {stale}"


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
        ("from tensorplug._debug import debug\n", {"tensorplug._debug"}),
        ("def f():\n    from .. import _debug\n", {"tensorplug._debug"}),
        ("from ..ops import _unary\n", {"tensorplug.ops._unary"}),
        ("import tensorplug._profile as p\n", {"tensorplug._profile"}),
        ("if TYPE_CHECKING:\n    from tensorplug._function import Program\n", {"tensorplug._function"}),
        ("from . import _shape\n", {"tensorplug.gradients._shape"}),
        ("from tensorplug import __version__\n", {"tensorplug"}),
    ],
)
def test_the_reader_sees_every_form_of_import(source: str, expected: set[str]) -> None:
    assert imports_of("tensorplug.gradients._probe", False, source) == expected
