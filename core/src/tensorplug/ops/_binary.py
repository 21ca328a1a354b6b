"""Elementwise binary ops with NumPy broadcasting and dtype promotion (kernel inputs ``a``, ``b``)."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._dtypes import DEFAULT_FLOAT, is_floating
from tensorplug._engine import run_kernel
from tensorplug._errors import DTypeError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops._convert import as_tensor, binary_operands, broadcast_shapes, cast


def _numeric(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype == "bool":
        raise DTypeError(f"{op}: expects numeric tensors, got {describe(a)} and {describe(b)}")


def add(a: Any, b: Any) -> Tensor:
    """a + b, elementwise, broadcasting."""
    a, b = binary_operands("add", a, b)
    return run_kernel(K.ADD, {"a": a, "b": b})  # type: ignore[no-any-return]


def sub(a: Any, b: Any) -> Tensor:
    """a - b, elementwise, broadcasting."""
    a, b = binary_operands("sub", a, b)
    _numeric("sub", a, b)
    return run_kernel(K.SUB, {"a": a, "b": b})  # type: ignore[no-any-return]


def mul(a: Any, b: Any) -> Tensor:
    """a * b, elementwise, broadcasting."""
    a, b = binary_operands("mul", a, b)
    return run_kernel(K.MULTIPLY, {"a": a, "b": b})  # type: ignore[no-any-return]


def div(a: Any, b: Any) -> Tensor:
    """a / b (true division), elementwise; integer operands give float32 (as TensorFlow.js)."""
    a, b = binary_operands("div", a, b)
    if not is_floating(a.dtype):
        a, b = cast(a, DEFAULT_FLOAT), cast(b, DEFAULT_FLOAT)
    return run_kernel(K.REAL_DIV, {"a": a, "b": b})  # type: ignore[no-any-return]


def pow(a: Any, b: Any) -> Tensor:  # noqa: A001 - the numpy name
    """a ** b, elementwise, broadcasting."""
    a, b = binary_operands("pow", a, b)
    _numeric("pow", a, b)
    return run_kernel(K.POW, {"a": a, "b": b})  # type: ignore[no-any-return]


def maximum(a: Any, b: Any) -> Tensor:
    """The larger of a and b, elementwise (NaN if either is NaN)."""
    a, b = binary_operands("maximum", a, b)
    return run_kernel(K.MAXIMUM, {"a": a, "b": b})  # type: ignore[no-any-return]


def equal(a: Any, b: Any) -> Tensor:
    """a == b, elementwise; a bool tensor."""
    a, b = binary_operands("equal", a, b)
    return run_kernel(K.EQUAL, {"a": a, "b": b})  # type: ignore[no-any-return]


def not_equal(a: Any, b: Any) -> Tensor:
    """a != b, elementwise; a bool tensor."""
    a, b = binary_operands("not_equal", a, b)
    return run_kernel(K.NOT_EQUAL, {"a": a, "b": b})  # type: ignore[no-any-return]


def less(a: Any, b: Any) -> Tensor:
    """a < b, elementwise; a bool tensor."""
    a, b = binary_operands("less", a, b)
    return run_kernel(K.LESS, {"a": a, "b": b})  # type: ignore[no-any-return]


def less_equal(a: Any, b: Any) -> Tensor:
    """a <= b, elementwise; a bool tensor."""
    a, b = binary_operands("less_equal", a, b)
    return run_kernel(K.LESS_EQUAL, {"a": a, "b": b})  # type: ignore[no-any-return]


def greater(a: Any, b: Any) -> Tensor:
    """a > b, elementwise; a bool tensor."""
    a, b = binary_operands("greater", a, b)
    return run_kernel(K.GREATER, {"a": a, "b": b})  # type: ignore[no-any-return]


def greater_equal(a: Any, b: Any) -> Tensor:
    """a >= b, elementwise; a bool tensor."""
    a, b = binary_operands("greater_equal", a, b)
    return run_kernel(K.GREATER_EQUAL, {"a": a, "b": b})  # type: ignore[no-any-return]


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
    return run_kernel(K.SELECT, {"condition": condition, "t": t, "e": e})  # type: ignore[no-any-return]
