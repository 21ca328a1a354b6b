"""The kernel reference: what every kernel of ``kernel_names.CATALOGUE`` receives, returns and must get right.

One :class:`KernelEntry` per kernel, as data: its inputs (names, which are
lists, the dtypes the ops hand over), its attrs (names, Python types and the
canonical form the ops put them in), its outputs (how many, their dtype),
whether the core differentiates it, and its edge conventions (ties,
out-of-range indices, division by zero, NaN, rounding, empty inputs), each
citing the conformance cases that check it. The facts come from the ops
(what they pass to ``run_kernel``), the NumPy kernels and the conformance
cases; ``tests/unit/test_kernel_reference.py`` runs every conformance case
under a kernel observer and checks each call against its entry with
:func:`check_call`, so the reference cannot drift from the code.

``docs/kernels.md`` is generated from it (:func:`markdown`); so is
``tensorplug kernels`` (``--markdown`` for the whole page, or kernel names
for their entries), and ``python -m tensorplug.kernel_reference``.

>>> from tensorplug.kernel_reference import REFERENCE
>>> entry = REFERENCE["Sum"]
>>> [i.name for i in entry.inputs], [a.name for a in entry.attrs], entry.gradient
(['x'], ['axis', 'keep_dims'], 'yes')
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tensorplug import kernel_names as K

__all__ = [
    "Attr",
    "Input",
    "KernelEntry",
    "Note",
    "Output",
    "REFERENCE",
    "check_call",
    "markdown",
]

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
class KernelEntry:
    """The reference of one kernel.

    ``outputs`` lists the outputs; when ``outputs_per`` names an attr, the
    kernel returns a tuple of that many outputs (an int attr) or one per
    entry (a tuple attr), each like ``outputs[0]``. ``gradient`` is
    ``"yes"``, ``"zero"`` (registered, but identically zero) or ``"none"``
    (declared not differentiable); ``grad_inputs`` are the inputs that get a
    gradient. ``ops`` are the public functions that dispatch the kernel.
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


# -- families ---------------------------------------------------------------------------------------------------------

ELEMENTWISE_SHAPE = "the shape of x"


def _x(dtypes: tuple[str, ...]) -> tuple[Input, ...]:
    return (Input("x", dtypes),)


def _unary(
    name: str,
    summary: str,
    dtypes: tuple[str, ...],
    *notes: Note,
    op: str,
    attrs: tuple[Attr, ...] = (),
    out: str = "like:x",
    gradient: str = "yes",
    dtype_rule: str = "",
) -> KernelEntry:
    if not dtype_rule:
        if dtypes == FLOAT:
            dtype_rule = (
                "x is float32 or float64 (the op casts integer and bool tensors to float32 first); y has x's dtype"
            )
        elif out == "bool":
            dtype_rule = f"x is any of {', '.join(dtypes)}; y is bool"
        else:
            dtype_rule = f"x is any of {', '.join(dtypes)} (the op refuses bool); y has x's dtype"
    return KernelEntry(
        name=name,
        family="unary",
        summary=summary,
        ops=(op,),
        inputs=_x(dtypes),
        attrs=attrs,
        outputs=(Output(out, doc=ELEMENTWISE_SHAPE),),
        dtypes=dtype_rule,
        gradient=gradient,
        grad_inputs=("x",) if gradient != "none" else (),
        notes=notes,
    )


_NAN = Note("NaN in, NaN out; the cases' special values (±inf, ±0, the edges of the domain) are checked", ("special",))
_EMPTY = Note("an empty x gives an empty y; a 0-d x a 0-d y", ("empty", "scalar"))
_SUBNORMAL = Note(
    "a subnormal result is kept exactly; a backend declaring flush_to_zero may give zero instead", ("subnormal-result",)
)


def _floating(name: str, summary: str, *notes: Note, op: str) -> KernelEntry:
    return _unary(name, summary, FLOAT, *notes, _NAN, _EMPTY, op=op)


