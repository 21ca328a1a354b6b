"""Elementwise unary kernels (input ``x``; the ops have already chosen its dtype).

Erf is missing: the standard has no special functions, so it runs on the fallback backend.
"""

from __future__ import annotations

from typing import Any

from tensorplug_array_api._factories import is_bool, unary, unary_with

# TensorFlow.js's selu constants (Klambauer et al., 2017).
SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123


def _sign(xp: Any, x: Any) -> Any:
    # The standard's sign(NaN) is NaN; tensorplug's contract (TensorFlow.js's) is 0.
    return xp.astype(x > 0, x.dtype) - xp.astype(x < 0, x.dtype)


# The standard defines isnan, isinf and isfinite for numeric dtypes only; a bool is never NaN or infinite.
def _is_nan(xp: Any, x: Any) -> Any:
    return xp.zeros_like(x, dtype=xp.bool) if is_bool(xp, x) else xp.isnan(x)


def _is_inf(xp: Any, x: Any) -> Any:
    return xp.zeros_like(x, dtype=xp.bool) if is_bool(xp, x) else xp.isinf(x)


def _is_finite(xp: Any, x: Any) -> Any:
    return xp.ones_like(x, dtype=xp.bool) if is_bool(xp, x) else xp.isfinite(x)


def _relu(xp: Any, x: Any) -> Any:
    return xp.maximum(x, 0)  # NaN stays NaN


def _relu6(xp: Any, x: Any) -> Any:
    return xp.clip(x, 0, 6)


def _rsqrt(xp: Any, x: Any) -> Any:
    return 1.0 / xp.sqrt(x)


def _sigmoid(xp: Any, x: Any) -> Any:
    e = xp.exp(-xp.abs(x))  # no overflow, and no cancellation for large negative x
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus(xp: Any, x: Any) -> Any:
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0.0)  # log(1 + e**x) with no overflow


def _elu(xp: Any, x: Any) -> Any:
    return xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0.0)))


def _selu(xp: Any, x: Any) -> Any:
    return xp.where(x > 0, x * SELU_SCALE, xp.expm1(xp.minimum(x, 0.0)) * SELU_SCALE_ALPHA)


# -- elementwise unary ---------------------------------------------------------
neg = unary("negative")
abs_ = unary("abs")
square = unary("square")
sign = unary_with(_sign)
relu = unary_with(_relu)
relu6 = unary_with(_relu6)
ceil = unary("ceil")
floor = unary("floor")
round_ = unary("round")  # halves to even, as the standard says
exp = unary("exp")
expm1 = unary("expm1")
log = unary("log")
log1p = unary("log1p")
sqrt = unary("sqrt")
rsqrt = unary_with(_rsqrt)
reciprocal = unary("reciprocal")
sin = unary("sin")
cos = unary("cos")
tan = unary("tan")
asin = unary("asin")
acos = unary("acos")
atan = unary("atan")
sinh = unary("sinh")
cosh = unary("cosh")
tanh = unary("tanh")
asinh = unary("asinh")
acosh = unary("acosh")
atanh = unary("atanh")
sigmoid = unary_with(_sigmoid)
softplus = unary_with(_softplus)
elu = unary_with(_elu)
selu = unary_with(_selu)
is_nan = unary_with(_is_nan)
is_inf = unary_with(_is_inf)
is_finite = unary_with(_is_finite)
logical_not = unary("logical_not")


def leaky_relu(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    return backend.xp.where(x < 0, x * attrs["alpha"], x)


def step(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp, x = backend.xp, inputs["x"]
    one, alpha = xp.ones_like(x), xp.full_like(x, attrs["alpha"])
    return xp.where(x > 0, one, xp.where(x <= 0, alpha, x))  # NaN stays NaN


def clip_by_value(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.clip(inputs["x"], attrs["clip_value_min"], attrs["clip_value_max"])
