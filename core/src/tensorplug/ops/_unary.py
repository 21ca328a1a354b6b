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
from tensorplug.ops._checked import Site, unary
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
    "hard_swish",
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


def _floating(op: str, x: Any) -> Tensor:
    return to_float(as_tensor(x))


def _any(op: str, x: Any) -> Tensor:
    return as_tensor(x)


def _boolean(op: str, x: Any) -> Tensor:
    t = as_tensor(x)
    if t.dtype != "bool":
        raise DTypeError(f"{op}: expects a bool tensor, got {describe(t)}; make one with a comparison")
    return t


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


# The checked calls of the ops below, one per op (see ops._checked)
_NEG = Site("neg", K.NEG)
_ABS = Site("abs", K.ABS)
_SQUARE = Site("square", K.SQUARE)
_SIGN = Site("sign", K.SIGN)
_RELU = Site("relu", K.RELU)
_RELU6 = Site("relu6", K.RELU6)
_CEIL = Site("ceil", K.CEIL)
_FLOOR = Site("floor", K.FLOOR)
_ROUND = Site("round", K.ROUND)
_EXP = Site("exp", K.EXP)
_EXPM1 = Site("expm1", K.EXPM1)
_LOG = Site("log", K.LOG)
_LOG1P = Site("log1p", K.LOG1P)
_SQRT = Site("sqrt", K.SQRT)
_RSQRT = Site("rsqrt", K.RSQRT)
_RECIPROCAL = Site("reciprocal", K.RECIPROCAL)
_SIN = Site("sin", K.SIN)
_COS = Site("cos", K.COS)
_TAN = Site("tan", K.TAN)
_ASIN = Site("asin", K.ASIN)
_ACOS = Site("acos", K.ACOS)
_ATAN = Site("atan", K.ATAN)
_SINH = Site("sinh", K.SINH)
_COSH = Site("cosh", K.COSH)
_TANH = Site("tanh", K.TANH)
_ASINH = Site("asinh", K.ASINH)
_ACOSH = Site("acosh", K.ACOSH)
_ATANH = Site("atanh", K.ATANH)
_ERF = Site("erf", K.ERF)
_SIGMOID = Site("sigmoid", K.SIGMOID)
_SOFTPLUS = Site("softplus", K.SOFTPLUS)
_SOFTSIGN = Site("softsign", K.SOFTSIGN)
_HARD_SWISH = Site("hard_swish", K.HARD_SWISH)
_ELU = Site("elu", K.ELU)
_SELU = Site("selu", K.SELU)
_ISNAN = Site("isnan", K.IS_NAN, out="bool")
_ISINF = Site("isinf", K.IS_INF, out="bool")
_ISFINITE = Site("isfinite", K.IS_FINITE, out="bool")
_LOGICAL_NOT = Site("logical_not", K.LOGICAL_NOT, out="bool")
_IDENTITY = Site("identity", K.IDENTITY)


# -- numeric ops that keep the dtype of x -----------------------------------------


def neg(x: Any) -> Tensor:
    """-x, elementwise."""
    return unary(_NEG, x, _numeric)


def abs(x: Any) -> Tensor:
    """|x|, elementwise."""
    return unary(_ABS, x, _numeric)


def square(x: Any) -> Tensor:
    """x * x, elementwise."""
    return unary(_SQUARE, x, _numeric)


def sign(x: Any) -> Tensor:
    """-1, 0 or 1 by the sign of x, elementwise; 0 for NaN (as TensorFlow.js)."""
    return unary(_SIGN, x, _numeric)


def relu(x: Any) -> Tensor:
    """max(x, 0), elementwise."""
    return unary(_RELU, x, _numeric)


def relu6(x: Any) -> Tensor:
    """min(max(x, 0), 6), elementwise."""
    return unary(_RELU6, x, _numeric)


def ceil(x: Any) -> Tensor:
    """The smallest whole number >= x, elementwise (integer tensors are returned as they are, in a new tensor)."""
    return unary(_CEIL, x, _numeric)


def floor(x: Any) -> Tensor:
    """The largest whole number <= x, elementwise."""
    return unary(_FLOOR, x, _numeric)


def round(x: Any) -> Tensor:
    """The nearest whole number, halves to even (as TensorFlow.js and NumPy).

    >>> import tensorplug as tp
    >>> tp.round(tp.tensor([0.5, 1.5, 2.5, -0.5])).tolist()
    [0.0, 2.0, 2.0, -0.0]
    """
    return unary(_ROUND, x, _numeric)


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
    return unary(_EXP, x, _floating)


def expm1(x: Any) -> Tensor:
    """e ** x - 1, elementwise, accurate near 0."""
    return unary(_EXPM1, x, _floating)


def log(x: Any) -> Tensor:
    """Natural logarithm, elementwise (-inf at 0, NaN below)."""
    return unary(_LOG, x, _floating)


def log1p(x: Any) -> Tensor:
    """log(1 + x), elementwise, accurate near 0 (-inf at -1, NaN below)."""
    return unary(_LOG1P, x, _floating)