UNARY = [
    _unary(K.ABS, "|x|", NUMERIC, Note("abs(-0.0) is 0.0, abs(±inf) is inf", ("special",)), _EMPTY, op="tp.abs"),
    _floating(K.ACOS, "inverse cosine, in [0, pi]", Note("NaN outside [-1, 1]", ("special",)), op="tp.acos"),
    _floating(K.ACOSH, "inverse hyperbolic cosine", Note("NaN below 1", ("special",)), op="tp.acosh"),
    _floating(K.ASIN, "inverse sine, in [-pi/2, pi/2]", Note("NaN outside [-1, 1]", ("special",)), op="tp.asin"),
    _floating(K.ASINH, "inverse hyperbolic sine", op="tp.asinh"),
    _floating(K.ATAN, "inverse tangent, in (-pi/2, pi/2)", Note("atan(±inf) is ±pi/2", ("special",)), op="tp.atan"),
    _floating(K.ATANH, "inverse hyperbolic tangent", Note("±inf at ±1, NaN outside [-1, 1]", ("special",)),
              op="tp.atanh"),
    _floating(K.COS, "cosine (radians)", Note("NaN at ±inf", ("special",)), op="tp.cos"),
    _floating(K.COSH, "hyperbolic cosine", op="tp.cosh"),
    _floating(K.ELU, "x where x > 0, else expm1(x)",
              Note("computed with expm1 below 0, so tiny negative x keep their digits", ("near-zero",)), op="tp.elu"),
    _floating(K.ERF, "the error function",
              Note("accurate to float64 precision (relative error below 1e-15 in float64, subnormals included)",
                   ("float64-accuracy", "branches")), op="tp.erf"),
    _floating(K.EXP, "e ** x", Note("exp(-inf) is 0, overflow gives inf", ("special",)), _SUBNORMAL, op="tp.exp"),
    _floating(K.EXPM1, "e ** x - 1, accurate near 0", Note("accurate for tiny x", ("near-zero",)), op="tp.expm1"),
    _floating(K.LOG, "natural logarithm", Note("log(0) is -inf, log of a negative is NaN", ("special",)),
              op="tp.log"),
    _floating(K.LOG1P, "log(1 + x), accurate near 0", Note("-inf at -1, NaN below; accurate for tiny x",
                                                           ("special", "near-zero")), op="tp.log1p"),
    _unary(K.NEG, "-x", NUMERIC, Note("NaN stays NaN, ±inf change sign", ("special",)),
           Note("subnormal inputs are negated exactly (a backend declaring flush_to_zero is not asked)",
                ("subnormal",)), _EMPTY,
           op="tp.neg (and -x)"),
    _floating(K.RECIPROCAL, "1 / x", Note("1/±0 is ±inf, 1/±inf is ±0", ("special",)), op="tp.reciprocal"),
    _unary(K.RELU, "max(x, 0)", NUMERIC, Note("relu(NaN) is NaN", ("special",)), _EMPTY, op="tp.relu"),
    _unary(K.RELU6, "min(max(x, 0), 6)", NUMERIC, Note("relu6(NaN) is NaN, relu6(inf) is 6", ("special",)), _EMPTY,
           op="tp.relu6"),
    _floating(K.RSQRT, "1 / sqrt(x)", Note("inf at 0, NaN below 0, 0 at inf", ("special",)), op="tp.rsqrt"),
    _floating(K.SELU, "scale * x where x > 0, else scale * alpha * expm1(x)",
              Note("TensorFlow.js's constants: scale 1.0507009873554805, alpha 1.6732632423543772; expm1 below 0",
                   ("float64", "near-zero")), op="tp.selu"),
    _floating(K.SIGMOID, "1 / (1 + e ** -x)",
              Note("no overflow or cancellation for large |x|: sigmoid(-800) is 0 (or e**x), sigmoid(800) is 1",
                   ("no-overflow", "large-negative")), op="tp.sigmoid"),
    _floating(K.SIN, "sine (radians)", Note("NaN at ±inf", ("special",)), op="tp.sin"),
    _floating(K.SINH, "hyperbolic sine", op="tp.sinh"),
    _floating(K.SOFTPLUS, "log(1 + e ** x)",
              Note("no overflow: softplus(x) is x for large x and e**x for very negative x", ("large-magnitude",)),
              op="tp.softplus"),
    _floating(K.SQRT, "square root", Note("NaN below 0; sqrt(-0.0) is ±0", ("special",)), op="tp.sqrt"),
    _unary(K.SQUARE, "x * x", NUMERIC, Note("NaN stays NaN, overflow gives inf", ("special",)), _EMPTY,
           op="tp.square"),
    _floating(K.TAN, "tangent (radians)", Note("NaN at ±inf", ("special",)), op="tp.tan"),
    _floating(K.TANH, "hyperbolic tangent", Note("tanh(±inf) is ±1", ("special",)), op="tp.tanh"),
    _unary(K.LEAKY_RELU, "x where x >= 0, else alpha * x", FLOAT,
           Note("integer and bool x reach the kernel as float32", ("int32", "bool")), _NAN, _EMPTY,
           op="tp.leaky_relu", attrs=(Attr("alpha", "float", "the slope below 0 (any real, above 1 too)"),)),
    _unary(K.STEP, "1 where x > 0, alpha elsewhere", NUMERIC,
           Note("alpha at 0 and -0.0; NaN stays NaN (also a NaN among many values)",
                ("default", "special", "special-default-alpha", "nan-among-many", "scalar-nan")),
           Note("for integer x, alpha is an int (the op refuses a fractional one)", ("int64-alpha",)),
           op="tp.step", gradient="zero",
           attrs=(Attr("alpha", "int | float", "the value at or below 0: a float for float x, an int for integer x"),)),
    _unary(K.CLIP_BY_VALUE, "x limited to [clip_value_min, clip_value_max]", NUMERIC,
           Note("bounds included; NaN stays NaN; min <= max (the op checks)", ("float32", "special", "equal-bounds")),
           Note("for integer x the bounds are ints, infinite or huge bounds clamped to the dtype's range by the op",
                ("int64-infinite-bound", "int32-bounds-beyond-range")), _EMPTY,
           op="tp.clip_by_value",
           attrs=(Attr("clip_value_min", "int | float", "a float for float x, an int (within x's range) for integer x"),
                  Attr("clip_value_max", "int | float", "as clip_value_min"))),
    _unary(K.CEIL, "the smallest whole number >= x", NUMERIC,
           Note("NaN and ±inf stay; ceil(-0.5) is 0; integer x are returned unchanged", ("special", "int32")),
           _EMPTY, op="tp.ceil", gradient="zero"),
    _unary(K.FLOOR, "the largest whole number <= x", NUMERIC,
           Note("NaN and ±inf stay; integer x are returned unchanged", ("special", "int32")), _EMPTY,
           op="tp.floor", gradient="zero"),
    _unary(K.ROUND, "the nearest whole number", NUMERIC,
           Note("halves round to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2", ("special",)), _EMPTY,
           op="tp.round", gradient="zero"),
    _unary(K.SIGN, "-1, 0 or 1 by the sign of x", NUMERIC,
           Note("sign(NaN) is 0 (TensorFlow.js); sign(±0) is 0; tiny values are ±1", ("special",)), _EMPTY,
           op="tp.sign", gradient="zero"),
    _unary(K.IS_NAN, "x is NaN", ALL, Note("always False for integer and bool x", ("int32", "bool")), _EMPTY,
           op="tp.isnan", out="bool", gradient="none"),
    _unary(K.IS_INF, "x is +inf or -inf", ALL, Note("always False for integer and bool x", ("int32", "bool")), _EMPTY,
           op="tp.isinf", out="bool", gradient="none"),
    _unary(K.IS_FINITE, "x is neither NaN nor ±inf", ALL, Note("always True for integer and bool x", ("int32", "bool")),
           _EMPTY, op="tp.isfinite", out="bool", gradient="none"),
    _unary(K.LOGICAL_NOT, "not x", BOOL, Note("the op refuses non-bool x", ("float32", "int32")), _EMPTY,
           op="tp.logical_not", out="bool", gradient="none", dtype_rule="x is bool; y is bool"),
]  # fmt: skip


_BROADCAST = "a and b have one dtype (the op promotes them: NumPy's table, Python scalars weak) and shapes that " \
             "broadcast (NumPy's rules); y has the broadcast shape"  # fmt: skip
_AB_EMPTY = Note("empty operands give an empty result of the broadcast shape", ("empty",))


def _binary(
    name: str,
    summary: str,
    dtypes: tuple[str, ...],
    *notes: Note,
    op: str,
    out: str = "like:a",
    gradient: str = "yes",
    rule: str = "",
) -> KernelEntry:
    return KernelEntry(
        name=name,
        family="binary",
        summary=summary,
        ops=(op,),
        inputs=(Input("a", dtypes), Input("b", dtypes)),
        attrs=(),
        outputs=(Output(out, doc="the broadcast shape of a and b"),),
        dtypes=rule or f"a and b are one of {', '.join(dtypes)}; y is {'bool' if out == 'bool' else 'their dtype'}",
        gradient=gradient,
        grad_inputs=("a", "b") if gradient == "yes" else (),
        notes=(
            Note(_BROADCAST, ("broadcast",)) if "broadcast" in _BROADCAST_CASES.get(name, ()) else Note(_BROADCAST),
            *notes,
        ),
    )


# Kernels whose conformance table has a case named "broadcast" (the comparisons have "int32-broadcast").
_BROADCAST_CASES = {
    k: ("broadcast",) for k in (K.ADD, K.SUB, K.MULTIPLY, K.REAL_DIV, K.POW, K.MAXIMUM, K.MINIMUM,
                                K.SQUARED_DIFFERENCE, K.ATAN2, K.FLOOR_DIV, K.MOD, K.LOGICAL_AND, K.LOGICAL_OR,
                                K.LOGICAL_XOR)
}  # fmt: skip


