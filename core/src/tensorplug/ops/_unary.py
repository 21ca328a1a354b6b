"""Elementwise unary ops (kernel input ``x``)."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._engine import run_kernel
from tensorplug._errors import DTypeError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops._convert import as_tensor, to_float


def _numeric(op: str, x: Any) -> Tensor:
    x = as_tensor(x)
    if x.dtype == "bool":
        raise DTypeError(f"{op}: expects a numeric tensor, got {describe(x)}")
    return x


def neg(x: Any) -> Tensor:
    """-x, elementwise."""
    return run_kernel(K.NEG, {"x": _numeric("neg", x)})  # type: ignore[no-any-return]


def square(x: Any) -> Tensor:
    """x * x, elementwise."""
    return run_kernel(K.SQUARE, {"x": _numeric("square", x)})  # type: ignore[no-any-return]


def relu(x: Any) -> Tensor:
    """max(x, 0), elementwise."""
    return run_kernel(K.RELU, {"x": _numeric("relu", x)})  # type: ignore[no-any-return]


# Transcendental ops compute in floating point: integer inputs become float32 first.


def exp(x: Any) -> Tensor:
    """e ** x, elementwise."""
    return run_kernel(K.EXP, {"x": to_float(as_tensor(x))})  # type: ignore[no-any-return]


def log(x: Any) -> Tensor:
    """Natural logarithm, elementwise (-inf at 0, NaN below)."""
    return run_kernel(K.LOG, {"x": to_float(as_tensor(x))})  # type: ignore[no-any-return]


def sqrt(x: Any) -> Tensor:
    """Square root, elementwise (NaN below 0)."""
    return run_kernel(K.SQRT, {"x": to_float(as_tensor(x))})  # type: ignore[no-any-return]


def tanh(x: Any) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return run_kernel(K.TANH, {"x": to_float(as_tensor(x))})  # type: ignore[no-any-return]


def sigmoid(x: Any) -> Tensor:
    """1 / (1 + e ** -x), elementwise."""
    return run_kernel(K.SIGMOID, {"x": to_float(as_tensor(x))})  # type: ignore[no-any-return]


def identity(x: Any) -> Tensor:
    """A new tensor with the same values (through the Identity kernel)."""
    return run_kernel(K.IDENTITY, {"x": as_tensor(x)})  # type: ignore[no-any-return]
