"""The sources generated from the kernel reference's entries, which are the one place a kernel's facts are written.

- ``tensorplug/kernel_names.py``: a constant per kernel name, the family tuples and ``CATALOGUE``, in the entries'
  order.
- ``tensorplug/gradients/_table.py``: the core's gradient of every kernel, from each entry's ``gradient`` and
  ``grad`` (a formula becomes a ``unary``/``binary`` rule, a function a ``GradientSpec``, ``"zero"`` a zero rule,
  ``"none"`` an explicit not-differentiable spec).
- ``tensorplug/gradients/_decompositions.py``: the core's decomposition of each kernel whose entry states one
  (``decomposition``), as a function of its inputs and attrs, declared by the built-in plugin.
- ``docs/kernels.md`` and ``docs/ops.md`` in a checkout of the repository.

``python -m tensorplug.kernel_reference --write`` rewrites them all after an entry changed (the unit tests check that
every one is up to date). The generated modules import nothing heavier than what they name, so ``import tensorplug``
never loads the reference itself.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from tensorplug.kernel_factories import _WORD_BREAK
from tensorplug.kernel_reference._entries import FAMILY_TITLES, KernelEntry

WIDTH = 120
GRADIENT_MODULES = ("_unary", "_binary", "_reduction", "_linalg", "_shape", "_indexing", "_nn")
"""The modules of ``tensorplug.gradients`` whose functions and constants a ``grad`` may name, searched in order
after the public ops."""

_NOTICE = (
    "Generated from the kernel reference's entries (tensorplug/kernel_reference/_<family>.py) by\n"
    "``python -m tensorplug.kernel_reference --write``: edit the entries, not this file."
)


def constant_name(kernel: str) -> str:
    """The ``kernel_names`` constant of a kernel name: ``"Conv2DBackpropInput"`` -> ``"CONV2D_BACKPROP_INPUT"``."""
    return _WORD_BREAK.sub("_", kernel).upper()


def _wrapped(names: Iterable[str], indent: str = "    ") -> list[str]:
    """``names``, comma-separated, filled into lines of at most WIDTH characters."""
    lines: list[str] = []
    line = indent
    for name in names:
        item = f"{name},"
        if len(line) + len(item) + 1 > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += item + " "
    if line.strip():
        lines.append(line.rstrip())
    return lines


def kernel_names_source(entries: Iterable[KernelEntry]) -> str:
    """The text of ``tensorplug/kernel_names.py``."""
    entries = list(entries)
    by_family: dict[str, list[str]] = {family: [] for family in FAMILY_TITLES}
    for entry in entries:
        by_family[entry.family].append(entry.name)
    out = [
        '"""The canonical kernel names: a constant per kernel, the families and the catalogue.',
        "",
        "Names follow TensorFlow.js's kernel names; ops, gradients, backends and the conformance tables refer to",
        "these constants. What each kernel receives and must return (its inputs, attrs, outputs and dtypes, its",
        "gradient, its edge conventions) is its entry in :mod:`tensorplug.kernel_reference`: ``tensorplug kernels",
        "NAME`` prints it.",
        "",
        *_NOTICE.splitlines(),
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
    ]
    for family, names in by_family.items():
        out += ["", f"# {FAMILY_TITLES[family]}"]
        out += [f'{constant_name(name)}: Final = "{name}"' for name in names]
    out.append("")
    for family, names in by_family.items():
        out.append(f"{family.upper()}: Final[tuple[str, ...]] = (")
        out += _wrapped(constant_name(name) for name in names)
        out.append(")  # fmt: skip")
    out += [
        "",
        "CATALOGUE: Final[tuple[str, ...]] = " + " + ".join(family.upper() for family in by_family),
        '"""Every kernel name the core knows, in catalogue order."""',
        "",
        "FAMILIES: Final[dict[str, tuple[str, ...]]] = {",
        *(f'    "{family}": {family.upper()},' for family in by_family),
        "}",
        '"""The catalogue by family, in catalogue order; a backend keeps each family\'s kernels in a module '
        '``_<family>``."""',
        "",
        "INPUTS: Final[dict[str, tuple[str, ...]]] = {",
        *(
            f"    {constant_name(entry.name)}: ({', '.join(f'{chr(34)}{i.name}{chr(34)}' for i in entry.inputs)}),"
            for entry in entries
            if len(entry.inputs) > 1
        ),
        "}",
        '"""The inputs of each kernel of several, in the order its entry lists them (the order of its gradient\'s '
        'entries)."""',
    ]
    return "\n".join(out) + "\n"