def _compare(name: str, summary: str, op: str) -> KernelEntry:
    return _binary(
        name, summary, ALL,
        Note("any comparison with NaN is False, except NotEqual which is True", ("float32-nan",)),
        Note("±inf compare as numbers", ("float64-inf",)),
        Note("bool operands compare as False < True", ("bool",)), _AB_EMPTY,
        op=op, out="bool", gradient="none",
        rule="a and b are one of float32, float64, int32, int64, bool, promoted to one dtype; y is bool",
    )  # fmt: skip


def _logical(name: str, summary: str, op: str) -> KernelEntry:
    return _binary(
        name, summary, BOOL, Note("the op refuses non-bool operands", ("int-rejected", "float-rejected")), _AB_EMPTY,
        op=op, out="bool", gradient="none", rule="a and b are bool; y is bool",
    )  # fmt: skip


BINARY = [
    _binary(K.ADD, "a + b", ALL, Note("on bool: logical or", ("bool-is-or",)),
            Note("inf + -inf is NaN; NaN propagates", ("inf-nan",)), _AB_EMPTY, op="tp.add (and +)"),
    _binary(K.SUB, "a - b", NUMERIC, Note("inf - inf is NaN; the op refuses bool", ("inf", "bool-rejected")),
            _AB_EMPTY, op="tp.sub (and -)"),
    _binary(K.MULTIPLY, "a * b", ALL, Note("on bool: logical and", ("bool-is-and",)),
            Note("inf * 0 is NaN; NaN propagates", ("inf-nan",)), _SUBNORMAL, _AB_EMPTY, op="tp.mul (and *)"),
    _binary(K.REAL_DIV, "a / b (true division)", FLOAT,
            Note("x / 0 is inf, -inf or NaN (0 / 0); integer operands reach the kernel as float32",
                 ("by-zero", "int-by-zero", "int32-gives-float32")), _AB_EMPTY, op="tp.div (and /)",
            rule="a and b are float32 or float64 (the op casts integer and bool operands to float32); y has "
                 "their dtype"),
    _binary(K.POW, "a ** b", NUMERIC,
            Note("C's pow: (-inf) ** 0.5 is inf and (-0.0) ** 0.5 is 0.0, (-8) ** (1/3) is NaN, 0 ** -1 is inf, "
                 "x ** 0 is 1", ("half-exponent-of-minus-inf", "float64-special", "minus-inf-base")),
            Note("integer a to a negative integer b is an error: the kernel raises (the op refuses a negative "
                 "Python int exponent itself)", ("int-to-negative-int-tensor", "int-to-negative-python-int")),
            _AB_EMPTY, op="tp.pow (and **)"),
    _binary(K.MAXIMUM, "the larger of a and b", ALL, Note("NaN if either is NaN", ("nan",)),
            Note("on bool: logical or", ("bool",)), _AB_EMPTY, op="tp.maximum"),
    _binary(K.MINIMUM, "the smaller of a and b", ALL, Note("NaN if either is NaN", ("nan",)),
            Note("on bool: logical and", ("bool",)), _AB_EMPTY, op="tp.minimum"),
    _binary(K.SQUARED_DIFFERENCE, "(a - b) ** 2", NUMERIC, Note("NaN propagates; inf - inf is NaN", ("inf-nan",)),
            _AB_EMPTY, op="tp.squared_difference"),
    _binary(K.ATAN2, "the angle of the point (b, a), in [-pi, pi]", FLOAT,
            Note("all four quadrants; atan2 of ±inf and NaN as C's atan2", ("float64-quadrants", "inf-nan")),
            _AB_EMPTY, op="tp.atan2",
            rule="a and b are float32 or float64 (the op casts integers to float32); y has their dtype"),
    KernelEntry(
        name=K.PRELU, family="binary", summary="x where x >= 0, else alpha * x", ops=("tp.prelu",),
        inputs=(Input("x", NUMERIC), Input("alpha", NUMERIC, doc="the slope, broadcasting with x")),
        attrs=(), outputs=(Output("like:x", doc="the broadcast shape of x and alpha"),),
        dtypes="x and alpha are one numeric dtype (the op promotes them and refuses bool); y has their dtype",
        gradient="yes", grad_inputs=("x", "alpha"),
        notes=(Note("alpha broadcasts (one slope per channel, say)", ("per-channel",)),
               Note("NaN stays NaN, -inf becomes alpha * -inf", ("inf-nan",)),
               Note("empty x gives empty y", ("empty",))),
    ),
    _binary(K.FLOOR_DIV, "floor(a / b)", NUMERIC,
            Note("integers: Python's floor division (rounds toward -inf: -7 // 2 is -4)", ("int32", "int64")),
            Note("integer division by zero gives 0, without an error or a warning", ("int-by-zero", "int64-by-zero")),
            Note("floats: floor of the true quotient, as TensorFlow.js (1.0 // 0.1 is 10.0, where Python gives 9.0); "
                 "x // 0 is inf, -inf or NaN", ("float-floors-the-quotient", "float-by-zero")), _AB_EMPTY,
            op="tp.floor_div (and //)", gradient="none"),
    _binary(K.MOD, "a - floor(a / b) * b: the remainder with the sign of b (Python's %)", NUMERIC,
            Note("the sign of the divisor: -7 mod 3 is 2, 7 mod -3 is -2", ("int32", "float32")),
            Note("integer x mod 0 is 0 (no error); float x mod 0 is NaN; inf mod b is NaN",
                 ("int-by-zero", "float-by-zero", "inf-nan")), _AB_EMPTY, op="tp.mod (and %)"),
    _compare(K.EQUAL, "a == b", "tp.equal (and ==)"),
    _compare(K.NOT_EQUAL, "a != b", "tp.not_equal (and !=)"),
    _compare(K.LESS, "a < b", "tp.less (and <)"),
    _compare(K.LESS_EQUAL, "a <= b", "tp.less_equal (and <=)"),
    _compare(K.GREATER, "a > b", "tp.greater (and >)"),
    _compare(K.GREATER_EQUAL, "a >= b", "tp.greater_equal (and >=)"),
    _logical(K.LOGICAL_AND, "a and b", "tp.logical_and (and & on bool)"),
    _logical(K.LOGICAL_OR, "a or b", "tp.logical_or (and | on bool)"),
    _logical(K.LOGICAL_XOR, "a xor b", "tp.logical_xor (and ^ on bool)"),
    KernelEntry(
        name=K.ADD_N, family="binary", summary="the elementwise sum of a list of tensors", ops=("tp.add_n",),
        inputs=(Input("tensors", ALL, is_list=True, doc="one or more tensors of one shape and one dtype"),),
        attrs=(), outputs=(Output("like:tensors", doc="the shape of each tensor"),),
        dtypes="every tensor has the same dtype, any of float32, float64, int32, int64, bool; y has that dtype",
        gradient="yes", grad_inputs=("tensors",),
        notes=(Note("no broadcasting: the op checks that shapes and dtypes agree", ("shape-mismatch",
                                                                                   "dtype-mismatch")),
               Note("a list of one tensor is allowed", ("single",)), Note("on bool: logical or", ("bool-is-or",)),
               Note("inf + -inf is NaN", ("inf-nan",)), Note("empty tensors give an empty result", ("empty",))),
    ),
]  # fmt: skip


