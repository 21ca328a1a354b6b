"""Torch kernels: binary family (inputs ``a``, ``b``; already promoted to one dtype by the ops, shapes broadcast).

Matched to the numpy backend where torch differs: float floor division floors
the true quotient (torch's ``rounding_mode="floor"`` gives Python's 1.0 // 0.1
== 9); integer division and remainder by zero give 0 where torch raises (CPU)
or returns garbage (CUDA), through a safe divisor rather than a host sync; a
float remainder of zero takes the divisor's sign, as NumPy and Python.
"""

from __future__ import annotations

from typing import Any

import torch

from tensorplug_torch._factories import binary
from tensorplug_torch._graphs import reads_to_host


def _squared_difference(a: Any, b: Any) -> Any:
    return torch.sub(a, b).square_()


def _pow(a: Any, b: Any) -> Any:
    # The one host sync of the family, unavoidable: an integer power with a negative exponent must raise (as NumPy),
    # where torch quietly gives 0 or garbage. Float powers never sync.
    if not b.is_floating_point() and a.numel() and bool(torch.any(b < 0)):  # (an empty result has no such power)
        raise ValueError("Integers to negative integer powers are not allowed.")
    return torch.pow(a, b)


def _floor_div(a: Any, b: Any) -> Any:
    """Floats as TensorFlow.js, floor(a / b); integers as Python's //, x // 0 giving 0."""
    if a.is_floating_point():
        return torch.div(a, b).floor_()
    zero = b == 0
    quotient = torch.div(a, b.masked_fill(zero, 1), rounding_mode="floor")
    return quotient.masked_fill_(zero, 0)


def _mod(a: Any, b: Any) -> Any:
    """The sign of the divisor, as Python's %; integer x % 0 is 0 (x % 1 is 0), float x % 0 is NaN."""
    if a.is_floating_point():
        # torch's remainder keeps the dividend's zero sign (-0.0 % 2.0 is -0.0); the divisor's sign is the contract.
        return torch.remainder(a, b).copysign_(b)
    return torch.remainder(a, b.masked_fill(b == 0, 1))


# -- arithmetic ------------------------------------------------------------------
add = binary(torch.add)  # on bool tensors: logical or, as NumPy
sub = binary(torch.sub)
multiply = binary(torch.mul)  # on bool tensors: logical and, as NumPy
real_div = binary(torch.div)
pow_ = reads_to_host(binary(_pow), when=lambda specs: not (specs["b"].dtype or "").startswith("float"))
maximum = binary(torch.maximum)  # NaN if either is NaN, as NumPy
minimum = binary(torch.minimum)
squared_difference = binary(_squared_difference)
atan2 = binary(torch.atan2)
floor_div = binary(_floor_div)
mod = binary(_mod)


def prelu(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, alpha = inputs["x"], inputs["alpha"]
    return torch.where(x < 0, x * alpha, x)


def add_n(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    tensors = inputs["tensors"]
    if len(tensors) == 1:
        return tensors[0].clone()
    total = torch.add(tensors[0], tensors[1])  # in order, as the numpy backend, so float sums agree bit for bit
    for t in tensors[2:]:
        total.add_(t)
    return total


# -- comparisons and logic: bool results ---------------------------------------------
equal = binary(torch.eq)
not_equal = binary(torch.ne)
less = binary(torch.lt)
less_equal = binary(torch.le)
greater = binary(torch.gt)
greater_equal = binary(torch.ge)
logical_and = binary(torch.logical_and)
logical_or = binary(torch.logical_or)
logical_xor = binary(torch.logical_xor)
