"""Elementwise unary ops (kernel input ``x``)."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._engine import dispatch
from tensorplug._errors import DTypeError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops._convert import as_tensor, to_float

__all__ = ["neg", "square", "relu", "exp", "log", "sqrt", "tanh", "sigmoid", "identity"]


def _numeric(op: str, x: Any) -> Tensor:
    t = as_tensor(x)
    if t.dtype == "bool":
        raise DTypeError(f"{op}: expects a numeric tensor, got {describe(t)}")
    return t


def neg(x: Any) -> Tensor:
    """-x, elementwise."""
    return dispatch(K.NEG, {"x": _numeric("neg", x)})


def square(x: Any) -> Tensor:
    """x * x, elementwise."""
    return dispatch(K.SQUARE, {"x": _numeric("square", x)})


def relu(x: Any) -> Tensor:
    """max(x, 0), elementwise."""
    return dispatch(K.RELU, {"x": _numeric("relu", x)})


# Transcendental ops compute in floating point: integer inputs become float32 first.


def exp(x: Any) -> Tensor:
    """e ** x, elementwise."""
    return dispatch(K.EXP, {"x": to_float(as_tensor(x))})


def log(x: Any) -> Tensor:
    """Natural logarithm, elementwise (-inf at 0, NaN below)."""
    return dispatch(K.LOG, {"x": to_float(as_tensor(x))})


def sqrt(x: Any) -> Tensor:
    """Square root, elementwise (NaN below 0)."""
    return dispatch(K.SQRT, {"x": to_float(as_tensor(x))})


def tanh(x: Any) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return dispatch(K.TANH, {"x": to_float(as_tensor(x))})


def sigmoid(x: Any) -> Tensor:
    """1 / (1 + e ** -x), elementwise."""
    return dispatch(K.SIGMOID, {"x": to_float(as_tensor(x))})


def identity(x: Any) -> Tensor:
    """A new tensor with the same values (through the Identity kernel)."""
    return dispatch(K.IDENTITY, {"x": as_tensor(x)})
