"""The kernel reference's vocabulary: dtype groups, the entry dataclasses, attr types and canonical forms."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

FLOAT = ("float32", "float64")
INT = ("int32", "int64")
NUMERIC = FLOAT + INT
ALL = (*NUMERIC, "bool")
BOOL = ("bool",)
INDEX = INT


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
    """Where the conformance suite samples a floating-point unary kernel, and the edge values it promises.

    Its standard cases compare the op with the entry's ``numpy`` formula,
    evaluated in float64: at ``points`` (as float32, as float64 and one of
    them as a 0-d tensor), at ``ints`` (as int32 and int64), at False and
    True, and, with a numerical gradient check, at ``grad`` (points away
    from poles and the edges of the domain). ``special`` pairs edge inputs
    (NaN, ±inf, ±0, the ends of the domain) with their results, worked out
    by hand: the formula is not asked about them.
    """

    special: tuple[tuple[float, ...], tuple[float, ...]] = ((math.nan,), (math.nan,))
    points: tuple[float, ...] = (-20.0, -0.5, 0.0, 0.25, 1.0, 30.0)
    ints: tuple[int, ...] = (-2, 0, 3)
    grad: tuple[float, ...] = (-1.2, 0.3, 1.5)


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
    ``samples``, for a floating-point unary kernel, says where the
    conformance suite compares the op with that formula and which edge
    values it promises (the suite builds the kernel's standard cases from
    them).
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
