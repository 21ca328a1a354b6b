"""Elementwise binary ops with NumPy broadcasting and dtype promotion (kernel inputs ``a``, ``b``).

Operands are promoted to one dtype as TensorFlow.js does (an integer tensor
meeting a float tensor takes the float's dtype), Python scalars being weak
(``x * 2.0`` keeps a float32 ``x`` float32). Kernels always receive
operands of one dtype whose shapes broadcast.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorplug import kernel_names as K
from tensorplug._runtime._dtypes import DEFAULT_FLOAT, INT_DTYPES, is_floating
from tensorplug._runtime._engine import dispatch
from tensorplug._runtime._errors import DTypeError, ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import to_float
from tensorplug.ops._checked import Site, binary
from tensorplug.ops._convert import as_tensor, cast
from tensorplug.ops._promote import binary_operands
from tensorplug.ops._shapes import broadcast_shapes

__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "maximum",
    "minimum",
    "squared_difference",
    "atan2",
    "prelu",
    "floor_div",
    "mod",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "add_n",
    "where",
    "multiply",
    "divide",
    "subtract",
    "floor_divide",
]


def _numeric(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype == "bool":
        raise DTypeError(
            f"{op}: expects numeric tensors, got {describe(a)} and {describe(b)}; cast them with tp.cast(x, 'int32')"
        )


def _numeric_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    a, b = binary_operands(op, a, b)
    _numeric(op, a, b)
    return a, b


# The checked calls of the ops below, one per op (see ops._checked)
_ADD = Site("add", K.ADD)
_SUB = Site("sub", K.SUB)
_MUL = Site("mul", K.MULTIPLY)
_DIV = Site("div", K.REAL_DIV)
_POW = Site("pow", K.POW)
_MAXIMUM = Site("maximum", K.MAXIMUM)
_MINIMUM = Site("minimum", K.MINIMUM)
_SQUARED_DIFFERENCE = Site("squared_difference", K.SQUARED_DIFFERENCE)
_ATAN2 = Site("atan2", K.ATAN2)
_FLOOR_DIV = Site("floor_div", K.FLOOR_DIV)
_MOD = Site("mod", K.MOD)
_EQUAL = Site("equal", K.EQUAL, out="bool")
_NOT_EQUAL = Site("not_equal", K.NOT_EQUAL, out="bool")
_LESS = Site("less", K.LESS, out="bool")
_LESS_EQUAL = Site("less_equal", K.LESS_EQUAL, out="bool")
_GREATER = Site("greater", K.GREATER, out="bool")
_GREATER_EQUAL = Site("greater_equal", K.GREATER_EQUAL, out="bool")
_LOGICAL_AND = Site("logical_and", K.LOGICAL_AND, out="bool")
_LOGICAL_OR = Site("logical_or", K.LOGICAL_OR, out="bool")
_LOGICAL_XOR = Site("logical_xor", K.LOGICAL_XOR, out="bool")


# -- arithmetic -----------------------------------------------------------------


def add(a: Any, b: Any) -> Tensor:
    """a + b, elementwise, broadcasting (on bool tensors: logical or, as NumPy)."""
    return binary(_ADD, a, b)


def sub(a: Any, b: Any) -> Tensor:
    """a - b, elementwise, broadcasting."""
    return binary(_SUB, a, b, _numeric_operands)


def mul(a: Any, b: Any) -> Tensor:
    """a * b, elementwise, broadcasting (on bool tensors: logical and, as NumPy)."""
    return binary(_MUL, a, b)


def div(a: Any, b: Any) -> Tensor:
    """a / b (true division), elementwise; integer operands give float32 (as TensorFlow.js).

    >>> import tensorplug as tp
    >>> tp.div(tp.tensor([1, 3]), 2).tolist()
    [0.5, 1.5]
    """
    return binary(_DIV, a, b, _div_operands)


def _div_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    a, b = binary_operands(op, a, b)
    if not is_floating(a.dtype):
        a, b = cast(a, DEFAULT_FLOAT), cast(b, DEFAULT_FLOAT)
    return a, b


def pow(a: Any, b: Any) -> Tensor:
    """a ** b, elementwise, broadcasting.

    Integer tensors to negative integer powers are an error (cast to float
    first): for a Python int exponent the op says so; for an exponent tensor
    the kernel raises a KernelError.
    """
    return binary(_POW, a, b, _pow_operands)


def _pow_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    exponent = b
    a, b = _numeric_operands(op, a, b)
    if a.dtype in INT_DTYPES and isinstance(exponent, int) and exponent < 0:
        raise DTypeError(
            f"pow: {describe(a)} to the power {exponent}: integers to negative integer powers are not integers; "
            "cast the base to float first, e.g. tp.pow(tp.cast(x, 'float32'), -1)"
        )
    return a, b


def maximum(a: Any, b: Any) -> Tensor:
    """The larger of a and b, elementwise (NaN if either is NaN)."""
    return binary(_MAXIMUM, a, b)


def minimum(a: Any, b: Any) -> Tensor:
    """The smaller of a and b, elementwise (NaN if either is NaN)."""
    return binary(_MINIMUM, a, b)


def squared_difference(a: Any, b: Any) -> Tensor:
    """(a - b) ** 2, elementwise, broadcasting."""
    return binary(_SQUARED_DIFFERENCE, a, b, _numeric_operands)


def atan2(a: Any, b: Any) -> Tensor:
    """The angle of the point (b, a) in radians, in [-pi, pi]; integer operands give float32.

    >>> import tensorplug as tp
    >>> round(tp.atan2(1.0, -1.0).item(), 4)
    2.3562
    """
    return binary(_ATAN2, a, b, _float_operands)


def _float_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    a, b = binary_operands(op, a, b)
    return to_float(a), to_float(b)


def prelu(x: Any, alpha: Any) -> Tensor:
    """x where x >= 0, else alpha * x; ``alpha`` (a learned slope, often one per channel) broadcasts with x.

    >>> import tensorplug as tp
    >>> tp.prelu(tp.tensor([-2.0, 3.0]), 0.25).tolist()
    [-0.5, 3.0]
    """
    x, alpha = binary_operands("prelu", x, alpha)
    _numeric("prelu", x, alpha)
    return dispatch(K.PRELU, {"x": x, "alpha": alpha})


def floor_div(a: Any, b: Any) -> Tensor:
    """floor(a / b), elementwise; integer tensors stay integers (as TensorFlow.js's floorDiv).

    Floats are floored after true division, as TensorFlow.js does (so
    ``1.0 // 0.1`` gives 10, where Python gives 9.0); x // 0 is inf, -inf or
    NaN for floats. Integer division by zero gives 0 (as NumPy, without its
    warning, and as TensorFlow.js's int32 result).

    >>> import tensorplug as tp
    >>> tp.floor_div(tp.tensor([7, -7]), 2).tolist()
    [3, -4]
    """
    return binary(_FLOOR_DIV, a, b, _numeric_operands)


def mod(a: Any, b: Any) -> Tensor:
    """The remainder of floor division, with the sign of the divisor ``b`` (as Python's % and TensorFlow.js).

    Integer tensors stay integers; x mod 0 is 0 for integers (as NumPy,
    without its warning) and NaN for floats.

    >>> import tensorplug as tp
    >>> tp.mod(tp.tensor([7, -7]), 3).tolist()
    [1, 2]
    """
    return binary(_MOD, a, b, _numeric_operands)


def add_n(tensors: Sequence[Any]) -> Tensor:
    """The elementwise sum of a list of tensors of one shape and one dtype (no broadcasting).

    >>> import tensorplug as tp
    >>> tp.add_n([tp.tensor([1, 2]), tp.tensor([3, 4]), tp.tensor([5, 6])]).tolist()
    [9, 12]
    """
    if not isinstance(tensors, list | tuple):
        raise DTypeError(f"add_n: expects a list of tensors, got {describe(tensors)}")
    if not tensors:
        raise ShapeError("add_n: expects at least one tensor, got an empty list")
    items = [as_tensor(t) for t in tensors]
    first = items[0]
    if any(t.shape != first.shape for t in items):
        listed = ", ".join(describe(t) for t in items)
        raise ShapeError(f"add_n: every tensor must have the same shape, got {listed}; use tp.add to broadcast")
    if any(t.dtype != first.dtype for t in items):
        listed = ", ".join(describe(t) for t in items)
        raise DTypeError(f"add_n: every tensor must have the same dtype, got {listed}; cast them with tp.cast first")
    return dispatch(K.ADD_N, {"tensors": items})


# -- comparisons: bool results ------------------------------------------------------


def equal(a: Any, b: Any) -> Tensor:
    """a == b, elementwise; a bool tensor."""
    return binary(_EQUAL, a, b)


def not_equal(a: Any, b: Any) -> Tensor:
    """a != b, elementwise; a bool tensor."""
    return binary(_NOT_EQUAL, a, b)


def less(a: Any, b: Any) -> Tensor:
    """a < b, elementwise; a bool tensor."""
    return binary(_LESS, a, b)


def less_equal(a: Any, b: Any) -> Tensor:
    """a <= b, elementwise; a bool tensor."""
    return binary(_LESS_EQUAL, a, b)


def greater(a: Any, b: Any) -> Tensor:
    """a > b, elementwise; a bool tensor."""
    return binary(_GREATER, a, b)


def greater_equal(a: Any, b: Any) -> Tensor:
    """a >= b, elementwise; a bool tensor."""
    return binary(_GREATER_EQUAL, a, b)


# -- logical: bool operands only -------------------------------------------------------


def _logical_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    a, b = as_tensor(a), as_tensor(b)
    if a.dtype != "bool" or b.dtype != "bool":
        raise DTypeError(
            f"{op}: expects bool tensors, got {describe(a)} and {describe(b)}; "
            "compare first (tp.greater(x, 0)) or cast with tp.cast(x, 'bool')"
        )
    return binary_operands(op, a, b)


def logical_and(a: Any, b: Any) -> Tensor:
    """a and b, elementwise, on bool tensors."""
    return binary(_LOGICAL_AND, a, b, _logical_operands)


def logical_or(a: Any, b: Any) -> Tensor:
    """a or b, elementwise, on bool tensors."""
    return binary(_LOGICAL_OR, a, b, _logical_operands)


def logical_xor(a: Any, b: Any) -> Tensor:
    """a xor b (exactly one is true), elementwise, on bool tensors."""
    return binary(_LOGICAL_XOR, a, b, _logical_operands)


# -- selection --------------------------------------------------------------------


def where(condition: Any, x: Any, y: Any) -> Tensor:
    """``x`` where ``condition`` is true, else ``y``; the three broadcast together.

    >>> import tensorplug as tp
    >>> tp.where(tp.tensor([True, False]), 1.0, 2.0).tolist()
    [1.0, 2.0]
    """
    condition = as_tensor(condition)
    if condition.dtype != "bool":
        raise DTypeError(f"where: condition must be a bool tensor, got {describe(condition)}")
    t, e = binary_operands("where", x, y)
    broadcast_shapes("where", condition.shape, t.shape, e.shape)
    return dispatch(K.SELECT, {"condition": condition, "t": t, "e": e})


# -- numpy-style aliases ----------------------------------------------------------

multiply = mul
divide = div
subtract = sub
floor_divide = floor_div