# -- the gradient table ---------------------------------------------------------------------------------------------


class _Names:
    """Where each name a ``grad`` uses comes from: the public ops, else the first gradient module defining it."""

    def __init__(self) -> None:
        self.ops: ModuleType = importlib.import_module("tensorplug.ops")
        self.modules = [importlib.import_module(f"tensorplug.gradients.{m}") for m in GRADIENT_MODULES]
        self.used: dict[str, set[str]] = {}

    def use(self, name: str, kernel: str, *, function: bool = False) -> None:
        if not function and name in self.ops.__all__:
            self.used.setdefault("tensorplug.ops", set()).add(name)
            return
        for module in self.modules:
            value = vars(module).get(name)
            defined_here = value is not None and getattr(value, "__module__", module.__name__) == module.__name__
            if defined_here and not name.startswith("_"):
                self.used.setdefault(module.__name__, set()).add(name)
                return
        where = "a function of" if function else "a public op (tensorplug.ops) or a function or constant of"
        raise NameError(
            f"the grad of {kernel!r} uses {name!r}, which is not {where} tensorplug.gradients' modules "
            f"({', '.join(GRADIENT_MODULES)})"
        )

    def imports(self) -> dict[str, str]:
        """An import statement per module used, by module."""
        blocks = {}
        for module, used in self.used.items():
            names = sorted(used, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
            single = f"from {module} import {', '.join(names)}"
            lines = [f"from {module} import (", *(f"    {n}," for n in names), ")"]
            blocks[module] = single if len(single) <= WIDTH else "\n".join(lines)
        return blocks


def _formula_names(formula: str, params: set[str]) -> list[str]:
    """The free names of a formula, other than its parameters."""
    found = []
    for node in ast.walk(ast.parse(formula, mode="eval")):
        if isinstance(node, ast.Name) and node.id not in params:
            found.append(node.id)
    return found


def _spec(entry: KernelEntry, names: _Names) -> str:
    """One line (or a wrapped call) of the table: the GradientSpec of ``entry``."""
    k = f'"{entry.name}"'  # a string, not a kernel_names constant: a stale table still imports
    grad = entry.grad
    if entry.gradient == "none":
        return f"GradientSpec({k}, None)"
    if grad is None:  # a zero gradient of one input
        names.use("zeros_like", entry.name)
        return f"unary({k}, zeros_like)"
    if grad.function:
        names.use(grad.function, entry.name, function=True)
        args = [k, grad.function]
        if grad.saves:
            args.append(f"inputs_to_save={_tuple(grad.saves)}")
        if grad.outputs:
            args.append(f"outputs_to_save={_tuple(grad.outputs)}")
        return _call("GradientSpec", args)
    if len(grad.formulas) == 1:
        params = ["dy", *grad.saves]
        for name in _formula_names(grad.formulas[0], set(params)):
            names.use(name, entry.name)
        args = [k, f"lambda {', '.join(params)}: {grad.formulas[0]}"]
        if grad.saves:
            args.append(f'saves="{grad.saves[0]}"')
        return _call("unary", args)
    inputs = tuple(i.name for i in entry.inputs)
    params = ["dy", *inputs]
    for formula in grad.formulas:
        for name in _formula_names(formula, set(params)):
            names.use(name, entry.name)
    args = [k, *(f"lambda {', '.join(params)}: {formula}" for formula in grad.formulas)]
    if inputs != ("a", "b"):
        args.append(f"inputs={_tuple(inputs)}")
    return _call("binary", args)


def _tuple(values: tuple[object, ...]) -> str:
    items = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in values)
    return f"({items},)" if len(values) == 1 else f"({items})"


def _call(function: str, args: list[str]) -> str:
    line = f"{function}({', '.join(args)})"
    if len(line) + len("    ,") <= WIDTH:
        return line
    return "\n".join([f"{function}(", *(f"        {arg}," for arg in args), "    )"])


