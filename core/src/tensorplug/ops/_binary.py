"""Elementwise binary ops with NumPy broadcasting and dtype promotion (kernel inputs ``a``, ``b``).

Operands are promoted to one dtype by NumPy's table, Python scalars being
weak (``x * 2.0`` keeps a float32 ``x`` float32). Kernels always receive
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


# -- arithmetic -----------------------------------------------------------------


def add(a: Any, b: Any) -> Tensor:
    """a + b, elementwise, broadcasting (on bool tensors: logical or, as NumPy)."""
    a, b = binary_operands("add", a, b)
    return dispatch(K.ADD, {"a": a, "b": b})


def sub(a: Any, b: Any) -> Tensor:
    """a - b, elementwise, broadcasting."""
    a, b = binary_operands("sub", a, b)
    _numeric("sub", a, b)
    return dispatch(K.SUB, {"a": a, "b": b})


def mul(a: Any, b: Any) -> Tensor:
    """a * b, elementwise, broadcasting (on bool tensors: logical and, as NumPy)."""
    a, b = binary_operands("mul", a, b)
    return dispatch(K.MULTIPLY, {"a": a, "b": b})


def div(a: Any, b: Any) -> Tensor:
    """a / b (true division), elementwise; integer operands give float32 (as TensorFlow.js).

    >>> import tensorplug as tp
    >>> tp.div(tp.tensor([1, 3]), 2).tolist()
    [0.5, 1.5]
    """
    a, b = binary_operands("div", a, b)
    if not is_floating(a.dtype):
        a, b = cast(a, DEFAULT_FLOAT), cast(b, DEFAULT_FLOAT)
    return dispatch(K.REAL_DIV, {"a": a, "b": b})


def pow(a: Any, b: Any) -> Tensor:
    """a ** b, elementwise, broadcasting.

    Integer tensors to negative integer powers are an error (cast to float
    first): for a Python int exponent the op says so; for an exponent tensor
    the kernel raises a KernelError.
    """
    exponent = b
    a, b = binary_operands("pow", a, b)
    _numeric("pow", a, b)
    if a.dtype in INT_DTYPES and isinstance(exponent, int) and exponent < 0:
        raise DTypeError(
            f"pow: {describe(a)} to the power {exponent}: integers to negative integer powers are not integers; "
            "cast the base to float first, e.g. tp.pow(tp.cast(x, 'float32'), -1)"
        )
    return dispatch(K.POW, {"a": a, "b": b})


def maximum(a: Any, b: Any) -> Tensor:
    """The larger of a and b, elementwise (NaN if either is NaN)."""
    a, b = binary_operands("maximum", a, b)
    return dispatch(K.MAXIMUM, {"a": a, "b": b})


def minimum(a: Any, b: Any) -> Tensor:
    """The smaller of a and b, elementwise (NaN if either is NaN)."""
    a, b = binary_operands("minimum", a, b)
    return dispatch(K.MINIMUM, {"a": a, "b": b})


def squared_difference(a: Any, b: Any) -> Tensor:
    """(a - b) ** 2, elementwise, broadcasting."""
    a, b = binary_operands("squared_difference", a, b)
    _numeric("squared_difference", a, b)
    return dispatch(K.SQUARED_DIFFERENCE, {"a": a, "b": b})


def atan2(a: Any, b: Any) -> Tensor:
    """The angle of the point (b, a) in radians, in [-pi, pi]; integer operands give float32.

    >>> import tensorplug as tp
    >>> round(tp.atan2(1.0, -1.0).item(), 4)
    2.3562
    """
    a, b = binary_operands("atan2", a, b)
    return dispatch(K.ATAN2, {"a": to_float(a), "b": to_float(b)})


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
    a, b = binary_operands("floor_div", a, b)
    _numeric("floor_div", a, b)
    return dispatch(K.FLOOR_DIV, {"a": a, "b": b})


def mod(a: Any, b: Any) -> Tensor:
    """The remainder of floor division, with the sign of the divisor ``b`` (as Python's % and TensorFlow.js).

    Integer tensors stay integers; x mod 0 is 0 for integers (as NumPy,
    without its warning) and NaN for floats.

    >>> import tensorplug as tp
    >>> tp.mod(tp.tensor([7, -7]), 3).tolist()
    [1, 2]
    """
    a, b = binary_operands("mod", a, b)
    _numeric("mod", a, b)
    return dispatch(K.MOD, {"a": a, "b": b})


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
    a, b = binary_operands("equal", a, b)
    return dispatch(K.EQUAL, {"a": a, "b": b})


def not_equal(a: Any, b: Any) -> Tensor:
    """a != b, elementwise; a bool tensor."""
    a, b = binary_operands("not_equal", a, b)
    return dispatch(K.NOT_EQUAL, {"a": a, "b": b})


def less(a: Any, b: Any) -> Tensor:
    """a < b, elementwise; a bool tensor."""
    a, b = binary_operands("less", a, b)
    return dispatch(K.LESS, {"a": a, "b": b})


def less_equal(a: Any, b: Any) -> Tensor:
    """a <= b, elementwise; a bool tensor."""
    a, b = binary_operands("less_equal", a, b)
    return dispatch(K.LESS_EQUAL, {"a": a, "b": b})


def greater(a: Any, b: Any) -> Tensor:
    """a > b, elementwise; a bool tensor."""
    a, b = binary_operands("greater", a, b)
    return dispatch(K.GREATER, {"a": a, "b": b})


def greater_equal(a: Any, b: Any) -> Tensor:
    """a >= b, elementwise; a bool tensor."""
    a, b = binary_operands("greater_equal", a, b)
    return dispatch(K.GREATER_EQUAL, {"a": a, "b": b})


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
    a, b = _logical_operands("logical_and", a, b)
    return dispatch(K.LOGICAL_AND, {"a": a, "b": b})


def logical_or(a: Any, b: Any) -> Tensor:
    """a or b, elementwise, on bool tensors."""
    a, b = _logical_operands("logical_or", a, b)
    return dispatch(K.LOGICAL_OR, {"a": a, "b": b})


def logical_xor(a: Any, b: Any) -> Tensor:
    """a xor b (exactly one is true), elementwise, on bool tensors."""
    a, b = _logical_operands("logical_xor", a, b)
    return dispatch(K.LOGICAL_XOR, {"a": a, "b": b})


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