def sqrt(x: Any) -> Tensor:
    """Square root, elementwise (NaN below 0)."""
    return unary(_SQRT, x, _floating)


def rsqrt(x: Any) -> Tensor:
    """1 / sqrt(x), elementwise (inf at 0, NaN below)."""
    return unary(_RSQRT, x, _floating)


def reciprocal(x: Any) -> Tensor:
    """1 / x, elementwise (±inf at ±0)."""
    return unary(_RECIPROCAL, x, _floating)


def sin(x: Any) -> Tensor:
    """Sine, elementwise (radians)."""
    return unary(_SIN, x, _floating)


def cos(x: Any) -> Tensor:
    """Cosine, elementwise (radians)."""
    return unary(_COS, x, _floating)


def tan(x: Any) -> Tensor:
    """Tangent, elementwise (radians)."""
    return unary(_TAN, x, _floating)


def asin(x: Any) -> Tensor:
    """Inverse sine, elementwise (NaN outside [-1, 1])."""
    return unary(_ASIN, x, _floating)


def acos(x: Any) -> Tensor:
    """Inverse cosine, elementwise (NaN outside [-1, 1])."""
    return unary(_ACOS, x, _floating)


def atan(x: Any) -> Tensor:
    """Inverse tangent, elementwise, in (-pi/2, pi/2)."""
    return unary(_ATAN, x, _floating)


def sinh(x: Any) -> Tensor:
    """Hyperbolic sine, elementwise."""
    return unary(_SINH, x, _floating)


def cosh(x: Any) -> Tensor:
    """Hyperbolic cosine, elementwise."""
    return unary(_COSH, x, _floating)


def tanh(x: Any) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return unary(_TANH, x, _floating)


def asinh(x: Any) -> Tensor:
    """Inverse hyperbolic sine, elementwise."""
    return unary(_ASINH, x, _floating)


def acosh(x: Any) -> Tensor:
    """Inverse hyperbolic cosine, elementwise (NaN below 1)."""
    return unary(_ACOSH, x, _floating)


def atanh(x: Any) -> Tensor:
    """Inverse hyperbolic tangent, elementwise (±inf at ±1, NaN outside [-1, 1])."""
    return unary(_ATANH, x, _floating)


def erf(x: Any) -> Tensor:
    """The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x, elementwise."""
    return unary(_ERF, x, _floating)


def sigmoid(x: Any) -> Tensor:
    """1 / (1 + e ** -x), elementwise."""
    return unary(_SIGMOID, x, _floating)


def softplus(x: Any) -> Tensor:
    """log(1 + e ** x), elementwise, without overflow for large |x|."""
    return unary(_SOFTPLUS, x, _floating)


def softsign(x: Any) -> Tensor:
    """x / (1 + |x|), elementwise: a smooth sign in (-1, 1), as TensorFlow's ``tf.nn.softsign``."""
    return unary(_SOFTSIGN, x, _floating)


def hard_swish(x: Any) -> Tensor:
    """x * relu6(x + 3) / 6, elementwise: 0 below -3, x above 3 (as Keras's ``hard_swish`` and PyTorch's
    ``hardswish``)."""
    return unary(_HARD_SWISH, x, _floating)


def elu(x: Any) -> Tensor:
    """x where x > 0, else e ** x - 1, elementwise."""
    return unary(_ELU, x, _floating)


def selu(x: Any) -> Tensor:
    """Scaled elu: scale * x where x > 0, else scale * alpha * (e ** x - 1), with TensorFlow.js's constants."""
    return unary(_SELU, x, _floating)


def leaky_relu(x: Any, alpha: float = 0.2) -> Tensor:
    """x where x >= 0, else alpha * x, elementwise; integer tensors give float32 (as TensorFlow.js).

    >>> import tensorplug as tp
    >>> tp.leaky_relu(tp.tensor([-2.0, 3.0]), alpha=0.5).tolist()
    [-1.0, 3.0]
    """
    value = _real("leaky_relu", "alpha", alpha)
    return dispatch(K.LEAKY_RELU, {"x": _floating("leaky_relu", x)}, {"alpha": value})


# -- predicates: bool results -----------------------------------------------------


def isnan(x: Any) -> Tensor:
    """True where x is NaN (never for integer and bool tensors)."""
    return unary(_ISNAN, x, _any)


def isinf(x: Any) -> Tensor:
    """True where x is +inf or -inf (never for integer and bool tensors)."""
    return unary(_ISINF, x, _any)


def isfinite(x: Any) -> Tensor:
    """True where x is neither NaN nor ±inf (always for integer and bool tensors)."""
    return unary(_ISFINITE, x, _any)


def logical_not(x: Any) -> Tensor:
    """not x, elementwise, for a bool tensor."""
    return unary(_LOGICAL_NOT, x, _boolean)


def identity(x: Any) -> Tensor:
    """A new tensor with the same values (through the Identity kernel)."""
    return unary(_IDENTITY, x, _any)
