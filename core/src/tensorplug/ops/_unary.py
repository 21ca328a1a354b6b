"""Elementwise unary ops (kernel input ``x``).

Dtypes follow TensorFlow.js: ops that only compare, negate, clip or round keep
the numeric dtype of ``x`` (bool tensors are refused); transcendental ops and
leaky_relu compute in floating point, so integer and bool tensors become
float32 first; predicates (isnan, isinf, isfinite, logical_not) return bool.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import dispatch
from tensorplug._runtime._errors import DTypeError, InvalidArgumentError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import to_float
from tensorplug.ops._convert import as_tensor

__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "ceil",
    "clip_by_value",
    "cos",
    "cosh",
    "elu",
    "erf",
    "exp",
    "expm1",
    "floor",
    "identity",
    "isfinite",
    "isinf",
    "isnan",
    "leaky_relu",
    "log",
    "log1p",
    "logical_not",
    "neg",
    "reciprocal",
    "relu",
    "relu6",
    "round",
    "rsqrt",
    "selu",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softplus",
    "softsign",
    "sqrt",
    "square",
    "step",
    "tan",
    "tanh",
]


def _numeric(op: str, x: Any) -> Tensor:
    t = as_tensor(x)
    if t.dtype == "bool":
        raise DTypeError(f"{op}: expects a numeric tensor, got {describe(t)}; cast it with tp.cast(x, 'int32')")
    return t


def _floating(x: Any) -> Tensor:
    return to_float(as_tensor(x))


def _real(op: str, name: str, value: Any) -> float:
    """A scalar attribute (a Python or numpy real number, not a bool or a tensor) as a float."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise DTypeError(f"{op}: {name} must be a real number, got {value!r} ({type(value).__name__})")
    return float(value)


def _integral(op: str, name: str, value: float, x: Tensor) -> int:
    """``value`` for an integer tensor ``x``: it must be a whole number (infinities clamp to the dtype's range)."""
    if not (value.is_integer() or math.isinf(value)):
        raise DTypeError(
            f"{op}: {name}={value!r} is not a whole number, so it has no value of x's dtype ({describe(x)}); "
            "cast x to a float dtype first, e.g. tp.cast(x, 'float32')"
        )
    info = np.iinfo(x.dtype)
    return int(min(max(value, info.min), info.max))


# -- numeric ops that keep the dtype of x -----------------------------------------


def neg(x: Any) -> Tensor:
    """-x, elementwise."""
    return dispatch(K.NEG, {"x": _numeric("neg", x)})


def abs(x: Any) -> Tensor:
    """|x|, elementwise."""
    return dispatch(K.ABS, {"x": _numeric("abs", x)})


def square(x: Any) -> Tensor:
    """x * x, elementwise."""
    return dispatch(K.SQUARE, {"x": _numeric("square", x)})


def sign(x: Any) -> Tensor:
    """-1, 0 or 1 by the sign of x, elementwise; 0 for NaN (as TensorFlow.js)."""
    return dispatch(K.SIGN, {"x": _numeric("sign", x)})


def relu(x: Any) -> Tensor:
    """max(x, 0), elementwise."""
    return dispatch(K.RELU, {"x": _numeric("relu", x)})


def relu6(x: Any) -> Tensor:
    """min(max(x, 0), 6), elementwise."""
    return dispatch(K.RELU6, {"x": _numeric("relu6", x)})


def ceil(x: Any) -> Tensor:
    """The smallest whole number >= x, elementwise (integer tensors are returned as they are, in a new tensor)."""
    return dispatch(K.CEIL, {"x": _numeric("ceil", x)})


def floor(x: Any) -> Tensor:
    """The largest whole number <= x, elementwise."""
    return dispatch(K.FLOOR, {"x": _numeric("floor", x)})


def round(x: Any) -> Tensor:
    """The nearest whole number, halves to even (as TensorFlow.js and NumPy).

    >>> import tensorplug as tp
    >>> tp.round(tp.tensor([0.5, 1.5, 2.5, -0.5])).tolist()
    [0.0, 2.0, 2.0, -0.0]
    """
    return dispatch(K.ROUND, {"x": _numeric("round", x)})