_AXES = Attr("axis", "tuple[int, ...]", "the axes to reduce: sorted, distinct, non-negative (None and negative axes "
             "resolved by the op); () reduces nothing", form="axes")  # fmt: skip
_KEEP = Attr("keep_dims", "bool", "keep each reduced axis with size 1")


def _reduction(
    name: str,
    summary: str,
    dtypes: tuple[str, ...],
    *notes: Note,
    op: str,
    out: str = "like:x",
    gradient: str = "yes",
    rule: str = "",
) -> KernelEntry:
    return KernelEntry(
        name=name,
        family="reduction",
        summary=summary,
        ops=(op,),
        inputs=_x(dtypes),
        attrs=(_AXES, _KEEP),
        outputs=(Output(out, doc="x's shape without the reduced axes (or with size 1 there, keep_dims)"),),
        dtypes=rule or f"x is any of {', '.join(dtypes)}; y has x's dtype",
        gradient=gradient,
        grad_inputs=("x",) if gradient == "yes" else (),
        notes=notes,
    )


def _arg(name: str, summary: str, op: str, ties: tuple[str, ...]) -> KernelEntry:
    return KernelEntry(
        name=name, family="reduction", summary=summary, ops=(op,), inputs=_x(NUMERIC),
        attrs=(Attr("axis", "int", "one axis, non-negative", form="axis"),),
        outputs=(Output("int32", doc="x's shape without axis"),),
        dtypes="x is numeric (the op refuses bool); y is int32", gradient="none",
        notes=(Note("ties: the first (lowest) index", ties),
               Note("NaN wins: the index of the first NaN", ("nan-first",)),
               Note("x has rank >= 1 and axis has size > 0 (the op checks)", ("empty-axis", "scalar"))),
    )  # fmt: skip


def _scan(name: str, summary: str, op: str, identity: str, *notes: Note) -> KernelEntry:
    return KernelEntry(
        name=name, family="reduction", summary=summary, ops=(op,), inputs=_x(NUMERIC),
        attrs=(Attr("axis", "int", "one axis, non-negative", form="axis"),
               Attr("exclusive", "bool", f"leave each element out of its own result (the first is {identity})"),
               Attr("reverse", "bool", "accumulate from the end")),
        outputs=(Output("like:x", doc=ELEMENTWISE_SHAPE),),
        dtypes="x is numeric (the op casts bool to int32); y has x's dtype", gradient="yes", grad_inputs=("x",),
        notes=(Note("exclusive and reverse combine as TensorFlow.js's", ("exclusive", "reverse", "exclusive-reverse")),
               *notes, Note("an empty x gives an empty y", ("empty",))),
    )  # fmt: skip


REDUCTION = [
    _reduction(K.SUM, "the sum over axis", NUMERIC,
               Note("0 over no elements; axis=() returns x unchanged", ("empty-axis-is-zero", "empty-all",
                                                                         "no-axes-is-identity")),
               Note("integers keep their dtype and wrap (no widening to int64)", ("int32-wraps",)),
               Note("inf - inf is NaN; NaN propagates", ("inf-minus-inf-nan", "nan")),
               op="tp.sum", rule="x is numeric (the op casts bool to int32); y has x's dtype"),
    _reduction(K.PROD, "the product over axis", NUMERIC,
               Note("1 over no elements", ("empty-axis-is-one", "empty-all")),
               Note("integers keep their dtype and wrap", ("int32-wraps",)),
               Note("inf * 0 is NaN; NaN propagates", ("inf-times-zero-nan", "nan")),
               op="tp.prod", rule="x is numeric (the op casts bool to int32); y has x's dtype"),
    _reduction(K.MEAN, "the mean over axis", FLOAT,
               Note("NaN over no elements, without an error", ("empty-nan", "empty-axis-nan")),
               Note("NaN propagates", ("nan",)), op="tp.mean",
               rule="x is float32 or float64 (the op casts integers and bool to float32); y has x's dtype"),
    _reduction(K.MAX, "the maximum over axis", NUMERIC,
               Note("NaN propagates (any NaN gives NaN)", ("nan-propagates",)),
               Note("never called over an axis of size 0 (the op refuses it)", ("empty-axis", "empty-all")),
               Note("gradient: ties share dy (every maximal element gets all of it)", ("grad-ties",)),
               op="tp.max", rule="x is numeric (the op refuses bool); y has x's dtype"),
    _reduction(K.MIN, "the minimum over axis", NUMERIC,
               Note("NaN propagates", ("nan-propagates",)),
               Note("never called over an axis of size 0 (the op refuses it)", ("empty-axis",)),
               Note("gradient: ties share dy (every minimal element gets all of it)", ("grad-ties",)),
               op="tp.min", rule="x is numeric (the op refuses bool); y has x's dtype"),
    _reduction(K.ALL, "logical and over axis", BOOL, Note("True over no elements", ("empty-is-true", "empty-axis")),
               op="tp.all", out="bool", gradient="none", rule="x is bool; y is bool"),
    _reduction(K.ANY, "logical or over axis", BOOL, Note("False over no elements", ("empty-is-false", "empty-axis")),
               op="tp.any", out="bool", gradient="none", rule="x is bool; y is bool"),
    _arg(K.ARG_MAX, "the index of the largest value along axis", "tp.argmax", ("axis1-ties-first",)),
    _arg(K.ARG_MIN, "the index of the smallest value along axis", "tp.argmin",
         ("default-axis0-ties-first", "axis1-ties-first")),
    _scan(K.CUMSUM, "the cumulative sum along axis", "tp.cumsum", "0",
          Note("inf + -inf is NaN from there on", ("inf-nan",))),
    _scan(K.CUMPROD, "the cumulative product along axis", "tp.cumprod", "1",
          Note("inf * 0 is NaN from there on; zeros are exact", ("inf-nan", "zero"))),
]  # fmt: skip


