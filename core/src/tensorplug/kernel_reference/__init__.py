"""The kernel reference: what every kernel of ``kernel_names.CATALOGUE`` receives, returns and must get right.

One :class:`KernelEntry` per kernel, as data: its inputs (names, which are
lists, the dtypes the ops hand over), its attrs (names, Python types and the
canonical form the ops put them in), its outputs (how many, their dtype),
whether the core differentiates it, and its edge conventions (ties,
out-of-range indices, division by zero, NaN, rounding, empty inputs), each
citing the conformance cases that check it. A unary kernel's entry
also gives its result as a NumPy formula, the points to sample it at
and its special values worked out by hand (:class:`Samples`): the
conformance suite builds that kernel's standard cases from them. The facts
come from the ops (what they pass to ``run_kernel``), the NumPy kernels and
the conformance cases; ``tests/unit/test_kernel_reference.py`` runs every conformance case
under a kernel observer and checks each call against its entry with
:func:`check_call`, so the reference cannot drift from the code.

The entries are written per family (``_unary``, ``_binary``, ``_reduction``,
``_linalg``, ``_shape``, ``_nn``, ``_random``) with the types of ``_entries``;
this module gathers them into :data:`REFERENCE` and renders them.

``docs/kernels.md`` is generated from it (:func:`markdown`); so is
``tensorplug kernels`` (``--markdown`` for the whole page, or kernel names
for their entries), and ``python -m tensorplug.kernel_reference``.

>>> from tensorplug.kernel_reference import REFERENCE
>>> entry = REFERENCE["Sum"]
>>> [i.name for i in entry.inputs], [a.name for a in entry.attrs], entry.gradient
(['x'], ['axis', 'keep_dims'], 'yes')
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tensorplug.kernel_reference import _binary, _linalg, _nn, _random, _reduction, _shape, _unary

# The dtype groups (ALL, BOOL, FLOAT, INDEX, INT, NUMERIC) are re-exported with the entry types.
from tensorplug.kernel_reference._entries import (  # noqa: F401
    ALL,
    ATTR_TYPES,
    BOOL,
    ELEMENTWISE_SHAPE,
    FAMILY_TITLES,
    FLOAT,
    FORMS,
    INDEX,
    INT,
    NUMERIC,
    Attr,
    EntryError,
    Input,
    KernelEntry,
    Note,
    Output,
    Samples,
    _rank,
)

__all__ = [
    "Attr",
    "EntryError",
    "Input",
    "KernelEntry",
    "Note",
    "Output",
    "REFERENCE",
    "Samples",
    "check_call",
    "input_order",
    "ops_markdown",
    "markdown",
]


_FAMILY_ENTRIES: dict[str, list[KernelEntry]] = {
    "unary": _unary.ENTRIES,
    "binary": _binary.ENTRIES,
    "reduction": _reduction.ENTRIES,
    "linalg": _linalg.ENTRIES,
    "shape": _shape.ENTRIES,
    "nn": _nn.ENTRIES,
    "random": _random.ENTRIES,
}


def _gathered() -> dict[str, KernelEntry]:
    """Every family's entries by kernel name; an entry in the wrong family's module, or a name written twice, is
    refused here, naming it."""
    found: dict[str, KernelEntry] = {}
    for family, entries in _FAMILY_ENTRIES.items():
        for entry in entries:
            if entry.family != family:
                raise EntryError(
                    f"kernel reference entry {entry.name!r} of family {entry.family!r} is written in "
                    f"tensorplug/kernel_reference/_{family}.py; move it to _{entry.family}.py"
                )
            if entry.name in found:
                raise EntryError(f"kernel reference entry {entry.name!r} is written twice")
            found[entry.name] = entry
    return found


REFERENCE: dict[str, KernelEntry] = _gathered()
"""Every kernel's entry, keyed by kernel name, in catalogue order: the rows from which ``kernel_names`` (the
constants, the family tuples, ``CATALOGUE``) is generated."""


def input_order(kernel_name: str) -> tuple[str, ...] | None:
    """The names of a kernel's inputs in the order its entry lists them, where it has several (the order of the
    entries of its gradient); None for a kernel of one input or none, or one the reference does not know.

    >>> from tensorplug.kernel_reference import input_order
    >>> input_order("Sub"), input_order("Neg")
    (('a', 'b'), None)
    """
    entry = REFERENCE.get(kernel_name)
    if entry is None or len(entry.inputs) < 2:
        return None
    return tuple(i.name for i in entry.inputs)


# -- checking a call against its entry -------------------------------------------------------------------------------


def check_call(
    kernel: str,
    inputs: Mapping[str, Any],
    attrs: Mapping[str, Any],
    outputs: Sequence[Any],
    dtype_of: Callable[[Any], str],
    shape_of: Callable[[Any], tuple[int, ...]],
) -> list[str]:
    """What about one kernel call disagrees with the kernel's entry: an empty list when nothing does.

    ``inputs`` and ``outputs`` hold raw storage (as a kernel observer sees
    them, see ``tensorplug._runtime._observe``); ``dtype_of`` and ``shape_of`` are the
    backend's. Checked: input names and list-ness, input dtypes, attr keys,
    attr types and canonical forms, the output count and the output dtypes.
    """
    entry = REFERENCE.get(kernel)
    if entry is None:
        return [f"{kernel}: no entry in the kernel reference"]
    problems: list[str] = []
    expected = {i.name: i for i in entry.inputs}
    if set(inputs) != set(expected):
        problems.append(f"{kernel}: inputs {sorted(inputs)}, the reference says {sorted(expected)}")
    dtypes: dict[str, str] = {}
    for name, value in inputs.items():
        spec = expected.get(name)
        if spec is None:
            continue
        if isinstance(value, list) != spec.is_list:
            what = "a list" if spec.is_list else "one tensor"
            problems.append(f"{kernel}: input {name!r} is {'a list' if isinstance(value, list) else 'one tensor'}, "
                            f"the reference says {what}")  # fmt: skip
            continue
        for raw in value if isinstance(value, list) else [value]:
            dtype = dtype_of(raw)
            dtypes.setdefault(name, dtype)
            if dtype not in spec.dtypes:
                problems.append(f"{kernel}: input {name!r} has dtype {dtype}, the reference allows "
                                f"{', '.join(spec.dtypes)}")  # fmt: skip
    declared = {a.name: a for a in entry.attrs}
    if set(attrs) != set(declared):
        problems.append(f"{kernel}: attrs {sorted(attrs)}, the reference says {sorted(declared)}")
    rank = _rank(inputs, shape_of)
    for name, value in attrs.items():
        attr = declared.get(name)
        if attr is None:
            continue
        if not ATTR_TYPES[attr.type](value):
            problems.append(f"{kernel}: attr {name}={value!r} is not a {attr.type}")
        elif attr.form is not None and not FORMS[attr.form][1](value, rank):
            problems.append(f"{kernel}: attr {name}={value!r} is not {FORMS[attr.form][0]} (rank {rank})")
    if problems:
        return problems
    count = entry.output_count(attrs)
    if len(outputs) != count:
        return [f"{kernel}: {len(outputs)} outputs, the reference says {count}"]
    for i, raw in enumerate(outputs):
        rule = entry.outputs[min(i, len(entry.outputs) - 1)].dtype
        want = _output_dtype(rule, dtypes, attrs)
        got = dtype_of(raw)
        if got != want:
            problems.append(f"{kernel}: output {i} has dtype {got}, the reference says {want} ({rule})")
    return problems


def _output_dtype(rule: str, dtypes: Mapping[str, str], attrs: Mapping[str, Any]) -> str:
    kind, _, what = rule.partition(":")
    if kind == "like":
        return dtypes[what]
    if kind == "attr":
        return str(attrs[what])
    return rule


# -- the markdown page -------------------------------------------------------------------------------------------


def _dtype_text(rule: str) -> str:
    kind, _, what = rule.partition(":")
    if kind == "like":
        return f"the dtype of `{what}`"
    if kind == "attr":
        return f"the `{what}` attr"
    return rule


def _entry_markdown(entry: KernelEntry) -> list[str]:
    lines = [
        f"### {entry.name}",
        "",
        f"{entry.summary[0].upper()}{entry.summary[1:]}. Ops: {', '.join(entry.ops)}.",
        "",
    ]
    if entry.inputs:
        for i in entry.inputs:
            kind = "list of tensors" if i.is_list else "tensor"
            doc = f"; {i.doc}" if i.doc else ""
            lines.append(f"- input `{i.name}`: {kind} of {', '.join(i.dtypes)}{doc}")
    else:
        lines.append("- inputs: none")
    if entry.attrs:
        for a in entry.attrs:
            lines.append(f"- attr `{a.name}`: `{a.type}`, {a.doc}")
    else:
        lines.append("- attrs: none")
    if entry.outputs_per is not None:
        o = entry.outputs[0]
        doc = f"; {o.doc}" if o.doc else ""
        lines.append(f"- outputs: a tuple, one per `{entry.outputs_per}`, each of {_dtype_text(o.dtype)}{doc}")
    elif len(entry.outputs) == 1:
        o = entry.outputs[0]
        doc = f"; {o.doc}" if o.doc else ""
        lines.append(f"- output: one tensor of {_dtype_text(o.dtype)}{doc}")
    else:
        parts = [f"`{o.name}` ({_dtype_text(o.dtype)})" for o in entry.outputs]
        lines.append(f"- outputs: a tuple of {len(entry.outputs)}: {', '.join(parts)}")
    lines.append(f"- dtypes: {entry.dtypes}")
    if entry.gradient == "none":
        grad = "none (declared not differentiable)"
    elif entry.gradient == "zero":
        grad = "zero (registered; the gradient is zero everywhere)"
    else:
        grad = f"yes, for {', '.join(f'`{n}`' for n in entry.grad_inputs)}"
    lines.append(f"- gradient: {grad}")
    if entry.decomposition:
        lines.append(f"- decomposition: `{entry.decomposition}` (a backend without the kernel runs this in its place)")
    for note in entry.notes:
        cited = f" (cases: {', '.join(f'{entry.name}-{c}' for c in note.cases)})" if note.cases else ""
        lines.append(f"- {note.text}{cited}")
    for k, kink in enumerate(entry.kinks):
        at = ", ".join(f"{x.name} = {v!r}" for x, v in zip(entry.inputs, kink.at, strict=True))
        lines.append(f"- gradient at a kink ({at}): {kink.text} (case: {entry.name}-kink-{k})")
    if entry.samples is not None:
        inputs, results = entry.samples.special
        pairs = ", ".join(f"{x!r} -> {y!r}" for x, y in zip(inputs, results, strict=True))
        lines.append(f"- special values: {pairs} (case: {entry.name}-special)")
    lines.append("")
    return lines


HEADER = """\
# The kernel reference

