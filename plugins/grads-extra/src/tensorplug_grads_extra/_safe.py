"""The always-on gradients: the core's, made safe where the core's are NaN or infinite, and FloorDiv's.

Each safe gradient multiplies ``dy`` by a *local derivative* that is the
core's wherever the core's is finite, and 0 at the singular points its
docstring names. Each saves the same tensors as the core's gradient, so a
bare function given to ``tp.gradient_overrides`` (which inherits the saved
tensors of the gradient it replaces) sees the same ``saved`` either way.
Only the local derivative is masked, never the product with ``dy``: a NaN
(or inf) coming from upstream still gives NaN. The masked points are fed a
harmless stand-in value (``where(singular, 1, x)``) before the formula, so
that the gradient of the gradient is finite there too (the "double where"),
and everything is written with tensorplug ops, so it can be differentiated
again.

Why 0: the derivative at these points is infinite or undefined, so no
finite value is right; 0 keeps a branch that a ``where`` masked out, or a
zero vector fed to ``norm``, from turning a whole gradient into NaN
(``0 * inf`` is NaN), which is what a training loop wants.
"""

from __future__ import annotations

from typing import Any

from tensorplug import Tensor
from tensorplug.ops import (
    div,
    equal,
    floor,
    greater,
    less,
    less_equal,
    log,
    logical_and,
    logical_or,
    mul,
    neg,
    pow,
    reciprocal,
    square,
    sub,
    sum_to_shape,
    where,
)

# -- Sqrt -----------------------------------------------------------------------


def grad_sqrt(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """d sqrt(x)/dx = 1 / (2 sqrt(x)), taken as 0 at x = 0.

    The core gives ``dy / (2 * 0)``: inf (NaN where dy is 0). With 0 the
    Euclidean norm ``sqrt(sum(x**2))`` has gradient 0 at the zero vector (a
    subgradient), and ``where(x > 0, sqrt(x), 0)`` has a finite gradient at
    x = 0. Below 0, sqrt and its gradient are NaN, as in the core: like the
    core's, this gradient sees only the output y (the saved tensors stay the
    core's), and a NaN y may come from a NaN x, which must stay NaN.
    """
    (y,) = saved
    at_zero = equal(y, 0.0)
    local = where(at_zero, 0.0, div(0.5, where(at_zero, 1.0, y)))
    return (mul(dy, local),)


# -- Pow ------------------------------------------------------------------------


def grad_pow(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """d(a**b)/da = b * a**(b-1), taken as 0 where the core's is NaN or infinite:

    - a zero base with b < 1 (``0 ** (b-1)`` is inf, and ``0 * inf`` is NaN
      for b = 0, where a**0 = 1 really has derivative 0);
    - a negative base with a non-integer b (``a ** (b-1)`` is NaN; so is a**b).

    d(a**b)/db = a**b * log(a), with log(a) taken as 0 unless a > 0 (the
    core's own convention, as TensorFlow.js); the core multiplies that 0 by
    a**b, which gives NaN where a**b is inf or NaN (0 to a negative power, a
    negative base to a non-integer power); here it stays 0. NaN operands give
    what the core gives.
    """
    a, b, y = saved

    def da() -> Tensor:
        zero_base = logical_and(equal(a, 0.0), less(b, 1.0))
        negative_base = logical_and(less(a, 0.0), less(floor(b), b))  # b not a whole number (NaN is not masked)
        singular = logical_or(zero_base, negative_base)
        local = where(singular, 0.0, mul(b, pow(where(singular, 1.0, a), sub(b, 1.0))))
        return sum_to_shape(mul(dy, local), a.shape)

    def db() -> Tensor:
        log_a = log(where(greater(a, 0.0), a, 1.0))  # the core's: 0 unless a > 0
        local = mul(where(less_equal(a, 0.0), 0.0, y), log_a)  # with a**b taken as 0 where a <= 0
        return sum_to_shape(mul(dy, local), b.shape)

    return da, db


# -- Log ------------------------------------------------------------------------


def grad_log(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """d log(x)/dx = 1 / x, taken as 0 at x = 0.

    The core gives ``dy / 0``: ±inf (NaN where dy is 0), which poisons the
    gradient of ``where(x > 0, log(x), 0)`` at x = 0. Below 0 (log is NaN
    there) the core's 1/x is finite and is kept.
    """
    (x,) = saved
    at_zero = equal(x, 0.0)
    local = where(at_zero, 0.0, reciprocal(where(at_zero, 1.0, x)))
    return (mul(dy, local),)


# -- RealDiv (and FloorDiv) -----------------------------------------------------


def grad_real_div(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """d(a/b)/da = 1/b and d(a/b)/db = -a/b**2, both taken as 0 where b = 0.

    The core gives ±inf or NaN there, which poisons the gradient of
    ``where(b != 0, a / b, 0)`` (the usual "safe divide"). Elsewhere this is
    the core's gradient.
    """
    a, b = saved
    by_zero = equal(b, 0.0)
    safe_b = where(by_zero, 1.0, b)
    return (
        lambda: sum_to_shape(mul(dy, where(by_zero, 0.0, reciprocal(safe_b))), a.shape),
        lambda: sum_to_shape(mul(dy, where(by_zero, 0.0, neg(div(a, square(safe_b))))), b.shape),
    )


def grad_floor_div(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """An addition: floor(a / b) differentiated straight through the floor, as the real division a / b.

    The core declares FloorDiv not differentiable (its true derivative is 0
    almost everywhere), so nothing that worked before changes: graphs that
    raised a GradientError now get the straight-through estimate used to
    train through quantisers (as ``straight_through`` does for Floor). It is
    the guarded RealDiv gradient above, so it is 0 where b = 0.
    """
    return grad_real_div(dy, saved, attrs)