LINALG = [
    KernelEntry(
        name=K.BATCH_MAT_MUL, family="linalg", summary="the matrix product over the last two axes",
        ops=("tp.matmul (and @)",),
        inputs=(Input("a", NUMERIC), Input("b", NUMERIC)),
        attrs=(Attr("transpose_a", "bool", "use a with its last two axes swapped"),
               Attr("transpose_b", "bool", "use b with its last two axes swapped")),
        outputs=(Output("like:a", doc="broadcast batch axes + (m, n)"),),
        dtypes="a and b have one numeric dtype (the op promotes them and refuses bool); y has it",
        gradient="yes", grad_inputs=("a", "b"),
        notes=(Note("a and b have rank >= 2 (the op turns vectors into matrices and back); their batch axes "
                    "broadcast (NumPy's matmul)", ("vector-matrix", "broadcast-batch", "batched")),
               Note("an empty inner dimension gives zeros; inf * 0 is NaN", ("empty-inner-is-zero",
                                                                              "inf-times-zero")),
               Note("integers keep their dtype", ("int32", "int64"))),
    ),
    KernelEntry(
        name=K.EINSUM, family="linalg", summary="Einstein summation over labelled axes", ops=("tp.einsum",),
        inputs=(Input("tensors", NUMERIC, is_list=True, doc="one or more operands of one dtype"),),
        attrs=(Attr("equation", "str", "explicit and checked against the shapes by the op: 'ab,bc->ac', one "
                    "term per operand, no spaces, '...' spelled out as letters, the output given", form="equation"),),
        outputs=(Output("like:tensors", doc="one axis per output label"),),
        dtypes="every operand has one numeric dtype (the op promotes them and refuses bool); y has it",
        gradient="yes", grad_inputs=("tensors",),
        notes=(Note("a label repeated within a term takes the diagonal; a label absent from the output is summed",
                    ("trace", "diagonal", "sum-axis")),
               Note("size-1 axes broadcast against the same label elsewhere", ("size-one-broadcasts",)),
               Note("any number of operands", ("three-operands",)),
               Note("an empty contraction gives zeros; inf * 0 is NaN", ("empty-contraction-is-zero",
                                                                          "inf-times-zero"))),
    ),
]  # fmt: skip


def _shape_entry(
    name: str,
    summary: str,
    op: str,
    attrs: tuple[Attr, ...],
    *notes: Note,
    inputs: tuple[Input, ...] | None = None,
    out: tuple[Output, ...] | None = None,
    rule: str = "x is any dtype; y has x's dtype",
    gradient: str = "yes",
    grad_inputs: tuple[str, ...] | None = None,
    outputs_per: str | None = None,
) -> KernelEntry:
    inputs = _x(ALL) if inputs is None else inputs
    if grad_inputs is None:
        grad_inputs = tuple(i.name for i in inputs) if gradient != "none" else ()
    return KernelEntry(
        name=name,
        family="shape",
        summary=summary,
        ops=(op,),
        inputs=inputs,
        attrs=attrs,
        outputs=(Output("like:x"),) if out is None else out,
        dtypes=rule,
        gradient=gradient,
        grad_inputs=grad_inputs,
        notes=notes,
        outputs_per=outputs_per,
    )


_SHAPE_ATTR = Attr("shape", "tuple[int, ...]", "the result's shape: non-negative ints, -1 resolved by the op",
                   form="nonnegative")  # fmt: skip
_INDICES = Input("indices", INDEX, doc="int32 or int64")