def clip_by_value(x: Any, clip_value_min: float, clip_value_max: float) -> Tensor:
    """x limited to [clip_value_min, clip_value_max], elementwise (NaN stays NaN).

    Integer tensors keep their dtype and need whole-number bounds (or infinities).

    >>> import tensorplug as tp
    >>> tp.clip_by_value(tp.tensor([-2.0, 0.5, 3.0]), -1, 1).tolist()
    [-1.0, 0.5, 1.0]
    """
    t = _numeric("clip_by_value", x)
    lo = _real("clip_by_value", "clip_value_min", clip_value_min)
    hi = _real("clip_by_value", "clip_value_max", clip_value_max)
    if not lo <= hi:
        raise InvalidArgumentError(
            f"clip_by_value: clip_value_min ({lo!r}) must be less than or equal to clip_value_max ({hi!r})"
        )
    attrs: dict[str, Any]
    if _dtypes.is_floating(t.dtype):
        attrs = {"clip_value_min": lo, "clip_value_max": hi}
    else:
        attrs = {
            "clip_value_min": _integral("clip_by_value", "clip_value_min", lo, t),
            "clip_value_max": _integral("clip_by_value", "clip_value_max", hi, t),
        }
    return dispatch(K.CLIP_BY_VALUE, {"x": t}, attrs)


def step(x: Any, alpha: float = 0.0) -> Tensor:
    """1 where x > 0, ``alpha`` elsewhere, NaN where x is NaN (TensorFlow.js's ``step``).

    Integer tensors keep their dtype and need a whole-number ``alpha``.

    >>> import tensorplug as tp
    >>> tp.step(tp.tensor([-1.0, 0.0, 2.0]), alpha=0.5).tolist()
    [0.5, 0.5, 1.0]
    """
    t = _numeric("step", x)
    value = _real("step", "alpha", alpha)
    if _dtypes.is_floating(t.dtype):
        return dispatch(K.STEP, {"x": t}, {"alpha": value})
    return dispatch(K.STEP, {"x": t}, {"alpha": _integral("step", "alpha", value, t)})


# -- floating-point ops: integer and bool tensors become float32 first ----------


def exp(x: Any) -> Tensor:
    """e ** x, elementwise."""
    return dispatch(K.EXP, {"x": _floating(x)})


def expm1(x: Any) -> Tensor:
    """e ** x - 1, elementwise, accurate near 0."""
    return dispatch(K.EXPM1, {"x": _floating(x)})


def log(x: Any) -> Tensor:
    """Natural logarithm, elementwise (-inf at 0, NaN below)."""
    return dispatch(K.LOG, {"x": _floating(x)})


def log1p(x: Any) -> Tensor:
    """log(1 + x), elementwise, accurate near 0 (-inf at -1, NaN below)."""
    return dispatch(K.LOG1P, {"x": _floating(x)})


def sqrt(x: Any) -> Tensor:
    """Square root, elementwise (NaN below 0)."""
    return dispatch(K.SQRT, {"x": _floating(x)})


def rsqrt(x: Any) -> Tensor:
    """1 / sqrt(x), elementwise (inf at 0, NaN below)."""
    return dispatch(K.RSQRT, {"x": _floating(x)})


def reciprocal(x: Any) -> Tensor:
    """1 / x, elementwise (±inf at ±0)."""
    return dispatch(K.RECIPROCAL, {"x": _floating(x)})


def sin(x: Any) -> Tensor:
    """Sine, elementwise (radians)."""
    return dispatch(K.SIN, {"x": _floating(x)})


def cos(x: Any) -> Tensor:
    """Cosine, elementwise (radians)."""
    return dispatch(K.COS, {"x": _floating(x)})


def tan(x: Any) -> Tensor:
    """Tangent, elementwise (radians)."""
    return dispatch(K.TAN, {"x": _floating(x)})


def asin(x: Any) -> Tensor:
    """Inverse sine, elementwise (NaN outside [-1, 1])."""
    return dispatch(K.ASIN, {"x": _floating(x)})


