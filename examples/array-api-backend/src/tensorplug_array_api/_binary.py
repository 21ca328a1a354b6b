"""Elementwise binary kernels, broadcasting (inputs ``a``, ``b``; already promoted to one dtype by the ops).

The standard is stricter than tensorplug's contract in two places, and the
kernels bridge them: it defines no arithmetic, ordering or maximum on bool
arrays (tensorplug follows NumPy: Add is logical or, Multiply and Minimum
logical and, False < True), and it leaves integer division by zero
unspecified (tensorplug's x // 0 and x % 0 are 0, without a warning), as
it does integers to negative powers (an error in tensorplug).
"""

from __future__ import annotations

from typing import Any

from tensorplug_array_api._factories import binary, binary_with, is_bool, is_float


def _add(xp: Any, a: Any, b: Any) -> Any:
    return xp.logical_or(a, b) if is_bool(xp, a) else xp.add(a, b)


def _multiply(xp: Any, a: Any, b: Any) -> Any:
    return xp.logical_and(a, b) if is_bool(xp, a) else xp.multiply(a, b)


def _squared_difference(xp: Any, a: Any, b: Any) -> Any:
    return xp.square(xp.subtract(a, b))


def _maximum(xp: Any, a: Any, b: Any) -> Any:
    return xp.logical_or(a, b) if is_bool(xp, a) else xp.maximum(a, b)


def _minimum(xp: Any, a: Any, b: Any) -> Any:
    return xp.logical_and(a, b) if is_bool(xp, a) else xp.minimum(a, b)


def _by_nonzero(xp: Any, fn: Any, a: Any, b: Any) -> Any:
    """``fn(a, b)`` for integers, 0 where b is 0 (no division by zero is ever done)."""
    zero = b == 0
    safe = xp.where(zero, xp.ones_like(b), b)
    return xp.where(zero, xp.zeros_like(a), fn(a, safe))


def _floor_div(xp: Any, a: Any, b: Any) -> Any:
    """Floats as TensorFlow.js, floor(a / b) (1.0 // 0.1 is 10, not 9); integers as Python's //, x // 0 being 0."""
    if is_float(xp, a):
        return xp.floor(xp.divide(a, b))
    return _by_nonzero(xp, xp.floor_divide, a, b)


def _mod(xp: Any, a: Any, b: Any) -> Any:
    """The sign of the divisor, as Python's %; integer x % 0 is 0."""
    return xp.remainder(a, b) if is_float(xp, a) else _by_nonzero(xp, xp.remainder, a, b)


def _pow(xp: Any, a: Any, b: Any) -> Any:
    """The standard leaves integers to negative powers unspecified (torch answers); tensorplug says no.

    For floats, the standard's special cases for a base of -inf or -0 with a positive exponent that is not an odd
    integer (+inf and +0) are applied again: array_api_strict computes through NumPy, whose shortcut for an
    exponent of 0.5 is a square root (NaN for -inf, -0 for -0).
    """
    if not is_float(xp, a):
        if xp.any(b < 0):
            raise ValueError("Integers to negative integer powers are not allowed")
        return xp.pow(a, b)
    out = xp.pow(a, b)
    odd = xp.logical_and(xp.floor(b) == b, xp.remainder(b, 2) == 1)
    positive_not_odd = xp.logical_and(b > 0, xp.logical_not(odd))
    out = xp.where(xp.logical_and(a == -xp.inf, positive_not_odd), xp.full_like(out, xp.inf), out)
    return xp.where(xp.logical_and(a == 0, positive_not_odd), xp.zeros_like(out), out)


def _ordered(name: str) -> Any:
    """A comparison that orders bools as NumPy does (False < True), which the standard does not define."""

    def compare(xp: Any, a: Any, b: Any) -> Any:
        if is_bool(xp, a):
            a, b = xp.astype(a, xp.int8), xp.astype(b, xp.int8)
        return getattr(xp, name)(a, b)

    compare.__name__ = name
    return compare


# -- arithmetic ------------------------------------------------------------------
add = binary_with(_add)
sub = binary("subtract")
multiply = binary_with(_multiply)
real_div = binary("divide")  # the op casts integers to float first
pow_ = binary_with(_pow)
maximum = binary_with(_maximum)
minimum = binary_with(_minimum)
squared_difference = binary_with(_squared_difference)
atan2 = binary("atan2")
floor_div = binary_with(_floor_div)
mod = binary_with(_mod)


def prelu(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, alpha = inputs["x"], inputs["alpha"]
    return backend.xp.where(x < 0, x * alpha, x)


def add_n(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp, tensors = backend.xp, inputs["tensors"]
    total = tensors[0]
    for t in tensors[1:]:
        total = _add(xp, total, t)
    return total


# -- comparisons and logic: bool results ---------------------------------------------
equal = binary("equal")
not_equal = binary("not_equal")
less = binary_with(_ordered("less"))
less_equal = binary_with(_ordered("less_equal"))
greater = binary_with(_ordered("greater"))
greater_equal = binary_with(_ordered("greater_equal"))
logical_and = binary("logical_and")
logical_or = binary("logical_or")
logical_xor = binary("logical_xor")