SHAPE = [
    _shape_entry(K.RESHAPE, "x's elements in a new shape (row-major)", "tp.reshape, tp.squeeze, tp.expand_dims",
                 (_SHAPE_ATTR,), Note("the sizes agree (the op checks); 0-d to and from", ("to-scalar", "from-scalar",
                                                                                           "empty"))),
    _shape_entry(K.TRANSPOSE, "x with its axes permuted: y.shape[i] = x.shape[perm[i]]", "tp.transpose (and .T)",
                 (Attr("perm", "tuple[int, ...]", "a permutation of range(rank), non-negative", form="perm"),),
                 Note("never the identity permutation (the op returns x itself then)", ())),
    _shape_entry(K.BROADCAST_TO, "x broadcast to shape (NumPy's rules)", "tp.broadcast_to",
                 (Attr("shape", "tuple[int, ...]", "the target shape; x broadcasts to it (the op checks)",
                       form="nonnegative"),),
                 Note("the result may be a read-only view: storage is immutable", ("float32", "scalar"))),
    _shape_entry(K.CONCAT, "the tensors joined along an existing axis", "tp.concat",
                 (Attr("axis", "int", "non-negative, < rank", form="axis"),),
                 Note("tensors have one dtype (the op promotes them) and one rank; empty parts are allowed",
                      ("promotes-int64", "with-empty", "all-empty")),
                 Note("a list of one tensor is allowed", ("single",)),
                 inputs=(Input("tensors", ALL, is_list=True),), out=(Output("like:tensors"),),
                 rule="every tensor has one dtype, any; y has it"),
    _shape_entry(K.PACK, "the tensors stacked along a new axis", "tp.stack",
                 (Attr("axis", "int", "non-negative, <= rank of the tensors (the new axis)", form="new-axis"),),
                 Note("tensors have one shape and one dtype (the op checks and promotes)", ("mismatch", "promotes")),
                 inputs=(Input("tensors", ALL, is_list=True),), out=(Output("like:tensors"),),
                 rule="every tensor has one dtype, any; y has it"),
    _shape_entry(K.UNPACK, "value split along axis into its slices, that axis removed", "tp.unstack",
                 (Attr("axis", "int", "non-negative, < rank", form="axis"),
                  Attr("num", "int", "the size of axis: the number of outputs", form="nonnegative")),
                 Note("returns a tuple of num outputs, also for num = 1 and num = 0", ("none", "to-scalars")),
                 inputs=(Input("value", ALL),), out=(Output("like:value"),), outputs_per="num",
                 rule="value is any dtype; each output has its dtype"),
    _shape_entry(K.SLICE, "the block of x at begin with size", "tp.slice",
                 (Attr("begin", "tuple[int, ...]", "one non-negative start per axis", form="nonnegative"),
                  Attr("size", "tuple[int, ...]", "one non-negative size per axis, -1 resolved by the op",
                       form="nonnegative")),
                 Note("begin + size fits in x (the op checks); empty results are fine", ("empty-result",))),
    _shape_entry(K.STRIDED_SLICE, "x[begin:end:strides] per entry, with TensorFlow's masks", "tp.strided_slice "
                 "(and x[...] with slices, ints, None and ...)",
                 (Attr("begin", "tuple[int, ...]", "per entry: the first index, clamped into range, non-negative",
                       form="nonnegative"),
                  Attr("end", "tuple[int, ...]", "per entry: the end, clamped into range, non-negative (see end_mask)",
                       form="nonnegative"),
                  Attr("strides", "tuple[int, ...]", "per entry: a non-zero step"),
                  Attr("begin_mask", "int", "always 0 (resolved by the op)", form="zero"),
                  Attr("end_mask", "int", "bit i: entry i has a negative stride running through index 0 (its end "
                       "is then 0, read as 'past the start')", form="mask"),
                  Attr("ellipsis_mask", "int", "always 0 (resolved by the op)", form="zero"),
                  Attr("new_axis_mask", "int", "bit i: entry i inserts an axis of size 1 (its begin, end, stride "
                       "are 0, 1, 1)", form="mask"),
                  Attr("shrink_axis_mask", "int", "bit i: entry i takes the single index begin[i] and drops the axis",
                       form="mask")),
                 Note("the attrs are canonical (slice_spec in tensorplug.ops._indexing): one entry per axis of x plus "
                      "one per new axis, in order; negative indices and out-of-range bounds already resolved",
                      ("negative-indices", "clamped", "ellipsis", "new-axis")),
                 Note("a negative stride runs backwards, through index 0 when its end_mask bit is set",
                      ("negative-strides", "reverse-through-zero", "masked-reverse")),
                 Note("an empty selection gives an empty result", ("empty-result",))),
    _shape_entry(K.PAD_V2, "x padded with constant_value", "tp.pad",
                 (Attr("paddings", "tuple[tuple[int, int], ...]", "one non-negative (before, after) pair per axis "
                       "(() for a 0-d x)", form="paddings"),
                  Attr("constant_value", "bool | int | float", "the fill, of x's kind (the op converts it)")),
                 Note("NaN is a valid fill", ("nan",))),
    _shape_entry(K.MIRROR_PAD, "x padded with its mirror image", "tp.mirror_pad",
                 (Attr("paddings", "tuple[tuple[int, int], ...]", "as PadV2; no larger than the axis allows (the op "
                       "checks)", form="paddings"),
                  Attr("mode", "str", "'reflect' (the edge element is not repeated) or 'symmetric' (it is)",
                       form="mode")),
                 Note("reflect of [1, 2, 3] by (2, 1) is [3, 2, 1, 2, 3, 2]", ("reflect", "symmetric"))),
    _shape_entry(K.TILE, "x repeated reps[i] times along each axis", "tp.tile",
                 (Attr("reps", "tuple[int, ...]", "one non-negative count per axis", form="nonnegative"),),
                 Note("a count of 0 gives an empty axis", ("zero-reps",))),
    _shape_entry(K.REVERSE, "x with its elements reversed along dims", "tp.reverse",
                 (Attr("dims", "tuple[int, ...]", "sorted, distinct, non-negative axes (None resolved to all)",
                       form="axes"),),
                 Note("dims may be ()", ("scalar",))),
    _shape_entry(K.GATHER_V2, "the slices of x at indices along axis", "tp.gather",
                 (Attr("axis", "int", "non-negative, < rank of x", form="axis"),
                  Attr("batch_dims", "int", "the leading axes of x and indices gathered pairwise; non-negative, "
                       "<= axis", form="nonnegative")),
                 Note("y.shape = x.shape[:axis] + indices.shape[batch_dims:] + x.shape[axis + 1:]",
                      ("axis1-2d-indices", "batch-dims")),
                 Note("an index outside [0, x.shape[axis]) (negative ones included) raises an error in the kernel "
                      "(never wraps, never clamps)", ("out-of-range", "negative-index")),
                 Note("empty indices give an empty result", ("empty-indices",)),
                 inputs=(Input("x", ALL), _INDICES),
                 rule="x is any dtype, indices int32 or int64; y has x's dtype", grad_inputs=("x",)),
    _shape_entry(K.GATHER_ND, "the slices of params at the index tuples in the last axis of indices", "tp.gather_nd",
                 (), Note("y.shape = indices.shape[:-1] + params.shape[indices.shape[-1]:]; an index depth of 0 takes "
                          "all of params", ("slices", "depth-0")),
                 Note("an out-of-range index raises an error in the kernel", ("out-of-range",)),
                 inputs=(Input("params", ALL), _INDICES), out=(Output("like:params"),),
                 rule="params is any dtype, indices int32 or int64; y has params' dtype", grad_inputs=("params",)),
    _shape_entry(K.SCATTER_ND, "zeros of shape with updates added at the index tuples in indices", "tp.scatter_nd",
                 (_SHAPE_ATTR,),
                 Note("duplicate indices add up", ("float32-duplicates",)),
                 Note("an out-of-range index raises an error in the kernel", ("out-of-range",)),
                 Note("empty updates give zeros", ("empty-updates",)),
                 inputs=(_INDICES, Input("updates", NUMERIC)), out=(Output("like:updates"),),
                 rule="indices int32 or int64, updates numeric (the op refuses bool); y has updates' dtype",
                 grad_inputs=("updates",)),
    _shape_entry(K.UNSORTED_SEGMENT_SUM, "the sums of the slices of x that share a segment id",
                 "tp.unsorted_segment_sum",
                 (Attr("num_segments", "int", "the number of segments (the size of axis 0 of y)",
                       form="nonnegative"),),
                 Note("ids outside [0, num_segments) are dropped, not an error", ("dropped-ids",)),
                 Note("segment_ids has the shape of the leading axes of x; y.shape = (num_segments,) + "
                      "x.shape[segment_ids.ndim:]", ("2d-ids",)),
                 Note("segments no id names are zero", ("empty", "no-segments")),
                 inputs=(Input("x", NUMERIC), Input("segment_ids", INDEX)),
                 rule="x is numeric (the op refuses bool), segment_ids int32 or int64; y has x's dtype",
                 grad_inputs=("x",)),
    _shape_entry(K.SPLIT_V, "x split along axis into parts of size_splits", "tp.split",
                 (Attr("size_splits", "tuple[int, ...]", "the size of each part, non-negative, adding up to the axis "
                       "(-1 resolved by the op)", form="nonnegative"),
                  Attr("axis", "int", "non-negative, < rank", form="axis")),
                 Note("returns a tuple with one output per entry of size_splits, also for one part; empty parts are "
                      "allowed", ("int64-one", "empty-part")),
                 out=(Output("like:x"),), outputs_per="size_splits",
                 rule="x is any dtype; each output has its dtype"),
    _shape_entry(K.SELECT, "t where condition, else e", "tp.where",
                 (), Note("condition, t and e broadcast together (the op checks)", ("broadcast", "where-broadcast")),
                 Note("NaN is selected like any value", ("nan",)),
                 inputs=(Input("condition", BOOL), Input("t", ALL), Input("e", ALL)), out=(Output("like:t"),),
                 rule="condition is bool; t and e have one dtype (the op promotes them); y has it",
                 grad_inputs=("t", "e")),
    _shape_entry(K.ONE_HOT, "a new last axis of size depth: on_value at each index, off_value elsewhere",
                 "tp.one_hot",
                 (Attr("depth", "int", "the size of the new axis", form="nonnegative"),
                  Attr("on_value", "bool | int | float", "the value at the index, of dtype's kind"),
                  Attr("off_value", "bool | int | float", "the value elsewhere, of dtype's kind"),
                  Attr("dtype", "str", "the result's dtype", form="dtype")),
                 Note("an index outside [0, depth), negative included, gives a row of off_value (no error)",
                      ("int32",)),
                 Note("depth 0 gives an empty last axis", ("depth-0",)),
                 inputs=(_INDICES,), out=(Output("attr:dtype"),),
                 rule="indices int32 or int64; y has the dtype attr", gradient="none"),
    _shape_entry(K.CAST, "x converted to dtype", "tp.cast",
                 (Attr("dtype", "str", "the target dtype, never x's own (the op returns x then)", form="dtype"),),
                 Note("float to int truncates toward zero; to bool is x != 0 (NaN is True); bool to numbers is 0 / 1",
                      ("float-to-int-truncates", "int-to-bool", "float-to-bool", "bool-to-float")),
                 Note("float64 to float32 keeps NaN and ±inf", ("float64-to-float32",)),
                 out=(Output("attr:dtype"),), rule="x is any dtype; y has the dtype attr",
                 grad_inputs=("x",)),
    _shape_entry(K.IDENTITY, "a tensor with x's values", "tp.identity",
                 (), Note("may return x's own storage (storage is immutable)", ("float32", "nan"))),
    _shape_entry(K.ZEROS_LIKE, "zeros of x's shape and dtype", "tp.zeros_like", (),
                 Note("zeros also where x is NaN or inf; False for bool", ("nan", "bool")), gradient="zero"),
    _shape_entry(K.ONES_LIKE, "ones of x's shape and dtype", "tp.ones_like", (),
                 Note("True for bool", ("bool",)), gradient="zero"),
    _shape_entry(K.FILL, "a tensor of shape with every element value", "tp.fill, tp.full, tp.zeros, tp.ones",
                 (_SHAPE_ATTR, Attr("value", "bool | int | float", "of dtype's kind (the op converts it)"),
                  Attr("dtype", "str", "the result's dtype", form="dtype")),
                 Note("value may be NaN; a 0 in shape gives an empty tensor", ("nan", "empty")),
                 inputs=(), out=(Output("attr:dtype"),), rule="no inputs; y has the dtype attr", gradient="none"),
    _shape_entry(K.RANGE, "start + i * step for i = 0, 1, ... while short of stop", "tp.range, tp.arange, tp.linspace",
                 (Attr("start", "int | float", "finite; an int for integer dtypes"),
                  Attr("stop", "int | float", "finite; not included"),
                  Attr("step", "int | float", "finite and non-zero"),
                  Attr("dtype", "str", "float32, float64, int32 or int64", form="dtype")),
                 Note("a step pointing away from stop gives an empty tensor", ("empty-wrong-direction",
                                                                                "empty-same")),
                 Note("float dtypes compute start + i * step in float64 and round once", ("float-step", "float64")),
                 inputs=(), out=(Output("attr:dtype"),), rule="no inputs; y has the dtype attr", gradient="none"),
    _shape_entry(K.TOP_K, "the k largest values along the last axis and their indices, largest first", "tp.top_k",
                 (Attr("k", "int", "0 <= k <= the size of the last axis (the op checks)", form="nonnegative"),
                  Attr("sorted", "bool", "False lets the kernel return the k values in any order")),
                 Note("ties go to the lower index first", ("float32-ties", "int32-rows")),
                 Note("NaN ranks above every number, inf next", ("nan-inf",)),
                 Note("k = 0 and empty rows give empty outputs", ("k-0", "empty")),
                 inputs=_x(NUMERIC),
                 out=(Output("like:x", name="values"), Output("int32", name="indices")),
                 rule="x is numeric (the op refuses bool); values have x's dtype, indices are int32",
                 grad_inputs=("x",)),
]  # fmt: skip