def acos(x: Any) -> Tensor:
    """Inverse cosine, elementwise (NaN outside [-1, 1])."""
    return dispatch(K.ACOS, {"x": _floating(x)})


def atan(x: Any) -> Tensor:
    """Inverse tangent, elementwise, in (-pi/2, pi/2)."""
    return dispatch(K.ATAN, {"x": _floating(x)})


def sinh(x: Any) -> Tensor:
    """Hyperbolic sine, elementwise."""
    return dispatch(K.SINH, {"x": _floating(x)})


def cosh(x: Any) -> Tensor:
    """Hyperbolic cosine, elementwise."""
    return dispatch(K.COSH, {"x": _floating(x)})


def tanh(x: Any) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return dispatch(K.TANH, {"x": _floating(x)})


def asinh(x: Any) -> Tensor:
    """Inverse hyperbolic sine, elementwise."""
    return dispatch(K.ASINH, {"x": _floating(x)})


def acosh(x: Any) -> Tensor:
    """Inverse hyperbolic cosine, elementwise (NaN below 1)."""
    return dispatch(K.ACOSH, {"x": _floating(x)})


def atanh(x: Any) -> Tensor:
    """Inverse hyperbolic tangent, elementwise (±inf at ±1, NaN outside [-1, 1])."""
    return dispatch(K.ATANH, {"x": _floating(x)})


def erf(x: Any) -> Tensor:
    """The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x, elementwise."""
    return dispatch(K.ERF, {"x": _floating(x)})


def sigmoid(x: Any) -> Tensor:
    """1 / (1 + e ** -x), elementwise."""
    return dispatch(K.SIGMOID, {"x": _floating(x)})


def softplus(x: Any) -> Tensor:
    """log(1 + e ** x), elementwise, without overflow for large |x|."""
    return dispatch(K.SOFTPLUS, {"x": _floating(x)})


def softsign(x: Any) -> Tensor:
    """x / (1 + |x|), elementwise: a smooth sign in (-1, 1), as TensorFlow's ``tf.nn.softsign``."""
    return dispatch(K.SOFTSIGN, {"x": _floating(x)})


def elu(x: Any) -> Tensor:
    """x where x > 0, else e ** x - 1, elementwise."""
    return dispatch(K.ELU, {"x": _floating(x)})


def selu(x: Any) -> Tensor:
    """Scaled elu: scale * x where x > 0, else scale * alpha * (e ** x - 1), with TensorFlow.js's constants."""
    return dispatch(K.SELU, {"x": _floating(x)})


def leaky_relu(x: Any, alpha: float = 0.2) -> Tensor:
    """x where x >= 0, else alpha * x, elementwise; integer tensors give float32 (as TensorFlow.js).

    >>> import tensorplug as tp
    >>> tp.leaky_relu(tp.tensor([-2.0, 3.0]), alpha=0.5).tolist()
    [-1.0, 3.0]
    """
    value = _real("leaky_relu", "alpha", alpha)
    return dispatch(K.LEAKY_RELU, {"x": _floating(x)}, {"alpha": value})


# -- predicates: bool results -----------------------------------------------------


def isnan(x: Any) -> Tensor:
    """True where x is NaN (never for integer and bool tensors)."""
    return dispatch(K.IS_NAN, {"x": as_tensor(x)})


def isinf(x: Any) -> Tensor:
    """True where x is +inf or -inf (never for integer and bool tensors)."""
    return dispatch(K.IS_INF, {"x": as_tensor(x)})


def isfinite(x: Any) -> Tensor:
    """True where x is neither NaN nor ±inf (always for integer and bool tensors)."""
    return dispatch(K.IS_FINITE, {"x": as_tensor(x)})


def logical_not(x: Any) -> Tensor:
    """not x, elementwise, for a bool tensor."""
    t = as_tensor(x)
    if t.dtype != "bool":
        raise DTypeError(f"logical_not: expects a bool tensor, got {describe(t)}; make one with a comparison")
    return dispatch(K.LOGICAL_NOT, {"x": t})


def identity(x: Any) -> Tensor:
    """A new tensor with the same values (through the Identity kernel)."""
    return dispatch(K.IDENTITY, {"x": as_tensor(x)})
