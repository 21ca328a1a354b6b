"""The kernel reference's vocabulary: dtype groups, the entry dataclasses, attr types and canonical forms."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

FAMILY_TITLES: dict[str, str] = {
    "unary": "Elementwise unary (input x)",
    "binary": "Elementwise binary, broadcasting (inputs a, b)",
    "reduction": "Reductions and scans (input x)",
    "linalg": "Linear algebra",
    "shape": "Shape, indexing and creation",
    "nn": "Neural network (NHWC)",
    "random": "Random",
}
"""The kernel families in catalogue order, with their titles; the entries of family F are written in the module
``tensorplug.kernel_reference._F``."""

FLOAT = ("float32", "float64")
INT = ("int32", "int64")
NUMERIC = FLOAT + INT
ALL = (*NUMERIC, "bool")
BOOL = ("bool",)
INDEX = INT


class EntryError(ValueError):
    """A kernel reference entry that contradicts itself, raised where it is made: the message names the kernel and
    each problem."""


@dataclass(frozen=True)
class Input:
    """One input of a kernel: its name in ``inputs``, the dtypes the ops hand over, and whether it is a list."""

    name: str
    dtypes: tuple[str, ...]
    is_list: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Attr:
    """One attr: its key in ``attrs``, its Python type, and its canonical form (``form`` is machine-checked)."""

    name: str
    type: str  # a key of ATTR_TYPES
    doc: str
    form: str | None = None  # a key of FORMS: a canonical form check_call verifies


@dataclass(frozen=True)
class Output:
    """One output (or each of a variable number of them): its name, if any, and its dtype.

    ``dtype`` is a dtype name, ``"like:<input>"`` (the dtype of that input,
    or of its elements for a list), or ``"attr:dtype"`` (the ``dtype`` attr).
    """

    dtype: str
    name: str = ""
    doc: str = ""


@dataclass(frozen=True)
class Note:
    """An edge convention, with the names of the conformance cases of this kernel that check it."""

    text: str
    cases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Samples:
    """Where the conformance suite samples a unary kernel, and the edge values it promises.

    Its standard cases compare the op with the entry's ``numpy`` formula,
    evaluated in extended precision: at ``points`` (as float32, as float64
    in two rows and the fourth as a 0-d tensor), at ``ints`` (as int32 and
    int64), for a floating-point kernel at False and True (a numeric one
    refuses bool), and, with a numerical gradient check, at ``grad`` (points
    away from poles, kinks and the edges of the domain). ``special`` pairs edge inputs
    (NaN, ±inf, ±0, the ends of the domain) with their results, worked out
    by hand: the formula is not asked about them.
    """

    special: tuple[tuple[float, ...], tuple[float, ...]] = ((math.nan,), (math.nan,))
    points: tuple[float, ...] = (-20.0, -0.5, 0.0, 0.25, 1.0, 30.0)
    ints: tuple[int, ...] = (-2, 0, 3)
    grad: tuple[float, ...] = (-1.2, 0.3, 1.5)


@dataclass(frozen=True)
class Kink:
    """A point where the kernel's function has a kink or a jump, and the value its gradient takes there: the
    derivative does not exist, so this is a convention (TensorFlow.js's unless the text says otherwise).

    At the inputs ``at`` (one number per input of the entry, in order; the op gets ``args`` after them), the gradient
    of the sum of the op's output with respect to each input of ``grad_inputs`` is ``grads``. The conformance suite
    pins each one with a case ``kink-<i>`` (float32, on every backend).
    """

    at: tuple[float, ...]
    grads: tuple[float, ...]
    text: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Grad:
    """How the core differentiates a kernel, stated on its entry; the core's gradient table
    (``tensorplug/gradients/_table.py``) is generated from these.

    ``formulas`` give the gradient of each input in ``grad_inputs``, in order, as an expression written with the
    public ops (``tensorplug.ops``) and the functions and constants of ``tensorplug.gradients``' modules, of ``dy``
    and what the gradient saves: for a one-input kernel its input ``x`` or its output ``y`` (``saves``), or ``dy``
    alone; for a broadcasting two-input kernel both inputs, by name, each gradient summed back to its input's
    shape (``tensorplug.gradients.unary`` and ``binary`` build them). ``function`` instead names a
    ``grad(dy, saved, attrs)`` function of ``tensorplug.gradients``' modules, for a gradient that reads attrs,
    shares an intermediate or has several outputs; ``saves`` are then the inputs it saves and ``outputs`` the
    outputs. Build one with :func:`rule` or :func:`function`.
    """

    formulas: tuple[str, ...] = ()
    function: str = ""
    saves: tuple[str, ...] = ()
    outputs: tuple[int, ...] = ()


def rule(*formulas: str, saves: str | None = None) -> Grad:
    """A gradient written as formulas: one per input that gets a gradient (see :class:`Grad`); ``saves`` is ``"x"``
    (the input) or ``"y"`` (the output) of a one-input kernel, or None."""
    return Grad(formulas=formulas, saves=() if saves is None else (saves,))


def function(name: str, *, saves: tuple[str, ...] = (), outputs: tuple[int, ...] = ()) -> Grad:
    """A gradient written as the function ``name`` of ``tensorplug.gradients``' modules (see :class:`Grad`)."""
    return Grad(function=name, saves=saves, outputs=outputs)


@dataclass(frozen=True)
class KernelEntry:
    """The reference of one kernel.

    ``outputs`` lists the outputs; when ``outputs_per`` names an attr, the
    kernel returns a tuple of that many outputs (an int attr) or one per
    entry (a tuple attr), each like ``outputs[0]``. ``gradient`` is
    ``"yes"``, ``"zero"`` (registered, but identically zero) or ``"none"``
    (declared not differentiable); ``grad_inputs`` are the inputs that get a
    gradient. ``ops`` are the public functions that dispatch the kernel.
    ``numpy`` is the kernel's result written with NumPy, given its inputs as
    NumPy arrays (float64 ones for a floating-point kernel), where a formula
    says it all: the tests' independent reference for the kernel's op.
    ``samples``, for a unary kernel of FLOAT or NUMERIC dtypes, says where the
    conformance suite compares the op with that formula and which edge
    values it promises (the suite builds the kernel's standard cases from
    them). ``grad`` is the core's gradient of the kernel (:class:`Grad`):
    required where ``gradient`` is ``"yes"``; a ``"zero"`` kernel of one
    input without one gets ``zeros_like(dy)``. ``kinks`` state the
    gradient's value where the function has a kink or a jump
    (:class:`Kink`), each pinned by a conformance case. ``decomposition``,
    where the kernel is a composite of others, is the kernel's output written
    as one expression with the public ops (``tensorplug.ops``, operators on
    Tensors too) and the constants of ``tensorplug.gradients``' modules, of
    its inputs and attrs by name: the core declares it as the kernel's
    decomposition (``tp.register_decomposition``), which a backend without
    the kernel runs in its place (``tensorplug/gradients/_decompositions.py``
    is generated from these).
    """

    name: str
    family: str
    summary: str
    ops: tuple[str, ...]
    inputs: tuple[Input, ...]
    attrs: tuple[Attr, ...]
    outputs: tuple[Output, ...]
    dtypes: str
    gradient: str
    grad_inputs: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()
    outputs_per: str | None = None
    numpy: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    samples: Samples | None = None
    grad: Grad | None = None
    kinks: tuple[Kink, ...] = ()
    decomposition: str = ""

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise EntryError(
                f"kernel reference entry {self.name!r}: "
                + "; ".join(problems)
                + " (fix the entry where it is written, "
                f"in tensorplug/kernel_reference/_{self.family}.py)"
            )

    @property
    def op_name(self) -> str:
        """The public function that runs the kernel, as ``tp.<op_name>``: the first one ``ops`` names
        (``"tp.neg (and -x)"`` gives ``"neg"``, ``"tp.reshape, tp.flatten"`` gives ``"reshape"``)."""
        return self.ops[0].split()[0].rstrip(",").removeprefix("tp.")

    def output_count(self, attrs: Mapping[str, Any]) -> int:
        """How many outputs the kernel returns for these attrs."""
        if self.outputs_per is None:
            return len(self.outputs)
        value = attrs[self.outputs_per]
        return len(value) if isinstance(value, tuple) else int(value)


# -- attr types and canonical forms --------------------------------------------------------------------------------


def _is_int(v: Any) -> bool:
    return type(v) is int


def _ints(v: Any) -> bool:
    return type(v) is tuple and all(_is_int(i) for i in v)


def _pair(v: Any) -> bool:
    return _ints(v) and len(v) == 2


ATTR_TYPES: dict[str, Callable[[Any], bool]] = {
    "int": _is_int,
    "bool": lambda v: type(v) is bool,
    "float": lambda v: type(v) is float,
    "int | float": lambda v: type(v) in (int, float),
    "bool | int | float": lambda v: type(v) in (bool, int, float),
    "int | None": lambda v: v is None or _is_int(v),
    "str": lambda v: type(v) is str,
    "tuple[int, ...]": _ints,
    "tuple[int, int]": _pair,
    "tuple[tuple[int, int], ...]": lambda v: type(v) is tuple and all(_pair(p) for p in v),
    "tuple[tuple[int, int], tuple[int, int]]": lambda v: type(v) is tuple and len(v) == 2 and all(_pair(p) for p in v),
}
"""Each attr type (as the reference writes it) and the check of a value against it."""

_DTYPES = frozenset(ALL)
_EQUATION = re.compile(r"[A-Za-z]*(,[A-Za-z]*)*->[A-Za-z]*")


def _rank(inputs: Mapping[str, Any], shape_of: Callable[[Any], tuple[int, ...]]) -> int:
    """The rank of the kernel's first tensor input (the first element of a list input)."""
    for value in inputs.values():
        raw = value[0] if isinstance(value, list) else value
        return len(shape_of(raw))
    return 0


FORMS: dict[str, tuple[str, Callable[[Any, int], bool]]] = {
    "axes": ("a sorted tuple of distinct axes in [0, rank)", lambda v, r: list(v) == sorted(set(v)) and
             all(0 <= a < r for a in v)),
    "axis": ("one axis in [0, rank)", lambda v, r: 0 <= v < r),
    "new-axis": ("one axis in [0, rank] of the result", lambda v, r: 0 <= v <= r),
    "nonnegative": ("non-negative", lambda v, r: all(i >= 0 for i in (v if isinstance(v, tuple) else (v,)))),
    "positive-pair": ("two positive ints (height, width)", lambda v, r: all(i >= 1 for i in v)),
    "pads": ("((top, bottom), (left, right)), non-negative", lambda v, r: all(i >= 0 for p in v for i in p)),
    "paddings": ("one non-negative (before, after) pair per axis", lambda v, r: len(v) == r and
                 all(i >= 0 for p in v for i in p)),
    "perm": ("a permutation of range(rank)", lambda v, r: sorted(v) == list(range(r))),
    "dtype": ("a dtype name: float32, float64, int32, int64 or bool", lambda v, r: v in _DTYPES),
    "equation": ("explicit: 'ab,bc->ac', letters only, no spaces or '...'", lambda v, r: bool(_EQUATION.fullmatch(v))),
    "mode": ("'reflect' or 'symmetric' (lowercase)", lambda v, r: v in ("reflect", "symmetric")),
    "nhwc": ("always 'NHWC'", lambda v, r: v == "NHWC"),
    "mask": ("a non-negative bitmask over the entries of begin", lambda v, r: v >= 0),
    "zero": ("always 0 (resolved by the op)", lambda v, r: v == 0),
}  # fmt: skip
"""Canonical forms an attr may promise, and their checks (given the rank of the first input)."""


ELEMENTWISE_SHAPE = "the shape of x"


def _x(dtypes: tuple[str, ...]) -> tuple[Input, ...]:
    return (Input("x", dtypes),)


# -- an entry checks itself when it is made ------------------------------------------------------------------------

_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")
_GRADIENTS = ("yes", "zero", "none")
MIN_SAMPLE_POINTS = 4
"""The fewest points a :class:`Samples` gives (an even number): the standard cases take them as a float32 vector,
as a float64 tensor of two rows, and the fourth as a 0-d tensor."""


def _problems(entry: KernelEntry) -> list[str]:
    """What is wrong with ``entry``, one sentence each (empty when nothing is)."""
    found: list[str] = []
    if not _NAME.fullmatch(entry.name):
        found.append("its name is not a CamelCase kernel name (a capital letter, then letters and digits)")
    if entry.family not in FAMILY_TITLES:
        found.append(f"family {entry.family!r} is none of {', '.join(FAMILY_TITLES)}")
    if not entry.ops or not all("tp." in op for op in entry.ops):
        found.append(f"ops {entry.ops!r}: name the public functions that run it, each as 'tp.<name>'")
    names = [i.name for i in entry.inputs]
    attrs = [a.name for a in entry.attrs]
    for i in entry.inputs:
        if not set(i.dtypes) <= _DTYPES or not i.dtypes:
            found.append(f"input {i.name!r} lists dtypes {i.dtypes!r}; each is one of {', '.join(ALL)}")
    for a in entry.attrs:
        if a.type not in ATTR_TYPES:
            found.append(f"attr {a.name!r} has type {a.type!r}, not one of ATTR_TYPES")
        if a.form is not None and a.form not in FORMS:
            found.append(f"attr {a.name!r} promises form {a.form!r}, not one of FORMS")
    for o in entry.outputs:
        kind, _, what = o.dtype.partition(":")
        if not (o.dtype in _DTYPES or (kind == "like" and what in names) or (kind == "attr" and what in attrs)):
            found.append(
                f"output dtype {o.dtype!r} is neither a dtype, 'like:<an input>' (inputs: {names}) nor "
                f"'attr:<an attr>' (attrs: {attrs})"
            )
    if not entry.outputs:
        found.append("it lists no output")
    if entry.outputs_per is not None and entry.outputs_per not in attrs:
        found.append(f"outputs_per {entry.outputs_per!r} names no attr (attrs: {attrs})")
    if entry.gradient not in _GRADIENTS:
        found.append(f"gradient {entry.gradient!r} is none of {', '.join(_GRADIENTS)}")
    if not set(entry.grad_inputs) <= set(names):
        found.append(f"grad_inputs {entry.grad_inputs!r} are not all inputs (inputs: {names})")
    if entry.gradient == "none" and entry.grad_inputs:
        found.append(f"gradient 'none' but grad_inputs {entry.grad_inputs!r}")
    if entry.gradient != "none" and not entry.grad_inputs:
        found.append(f"gradient {entry.gradient!r} but no grad_inputs")
    for note in entry.notes:
        if not note.text or not all(isinstance(c, str) and c for c in note.cases):
            found.append(f"note {note.text!r}: its text is empty or a case name is not a non-empty string")
    if entry.samples is not None:
        found.extend(_sample_problems(entry))
    found.extend(_grad_problems(entry))
    found.extend(_decomposition_problems(entry))
    for kink in entry.kinks:
        if entry.gradient == "none":
            found.append("kinks on a kernel declared not differentiable")
        if len(kink.at) != len(names) or len(kink.grads) != len(entry.grad_inputs):
            found.append(
                f"kink {kink.text!r} gives {len(kink.at)} input values and {len(kink.grads)} gradients; give one "
                f"value per input ({names}) and one gradient per grad input ({list(entry.grad_inputs)})"
            )
    return found


def _grad_problems(entry: KernelEntry) -> list[str]:
    grad, names = entry.grad, [i.name for i in entry.inputs]
    if grad is None:
        if entry.gradient == "yes" or (entry.gradient == "zero" and len(names) != 1):
            return [f"gradient {entry.gradient!r} but no grad: state the core's gradient (rule(...) or function(...))"]
        return []
    if entry.gradient == "none":
        return ["gradient 'none' but a grad"]
    if bool(grad.formulas) == bool(grad.function):
        return ["its grad gives formulas or a function: exactly one of them"]
    if grad.function:
        found = [] if grad.function.isidentifier() else [f"grad function {grad.function!r} is not a Python name"]
        unknown = [n for n in grad.saves if n not in names]
        if unknown:
            found.append(f"its grad saves {unknown}, which are not inputs (inputs: {names})")
        return found
    found = []
    if len(grad.formulas) != len(entry.grad_inputs):
        found.append(f"its grad gives {len(grad.formulas)} formulas for {len(entry.grad_inputs)} grad_inputs")
    if len(grad.formulas) == 1 and not (len(names) == 1 and grad.saves in ((), ("x",), ("y",))):
        found.append("a one-formula grad is for a kernel of one input, saving 'x', 'y' or nothing")
    if len(grad.formulas) == 2 and (len(names) != 2 or grad.saves or grad.outputs):
        found.append("a two-formula grad is for a kernel of two inputs, and saves both (give no saves)")
    for formula in grad.formulas:
        try:
            compile(formula, f"<grad of {entry.name}>", "eval")
        except SyntaxError as exc:
            found.append(f"its grad formula {formula!r} is not a Python expression ({exc.msg})")
    return found


def _decomposition_problems(entry: KernelEntry) -> list[str]:
    if not entry.decomposition:
        return []
    try:
        compile(entry.decomposition, f"<decomposition of {entry.name}>", "eval")
    except SyntaxError as exc:
        return [f"its decomposition {entry.decomposition!r} is not a Python expression ({exc.msg})"]
    if entry.outputs_per is not None or len(entry.outputs) != 1 or any(i.is_list for i in entry.inputs):
        return ["a decomposition is one expression: for a kernel of one output and no list input"]
    return []


def _sample_problems(entry: KernelEntry) -> list[str]:
    samples = entry.samples
    assert samples is not None
    found: list[str] = []
    if entry.family != "unary" or entry.inputs[0].dtypes not in (FLOAT, NUMERIC):
        found.append("samples are for unary kernels of dtypes FLOAT or NUMERIC")
    if entry.numpy is None:
        found.append("it gives samples but no numpy formula to compare them with")
    if len(samples.points) % 2 or len(samples.points) < MIN_SAMPLE_POINTS:
        found.append(
            f"Samples.points has {len(samples.points)} values; give an even number, at least {MIN_SAMPLE_POINTS} (the "
            "standard cases take them as a float32 vector, a float64 tensor of two rows, and the fourth as a 0-d "
            "tensor)"
        )
    if not all(math.isfinite(p) for p in (*samples.points, *samples.grad)):
        found.append("Samples.points and Samples.grad are finite (NaN and ±inf go in Samples.special)")
    special_in, special_out = samples.special
    if len(special_in) != len(special_out) or not special_in:
        found.append(
            f"Samples.special pairs {len(special_in)} inputs with {len(special_out)} results; give one result per "
            "input, at least one"
        )
    if not samples.ints:
        found.append("Samples.ints is empty; give at least one whole number in the domain")
    if not samples.grad:
        found.append("Samples.grad is empty; give at least one point for the gradient check")
    return found
