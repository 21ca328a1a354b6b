"""Elementwise unary kernels on torch tensors (input ``x``; the ops have already chosen its dtype).

Where torch's own function differs from the numpy backend, the kernel says how it is matched:
cosh and sinh near overflow on the CPU, softplus's threshold, scalar attributes beyond float32's range,
leaky_relu with a non-finite alpha.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from tensorplug_torch._factories import unary

_FLOAT32_MAX = 3.4028234663852886e38
_FLOAT32_OVERFLOW = 3.4028235677973366e38  # (2 - 2**-24) * 2**127: from here up a float rounds to float32 inf


def _scalar(x: Any, value: Any) -> Any:
    """``value`` as x's dtype holds it: torch refuses a Python float beyond float32's range, numpy rounds it to ±inf."""
    if x.dtype == torch.float32 and abs(value) > _FLOAT32_MAX:
        return math.copysign(math.inf if abs(value) >= _FLOAT32_OVERFLOW else _FLOAT32_MAX, value)
    return value


# torch's vectorised CPU cosh and sinh overflow to inf up to 0.7 before the true overflow point (float32
# 88.72 < |x| < 89.42, float64 709.78 < |x| < 710.48; shorter tensors take an exact scalar path), where numpy
# gives the finite result. Off CUDA they go through half the argument, which cannot overflow early (within
# 2.5 ulp, no cancellation); CUDA's own cosh and sinh are exact to the overflow point and stay one call.
def _cosh(x: Any) -> Any:
    if x.is_cuda:
        return torch.cosh(x)
    return torch.sinh(x * 0.5).square_().mul_(2).add_(1)  # 1 + 2 sinh(x/2)**2


def _sinh(x: Any) -> Any:
    if x.is_cuda:
        return torch.sinh(x)
    half = x * 0.5
    return torch.sinh(half).mul_(torch.cosh(half)).mul_(2)  # 2 sinh(x/2) cosh(x/2)


def _softplus(x: Any) -> Any:
    # torch returns x itself above the threshold; these are where log1p(e**-x) drops below half an ulp of x,
    # so the result is numpy's x + log1p(e**-x) (torch's default of 20 loses digits in float64).
    return F.softplus(x, threshold=40.0 if x.dtype == torch.float64 else 20.0)


# -- elementwise unary ---------------------------------------------------------
# torch's functions already match numpy where numpy needed care: sign(NaN) is 0, round halves to even,
# ceil/floor/round of an integer tensor give a new tensor of its dtype, elu and selu use expm1 (with
# TensorFlow.js's selu constants), erf is within 1 ulp of math.erf in float64, sigmoid is 1 / (1 + e**-x)
# (no overflow, no cancellation; results below the smallest normal float flush to 0 where numpy keeps a
# subnormal), clamp and relu keep NaN.
neg = unary(torch.neg)
abs_ = unary(torch.abs)
square = unary(torch.square)
sign = unary(torch.sign)
relu = unary(torch.relu)
relu6 = unary(lambda x: torch.clamp(x, 0, 6))
ceil = unary(torch.ceil)
floor = unary(torch.floor)
round_ = unary(torch.round)  # halves to even
exp = unary(torch.exp)
expm1 = unary(torch.expm1)
log = unary(torch.log)
log1p = unary(torch.log1p)
sqrt = unary(torch.sqrt)
rsqrt = unary(torch.rsqrt)
reciprocal = unary(torch.reciprocal)
sin = unary(torch.sin)
cos = unary(torch.cos)
tan = unary(torch.tan)
asin = unary(torch.asin)
acos = unary(torch.acos)
atan = unary(torch.atan)
sinh = unary(_sinh)
cosh = unary(_cosh)
tanh = unary(torch.tanh)
asinh = unary(torch.asinh)
acosh = unary(torch.acosh)
atanh = unary(torch.atanh)
erf = unary(torch.erf)
sigmoid = unary(torch.sigmoid)
softplus = unary(_softplus)
softsign = unary(F.softsign)
hard_swish = unary(F.hardswish)
elu = unary(F.elu)
selu = unary(F.selu)
is_nan = unary(torch.isnan)
is_inf = unary(torch.isinf)
is_finite = unary(torch.isfinite)
logical_not = unary(torch.logical_not)


def leaky_relu(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    alpha = _scalar(x, attrs["alpha"])
    if not math.isfinite(alpha):  # torch's x * alpha at x = 0 would be NaN; numpy keeps x where x >= 0
        return torch.where(x < 0, x * alpha, x)
    return F.leaky_relu(x, alpha)


def step(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    if attrs["alpha"] == 0 and x.is_floating_point():
        # The relu gradient's mask in two passes: clamping to [0, 1] keeps NaN, and ceil sends (0, 1] to 1.
        # (x > 0).to(dtype) would be ~3x slower on the CPU: torch's cast from bool is not vectorised.
        return x.clamp(0, 1).ceil_()
    # ceil then clamp gives 1 above 0 and keeps NaN; integer tensors keep their dtype throughout.
    return torch.where(x <= 0, _scalar(x, attrs["alpha"]), x.ceil().clamp_(max=1))


def clip_by_value(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    return torch.clamp(x, _scalar(x, attrs["clip_value_min"]), _scalar(x, attrs["clip_value_max"]))
