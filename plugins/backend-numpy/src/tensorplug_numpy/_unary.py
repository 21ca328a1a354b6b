"""Elementwise unary kernels (input ``x``; the ops have already chosen its dtype).

Kernels that compute are quiet (``unary``: log(0) gives -inf without a warning); sign flips, selections and
tests (Neg, Abs, Relu, IsNan...) cannot trigger NumPy's floating-point checks and run as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import exact_unary, quiet, unary

# TensorFlow.js's selu constants (Klambauer et al., 2017).
SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123


def _sigmoid(x: Any) -> Any:
    e = np.exp(-np.abs(x))  # no overflow, and no cancellation for large negative x
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(x: Any) -> Any:
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)  # log(1 + e**x) with no overflow


def _elu(x: Any) -> Any:
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def _selu(x: Any) -> Any:
    return np.where(x > 0, x * SELU_SCALE, np.expm1(np.minimum(x, 0)) * SELU_SCALE_ALPHA)


def _sign(x: Any) -> Any:
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)  # 0 for NaN, as TensorFlow.js


def _rsqrt(x: Any) -> Any:
    return 1 / np.sqrt(x)


# -- erf -----------------------------------------------------------------------
# W. J. Cody, "Rational Chebyshev approximations for the error function",
# Mathematics of Computation 23 (1969), 631-637, as in his Netlib SPECFUN
# routine CALERF (https://www.netlib.org/specfun/erf): erf(x) = x R1(x**2) for
# |x| <= 0.46875; otherwise erf(x) = sign(x) (1 - erfc(|x|)) with
# erfc(y) = exp(-y**2) R2(y) for y <= 4 and exp(-y**2) (1/sqrt(pi) - R3(1/y**2) / y**2) / y
# above. Relative error below 1e-15 in float64 (checked against math.erf in
# the conformance cases). Coefficients: numerators highest degree first.
_ERF_P1 = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
           3.20937758913846947e03)  # fmt: skip
_ERF_Q1 = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_ERF_P2 = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
           2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03,
           1.23033935479799725e03)  # fmt: skip
_ERF_Q2 = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
           3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)  # fmt: skip
_ERF_P3 = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
           1.60837851487422766e-2, 6.58749161529837803e-4)  # fmt: skip
_ERF_Q3 = (1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
           2.33520497626869185e-3)  # fmt: skip
_ONE_OVER_SQRT_PI = 5.6418958354775628695e-1


def _polyval(coefficients: tuple[float, ...], z: Any) -> Any:
    result = np.full_like(z, coefficients[0])
    for c in coefficients[1:]:
        result = result * z + c
    return result


def _exp_minus_square(y: Any) -> Any:
    """exp(-y**2), with y**2 split into an exact part and a small one (as CALERF) to keep its accuracy."""
    head = np.trunc(y * 16) / 16
    return np.exp(-head * head) * np.exp(-(y - head) * (y + head))


def _erf(x: Any) -> Any:
    y = np.abs(np.asarray(x, dtype=np.float64))
    # Each branch is evaluated on y clamped to its interval, so no branch overflows.
    small = np.minimum(y, 0.46875)
    z = small * small
    near = small * _polyval(_ERF_P1, z) / _polyval(_ERF_Q1, z)
    middle = np.clip(y, 0.46875, 4.0)
    erfc_middle = _exp_minus_square(middle) * _polyval(_ERF_P2, middle) / _polyval(_ERF_Q2, middle)
    large = np.clip(y, 4.0, 27.0)  # erfc(27) is below the smallest float64
    w = 1 / (large * large)
    tail = _ONE_OVER_SQRT_PI - w * _polyval(_ERF_P3, w) / _polyval(_ERF_Q3, w)
    erfc_large = _exp_minus_square(large) * tail / large
    far = 1 - np.where(y <= 4.0, erfc_middle, erfc_large)
    result = np.copysign(np.where(y <= 0.46875, near, far), x)
    return result.astype(x.dtype)


# -- elementwise unary ---------------------------------------------------------
neg = exact_unary(np.negative)
abs_ = exact_unary(np.abs)
square = unary(np.square)
sign = exact_unary(_sign)
relu = exact_unary(lambda x: np.maximum(x, 0))
relu6 = exact_unary(lambda x: np.clip(x, 0, 6))
ceil = unary(np.ceil)
floor = unary(np.floor)
round_ = unary(np.round)  # halves to even
exp = unary(np.exp)
expm1 = unary(np.expm1)
log = unary(np.log)
log1p = unary(np.log1p)
sqrt = unary(np.sqrt)
rsqrt = unary(_rsqrt)
reciprocal = unary(np.reciprocal)
sin = unary(np.sin)
cos = unary(np.cos)
tan = unary(np.tan)
asin = unary(np.arcsin)
acos = unary(np.arccos)
atan = unary(np.arctan)
sinh = unary(np.sinh)
cosh = unary(np.cosh)
tanh = unary(np.tanh)
asinh = unary(np.arcsinh)
acosh = unary(np.arccosh)
atanh = unary(np.arctanh)
erf = unary(_erf)
sigmoid = unary(_sigmoid)
softplus = unary(_softplus)
softsign = unary(lambda x: x / (1 + np.abs(x)))
hard_swish = unary(lambda x: x * np.clip(x + 3, 0, 6) / 6)
elu = unary(_elu)
selu = unary(_selu)
is_nan = exact_unary(np.isnan)
is_inf = exact_unary(np.isinf)
is_finite = exact_unary(np.isfinite)
logical_not = exact_unary(np.logical_not)


# Attributes beyond float32's range become ±inf: quiet.


@quiet
def leaky_relu(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    return np.where(x < 0, x * attrs["alpha"], x)


@quiet
def step(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    if attrs["alpha"] == 0 and x.dtype.kind == "f":
        # The relu gradient's mask: a comparison and a cast, ~10 µs on 128x256 float32 where the nested where
        # below costs ~380. A NaN stays NaN; a min reduction (NaN propagates through it) says whether there is one.
        out = (x > 0).astype(x.dtype)  # a numpy scalar for a 0-d x
        if x.size and np.isnan(np.minimum.reduce(x, axis=None)):
            return np.where(np.isnan(x), x, out)
        return out
    return np.where(x > 0, 1, np.where(x <= 0, attrs["alpha"], x)).astype(x.dtype)  # NaN stays NaN


@quiet
def clip_by_value(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.clip(inputs["x"], attrs["clip_value_min"], attrs["clip_value_max"])