_STRIDES = Attr("strides", "tuple[int, int]", "(height, width), positive", form="positive-pair")
_DILATIONS = Attr("dilations", "tuple[int, int]", "(height, width), positive", form="positive-pair")
_PAD = Attr("pad", "tuple[tuple[int, int], tuple[int, int]]", "explicit ((top, bottom), (left, right)) pads: the op "
            "resolves 'valid', 'same' (the extra pixel at the end, as TensorFlow), an int and TensorFlow.js's "
            "4-pair form", form="pads")  # fmt: skip
_WINDOW = Attr("filter_size", "tuple[int, int]", "the window (height, width), positive", form="positive-pair")
_NHWC = "NHWC: [batch, height, width, channels]"

NN = [
    KernelEntry(
        name=K.SOFTMAX, family="nn", summary="exp(logits) normalised to sum to 1 along dim", ops=("tp.softmax",),
        inputs=(Input("logits", FLOAT),), attrs=(Attr("dim", "int", "one axis, non-negative", form="axis"),),
        outputs=(Output("like:logits", doc="the shape of logits"),),
        dtypes="logits are float32 or float64 (the op refuses other dtypes); y has their dtype",
        gradient="yes", grad_inputs=("logits",),
        notes=(Note("stable for large logits (shift by the maximum first)", ("large-is-stable",)),
               Note("a -inf logit gets 0; a NaN makes its row NaN", ("minus-inf", "nan")),
               Note("empty logits give an empty result", ("empty",))),
    ),
    KernelEntry(
        name=K.CONV2D, family="nn", summary="2-D cross-correlation of x with filter (no flip, as TensorFlow)",
        ops=("tp.conv2d",),
        inputs=(Input("x", FLOAT, doc=_NHWC), Input("filter", FLOAT, doc="[fh, fw, in, out]")),
        attrs=(_STRIDES, _PAD, _DILATIONS, Attr("data_format", "str", "always 'NHWC'", form="nhwc")),
        outputs=(Output("like:x", doc="[batch, out_h, out_w, out], out_h = (h + top + bottom - ((fh - 1) * "
                        "dilation + 1)) // stride + 1"),),
        dtypes="x and filter are one float dtype (the op promotes them and refuses integers); y has it",
        gradient="yes", grad_inputs=("x", "filter"),
        notes=(Note("x is always 4-D (the op adds and removes a batch of one for 3-D inputs)", ("unbatched-same",)),
               Note("'same' padding puts the odd pixel at the end", ("same-stride2",)),
               Note("dilations space the filter taps", ("explicit-dilated",)),
               Note("an empty batch or no output channels give an empty result", ("empty-batch",
                                                                                 "no-out-channels"))),
    ),
    KernelEntry(
        name=K.CONV2D_BACKPROP_INPUT, family="nn", summary="the gradient of Conv2D for its input (conv2d_transpose)",
        ops=("tp.conv2d_transpose", "the gradient of tp.conv2d"),
        inputs=(Input("dy", FLOAT, doc="[batch, out_h, out_w, out]"), Input("filter", FLOAT, doc="[fh, fw, in, out]")),
        attrs=(Attr("input_shape", "tuple[int, ...]", "the 4-D NHWC shape of the result", form="nonnegative"),
               _STRIDES, _PAD, _DILATIONS),
        outputs=(Output("like:dy", doc="input_shape"),),
        dtypes="dy and filter are one float dtype; y has it", gradient="yes", grad_inputs=("dy", "filter"),
        notes=(Note("input pixels no window covers get 0", ("transpose-uncovered-edge",)),
               Note("an empty batch gives an empty result", ("empty-batch",))),
    ),
    KernelEntry(
        name=K.CONV2D_BACKPROP_FILTER, family="nn", summary="the gradient of Conv2D for its filter",
        ops=("the gradient of tp.conv2d",),
        inputs=(Input("x", FLOAT, doc=_NHWC), Input("dy", FLOAT, doc="[batch, out_h, out_w, out]")),
        attrs=(Attr("filter_shape", "tuple[int, ...]", "[fh, fw, in, out]: the result's shape", form="nonnegative"),
               _STRIDES, _PAD, _DILATIONS),
        outputs=(Output("like:x", doc="filter_shape"),),
        dtypes="x and dy are one float dtype; y has it", gradient="yes", grad_inputs=("x", "dy"),
        notes=(Note("an empty batch gives zeros", ("empty-batch",)),),
    ),
    KernelEntry(
        name=K.MAX_POOL, family="nn", summary="the maximum of each window", ops=("tp.max_pool",),
        inputs=(Input("x", NUMERIC, doc=_NHWC),), attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:x", doc="[batch, out_h, out_w, channels]"),),
        dtypes="x is numeric (the op refuses bool); y has x's dtype", gradient="yes", grad_inputs=("x",),
        notes=(Note("padding never wins (the NumPy kernel pads with -inf, or the dtype's minimum for integers); pads "
                    "are smaller than the window (the op checks)", ("same-negative", "explicit-pad")),
               Note("NaN propagates", ("nan",)),
               Note("gradient: each window's dy goes to the first maximum (row-major) of the window, through "
                    "MaxPoolGrad", ())),
    ),
    KernelEntry(
        name=K.MAX_POOL_GRAD, family="nn", summary="the gradient of MaxPool: each window's dy to its first maximum",
        ops=("the gradient of tp.max_pool",),
        inputs=(Input("dy", FLOAT), Input("input", FLOAT, doc="MaxPool's x"), Input("output", FLOAT,
                                                                                   doc="MaxPool's y")),
        attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:dy", doc="the shape of input"),),
        dtypes="dy, input and output are one float dtype; y has it", gradient="yes", grad_inputs=("dy",),
        notes=(Note("ties: the first maximum of the window in row-major order takes all of its dy; overlapping "
                    "windows add up", ("tie-goes-to-first", "same-overlapping")),
               Note("gradient: linear in dy; zero for input and output", ("ties-grad-dy",))),
    ),
    KernelEntry(
        name=K.AVG_POOL, family="nn", summary="the mean of each window over its elements inside x",
        ops=("tp.avg_pool",),
        inputs=(Input("x", FLOAT, doc=_NHWC),), attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:x", doc="[batch, out_h, out_w, channels]"),),
        dtypes="x is float32 or float64 (the op casts integers to float32); y has x's dtype",
        gradient="yes", grad_inputs=("x",),
        notes=(Note("padding is not counted: a window's mean is over the elements inside x",
                    ("padding-not-counted", "same")),
               Note("NaN and inf propagate", ("nan-inf",))),
    ),
    KernelEntry(
        name=K.AVG_POOL_GRAD, family="nn", summary="the gradient of AvgPool: each window's dy shared over its "
        "elements inside the input", ops=("the gradient of tp.avg_pool",),
        inputs=(Input("dy", FLOAT), Input("input", FLOAT, doc="AvgPool's x: only its shape matters")),
        attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:dy", doc="the shape of input"),),
        dtypes="dy and input are one float dtype; y has it", gradient="yes", grad_inputs=("dy",),
        notes=(Note("padding not counted, overlapping windows add up", ("hand", "same-overlapping")),
               Note("gradient: linear in dy; zero for input", ())),
    ),
]  # fmt: skip


