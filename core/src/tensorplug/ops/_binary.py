"""Elementwise binary ops with NumPy broadcasting and dtype promotion (kernel inputs ``a``, ``b``)."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._dtypes import DEFAULT_FLOAT, is_floating
from tensorplug._engine import dispatch
from tensorplug._errors import DTypeError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops._convert import as_tensor, binary_operands, broadcast_shapes, cast

__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "maximum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "where",
]


def _numeric(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype == "bool":
        raise DTypeError(f"{op}: expects numeric tensors, got {describe(a)} and {describe(b)}")


def add(a: Any, b: Any) -> Tensor:
    """a + b, elementwise, broadcasting."""
    a, b = binary_operands("add", a, b)
    return dispatch(K.ADD, {"a": a, "b": b})


def sub(a: Any, b: Any) -> Tensor:
    """a - b, elementwise, broadcasting."""
    a, b = binary_operands("sub", a, b)
    _numeric("sub", a, b)
    return dispatch(K.SUB, {"a": a, "b": b})


def mul(a: Any, b: Any) -> Tensor:
    """a * b, elementwise, broadcasting."""
    a, b = binary_operands("mul", a, b)
    return dispatch(K.MULTIPLY, {"a": a, "b": b})


def div(a: Any, b: Any) -> Tensor:
    """a / b (true division), elementwise; integer operands give float32 (as TensorFlow.js)."""
    a, b = binary_operands("div", a, b)
    if not is_floating(a.dtype):
        a, b = cast(a, DEFAULT_FLOAT), cast(b, DEFAULT_FLOAT)
    return dispatch(K.REAL_DIV, {"a": a, "b": b})


def pow(a: Any, b: Any) -> Tensor:
    """a ** b, elementwise, broadcasting."""
    a, b = binary_operands("pow", a, b)
    _numeric("pow", a, b)
    return dispatch(K.POW, {"a": a, "b": b})


def maximum(a: Any, b: Any) -> Tensor:
    """The larger of a and b, elementwise (NaN if either is NaN)."""
    a, b = binary_operands("maximum", a, b)
    return dispatch(K.MAXIMUM, {"a": a, "b": b})


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