<!-- Generated from tensorplug/kernel_reference/ by `python -m tensorplug.kernel_reference --write`. -->

Every kernel of `tensorplug.kernel_names.CATALOGUE`: the inputs a kernel gets
(`inputs[name]`, raw storage, or a list of it), its attrs (`attrs[name]`, in
the canonical form the ops put them in), what it returns (raw storage, or a
tuple of it), which dtypes reach it, whether the core differentiates it, and
the edge conventions the conformance suite checks (the cases named after
each are those of `tensorplug.testing`; `tensorplug check NAME -k CASE`
runs one). A kernel is called as `kernel(inputs, attrs, backend)`; the ops
have validated every argument and promoted the inputs before it is called.

The same data is in the core, as `tensorplug.kernel_reference.REFERENCE`
(`tensorplug kernels NAME` prints one entry), and
`tests/unit/test_kernel_reference.py` checks every kernel call the
conformance suite makes against it.

Dtypes: `float32`, `float64`, `int32`, `int64`, `bool`. Elementwise results
have the broadcast shape of the inputs; empty inputs give empty results.

Dtype promotion (what the ops do before a kernel of several inputs is
called) follows TensorFlow.js, not NumPy: two tensors take the higher of
their dtypes in the order bool < int32 < int64 < float32 < float64, so an
integer tensor meeting a float tensor takes the float's dtype (`int32 +
float32` and `int64 + float32` are `float32`, `int32 + float64` is
`float64`). A Python scalar is weak: it takes the tensor's dtype (`x * 2`
keeps `int32`, `x * 2.0` keeps `float64`), unless it is a float meeting an
integer or bool tensor, which gives `float32`, or an int meeting a bool
tensor, which gives `int32`.
"""


def markdown() -> str:
    """The reference as a Markdown page (``docs/kernels.md``)."""
    lines = HEADER.splitlines()
    lines.append("")
    by_family: dict[str, list[KernelEntry]] = {}
    for entry in REFERENCE.values():
        by_family.setdefault(entry.family, []).append(entry)
    lines.append("## Contents")
    lines.append("")
    for family, title in FAMILY_TITLES.items():
        names = ", ".join(f"[{e.name}](#{e.name.lower()})" for e in by_family.get(family, []))
        lines.append(f"- {title}: {names}")
    lines.append("")
    for family, title in FAMILY_TITLES.items():
        lines.append(f"## {title}")
        lines.append("")
        for entry in by_family.get(family, []):
            lines.extend(_entry_markdown(entry))
    return "\n".join(lines).rstrip() + "\n"


OPS_HEADER = """\
# The public ops

<!-- Generated by `tensorplug kernels --ops` from the ops and the kernel reference; do not edit by hand. -->

Every op of `tensorplug.ops.__all__` (each is also `tp.<name>`): what it does
(the first paragraph of its docstring; `help(tp.<name>)` has the rest) and
the kernels it runs, each linked to its entry in the [kernel
reference](kernels.md). An op with no kernel of its own is built from other
ops, or makes a tensor from host data; an alias runs what the op it names
runs. A kernel marked "backward" runs in the op's gradient.
"""


def _first_paragraph(doc: str | None) -> str:
    text = (doc or "").strip().split("\n\n")[0]
    return " ".join(text.split()).replace("|", "\\|")


def ops_markdown() -> str:
    """The index of the public ops as a Markdown page (``docs/ops.md``): name, summary, kernels, links."""
    import re

    import tensorplug.ops as ops

    forward: dict[str, list[str]] = {}
    backward: dict[str, list[str]] = {}
    for entry in REFERENCE.values():
        for text in entry.ops:
            table = backward if text.startswith("the gradient of") else forward
            for op in re.findall(r"tp\.(\w+)", text):
                table.setdefault(op, []).append(entry.name)
    lines = OPS_HEADER.splitlines()
    lines += ["", "| op | what it does | kernels |", "|---|---|---|"]
    for name in ops.__all__:
        function = getattr(ops, name)
        summary = _first_paragraph(function.__doc__)
        canonical = function.__name__
        kernels = [f"[{k}](kernels.md#{k.lower()})" for k in forward.get(name, [])]
        kernels += [f"[{k}](kernels.md#{k.lower()}) (backward)" for k in backward.get(name, [])]
        if canonical != name and canonical in ops.__all__:
            cell = f"alias of `tp.{canonical}`"
        else:
            cell = ", ".join(kernels) or "none of its own"
        lines.append(f"| `tp.{name}` | {summary} | {cell} |")
    return "\n".join(lines) + "\n"


def entry_text(name: str) -> str:
    """One kernel's entry as Markdown; KeyError (with the close names) for an unknown kernel."""
    entry = REFERENCE.get(name)
    if entry is None:
        import difflib

        close = difflib.get_close_matches(name, list(REFERENCE), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no kernel {name!r} in the kernel reference{hint}")
    return "\n".join(_entry_markdown(entry)).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorplug.kernel_reference``: print the whole page, the entries of the kernels named, or
    (``--ops``) the index of the public ops; ``--write`` rewrites every file generated from the entries
    (``kernel_names.py``, the core's gradient table, and docs/kernels.md and docs/ops.md in a checkout), and
    ``--check`` lists those out of date (exit status 1) without writing."""
    names = list(sys.argv[1:] if argv is None else argv)
    if names == ["--ops"]:
        sys.stdout.write(ops_markdown())
        return 0
    if names in (["--write"], ["--check"]):
        from tensorplug.kernel_reference._generate import write

        changed = write(dry_run=names == ["--check"])
        for path in changed:
            print(f"{'wrote' if names == ['--write'] else 'out of date:'} {path}")
        if not changed:
            print("every generated file is up to date")
        return 1 if changed and names == ["--check"] else 0
    try:
        text = "\n".join(entry_text(n) for n in names) if names else markdown()
    except KeyError as exc:
        print(f"tensorplug.kernel_reference: {exc.args[0]}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0