_SEED = Attr("seed", "int | None", "a non-negative seed: the same seed gives the same values on one backend; None "
             "draws fresh values", form=None)  # fmt: skip

RANDOM = [
    KernelEntry(
        name=K.RANDOM_UNIFORM, family="random", summary="samples from the uniform distribution on [minval, maxval)",
        ops=("tp.random_uniform",), inputs=(),
        attrs=(_SHAPE_ATTR, Attr("minval", "int | float", "finite; an int for integer dtypes"),
               Attr("maxval", "int | float", "finite, >= minval (> for integer dtypes, within the dtype's range)"),
               Attr("dtype", "str", "float32, float64, int32 or int64", form="dtype"), _SEED),
        outputs=(Output("attr:dtype", doc="shape"),), dtypes="no inputs; y has the dtype attr", gradient="none",
        notes=(Note("integer dtypes draw integers in [minval, maxval)", ("int32", "int64")),
               Note("minval == maxval gives that value", ("empty-range",)),
               Note("values differ between backends; the conformance suite checks statistics, not values",
                    ("default", "seeded", "unseeded"))),
    ),
    KernelEntry(
        name=K.RANDOM_NORMAL, family="random", summary="samples from the normal distribution",
        ops=("tp.random_normal",),
        inputs=(),
        attrs=(_SHAPE_ATTR, Attr("mean", "float", "finite"), Attr("stddev", "float", "finite, >= 0"),
               Attr("dtype", "str", "float32 or float64", form="dtype"), _SEED),
        outputs=(Output("attr:dtype", doc="shape"),), dtypes="no inputs; y has the dtype attr (a float)",
        gradient="none",
        notes=(Note("stddev 0 gives mean everywhere", ("zero-stddev",)),
               Note("values differ between backends; the conformance suite checks statistics, not values",
                    ("default", "seeded", "unseeded"))),
    ),
]  # fmt: skip


FAMILIES: dict[str, str] = {
    "unary": "Elementwise unary (input x)",
    "binary": "Elementwise binary, broadcasting (inputs a, b)",
    "reduction": "Reductions and scans (input x)",
    "linalg": "Linear algebra",
    "shape": "Shape, indexing and creation",
    "nn": "Neural network (NHWC)",
    "random": "Random",
}

REFERENCE: dict[str, KernelEntry] = {
    e.name: e for e in sorted([*UNARY, *BINARY, *REDUCTION, *LINALG, *SHAPE, *NN, *RANDOM],
                              key=lambda e: K.CATALOGUE.index(e.name) if e.name in K.CATALOGUE else len(K.CATALOGUE))
}  # fmt: skip
"""Every kernel's entry, keyed by kernel name, in catalogue order."""


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
    them, see ``tensorplug._observe``); ``dtype_of`` and ``shape_of`` are the
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
    for note in entry.notes:
        cited = f" (cases: {', '.join(f'{entry.name}-{c}' for c in note.cases)})" if note.cases else ""
        lines.append(f"- {note.text}{cited}")
    lines.append("")
    return lines


HEADER = """\
# The kernel reference

<!-- Generated by `tensorplug kernels --markdown` from tensorplug/kernel_reference.py; do not edit by hand. -->

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
    for family, title in FAMILIES.items():
        names = ", ".join(f"[{e.name}](#{e.name.lower()})" for e in by_family.get(family, []))
        lines.append(f"- {title}: {names}")
    lines.append("")
    for family, title in FAMILIES.items():
        lines.append(f"## {title}")
        lines.append("")
        for entry in by_family.get(family, []):
            lines.extend(_entry_markdown(entry))
    return "\n".join(lines).rstrip() + "\n"


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
    """``python -m tensorplug.kernel_reference``: print the whole page (or the entries of the kernels named)."""
    names = list(sys.argv[1:] if argv is None else argv)
    try:
        text = "\n".join(entry_text(n) for n in names) if names else markdown()
    except KeyError as exc:
        print(f"tensorplug.kernel_reference: {exc.args[0]}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