def gradient_table_source(entries: Iterable[KernelEntry]) -> str:
    """The text of ``tensorplug/gradients/_table.py``."""
    names = _Names()
    specs = [_spec(entry, names) for entry in entries]
    uses_unary = any(s.startswith("unary(") for s in specs)
    uses_binary = any(s.startswith("binary(") for s in specs)
    rules = ", ".join(r for r, used in (("binary", uses_binary), ("unary", uses_unary)) if used)
    out = [
        '"""The core\'s gradient of every kernel of the catalogue, in catalogue order (the built-in plugin returns',
        "it).",
        "",
        *_NOTICE.splitlines(),
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from tensorplug._runtime._registry import GradientSpec",
    ]
    imports = names.imports()
    imports["tensorplug.gradients._rules"] = f"from tensorplug.gradients._rules import {rules}"
    out += [imports[module] for module in sorted(imports)]
    out += ["", "GRADIENTS = ["]
    out += [f"    {spec}," for spec in specs]
    out.append("]  # fmt: skip")
    if any(len(line) > WIDTH for spec in specs for line in spec.splitlines()):
        at = out.index("from __future__ import annotations")
        out[at:at] = ["# ruff: noqa: E501  (a formula stays on one line, as its entry writes it)", ""]
    return "\n".join(out) + "\n"


# -- the decompositions --------------------------------------------------------------------------------------------


def decomposition_table_source(entries: Iterable[KernelEntry]) -> str:
    """The text of ``tensorplug/gradients/_decompositions.py``."""
    names = _Names()
    functions: list[str] = []
    specs: list[str] = []
    for entry in entries:
        if not entry.decomposition:
            continue
        params = [i.name for i in entry.inputs] + [a.name for a in entry.attrs]
        for name in _formula_names(entry.decomposition, set(params)):
            names.use(name, entry.name)
        function = f"decompose_{constant_name(entry.name).lower()}"
        body = [f'    {i.name} = inputs["{i.name}"]' for i in entry.inputs]
        body += [f'    {a.name} = attrs["{a.name}"]' for a in entry.attrs]
        functions += [
            "",
            "",
            f"def {function}(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:",
            f'    """{entry.name}: {entry.decomposition}"""',
            *body,
            f"    return {entry.decomposition}",
        ]
        specs.append(f'DecompositionSpec("{entry.name}", {function})')
    out = [
        '"""The core\'s decomposition of the catalogue kernels that are composites of others, in catalogue order (the',
        "built-in plugin declares them): a backend without one of these kernels runs the decomposition in its place.",
        "",
        *_NOTICE.splitlines(),
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        "from tensorplug._runtime._registry import DecompositionSpec",
    ]
    imports = names.imports()
    out += [imports[module] for module in sorted(imports)]
    out += functions
    out += ["", "", "DECOMPOSITIONS = ["]
    out += [f"    {spec}," for spec in specs]
    out.append("]")
    return "\n".join(out) + "\n"


# -- writing them ---------------------------------------------------------------------------------------------------


def generated_files(root: Path | None = None) -> dict[Path, str]:
    """Every generated file and its text; the docs only where ``root`` (a checkout, by default the one this package
    runs from, if it is one) has a ``docs`` folder."""
    from tensorplug.kernel_reference import REFERENCE, markdown, ops_markdown

    package = Path(__file__).resolve().parents[1]
    entries = list(REFERENCE.values())
    files = {
        package / "kernel_names.py": kernel_names_source(entries),
        package / "gradients" / "_table.py": gradient_table_source(entries),
        package / "gradients" / "_decompositions.py": decomposition_table_source(entries),
    }
    checkout = package.parents[2] if root is None else root
    if (checkout / "docs").is_dir() and (checkout / "core").is_dir():
        files[checkout / "docs" / "kernels.md"] = markdown()
        files[checkout / "docs" / "ops.md"] = ops_markdown()
    return files


def write(root: Path | None = None, *, dry_run: bool = False) -> list[Path]:
    """Rewrite every generated file whose text changed (only list them, with ``dry_run``); the paths."""
    changed = []
    for path, text in generated_files(root).items():
        if not path.exists() or path.read_text() != text:
            if not dry_run:
                path.write_text(text)
            changed.append(path)
    return changed


__all__ = [
    "constant_name",
    "decomposition_table_source",
    "generated_files",
    "gradient_table_source",
    "kernel_names_source",
    "write",
]
