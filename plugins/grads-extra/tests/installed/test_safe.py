"""The always-on gradients: safe at the singularities, the core's everywhere else, and FloorDiv's addition.

The core's gradient for comparison is computed inside ``tp.gradient_overrides``
with the core's own GradientSpec (the bottom of ``tp.gradient_stack``)
restored for the kernel. Grids hold every kind of point that matters
(negative, -0.0, 0, positive, whole and fractional, inf, NaN).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

CORE = "tensorplug"
DIST = "tensorplug-grads-extra"
NAN, INF = math.nan, math.inf
RTOL = {"float32": 1e-6, "float64": 1e-13}

UNARY_GRID = [-2.5, -1.0, -0.0, 0.0, 1e-30, 0.25, 1.0, 4.0, INF, NAN]
BASES = [-2.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, NAN]
EXPONENTS = [-1.5, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 2.5, NAN]
NUMERATORS = [-2.0, -0.0, 0.0, 1.5, INF, NAN]
DENOMINATORS = [-4.0, -0.0, 0.0, 0.5, 3.0, INF, NAN]


def core_spec(kernel: str) -> tp.GradientSpec:
    stack = tp.gradient_stack(kernel)
    assert [s.source for s in stack] == [CORE, DIST]
    return stack[0]


def with_core(kernel: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` with the core's gradient of ``kernel`` in force (a scoped override restoring it)."""
    with tp.gradient_overrides({kernel: core_spec(kernel)}), np.errstate(invalid="ignore", divide="ignore"):
        return compute()  # the core's gradients compute 0 * inf at the singular points (ours never do)


def pairs(first: list[float], second: list[float], dtype: str) -> tuple[tp.Tensor, tp.Tensor]:
    """Every (a, b) combination, as two flat tensors."""
    a, b = zip(*itertools.product(first, second), strict=True)
    return tp.tensor(list(a), dtype), tp.tensor(list(b), dtype)


def assert_safe(ours: np.ndarray, core: np.ndarray, singular: np.ndarray, dtype: str) -> None:
    """Ours agrees with the core where the core is finite, is 0 at the singular points, and keeps the rest."""
    finite = np.isfinite(core)
    np.testing.assert_allclose(ours[finite], core[finite], rtol=RTOL[dtype], atol=0)
    assert (ours[singular] == 0).all(), ours[singular]
    np.testing.assert_array_equal(ours[~finite & ~singular], core[~finite & ~singular])  # NaN and inf kept
    assert (singular & ~finite).any(), "the grid has no point where the override changes anything"


# -- Sqrt, Log -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sqrt_is_zero_at_zero_and_the_core_elsewhere(dtype: str) -> None:
    x = tp.tensor(UNARY_GRID, dtype)
    ours = tp.grad(tp.sqrt)(x).numpy()
    core = with_core("Sqrt", lambda: tp.grad(tp.sqrt)(x)).numpy()
    assert_safe(ours, core, x.numpy() == 0, dtype)
    assert np.isinf(core[3])  # the core: inf at 0
    assert np.isnan(ours[0])  # below 0 sqrt and its gradient are NaN, as in the core


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_is_zero_at_zero_and_the_core_elsewhere(dtype: str) -> None:
    x = tp.tensor(UNARY_GRID, dtype)
    ours = tp.grad(tp.log)(x).numpy()
    core = with_core("Log", lambda: tp.grad(tp.log)(x)).numpy()
    assert_safe(ours, core, x.numpy() == 0, dtype)
    assert core[3] == INF  # the core: 1/0
    assert core[2] == -INF  # and 1/-0


def test_hand_worked_values_at_and_near_the_singularities() -> None:
    x = tp.tensor([-1.0, -0.0, 0.0, 0.25, 4.0])
    assert tp.grad(tp.sqrt)(x).tolist()[1:] == [0.0, 0.0, 1.0, 0.25]
    assert tp.grad(tp.log)(x).tolist() == [-1.0, 0.0, 0.0, 4.0, 0.25]
    assert tp.grad(lambda x: tp.div(2.0, x))(x).tolist() == [-2.0, 0.0, 0.0, -32.0, -0.125]


# -- Pow -------------------------------------------------------------------------


def whole(b: np.ndarray) -> np.ndarray:
    return np.isfinite(b) & (np.round(b) == b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_base_gradient_is_zero_where_the_core_is_nan_or_inf(dtype: str) -> None:
    a, b = pairs(BASES, EXPONENTS, dtype)
    ours = tp.grads(tp.pow)([a, b])[0].numpy()
    core = with_core("Pow", lambda: tp.grads(tp.pow)([a, b])[0]).numpy()
    an, bn = a.numpy(), b.numpy()
    zero_base = (an == 0) & (bn < 1)
    negative_base = (an < 0) & ~whole(bn) & ~np.isnan(bn)
    assert_safe(ours, core, zero_base | negative_base, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_exponent_gradient_is_zero_for_every_base_at_or_below_zero(dtype: str) -> None:
    a, b = pairs(BASES, EXPONENTS, dtype)
    ours = tp.grads(tp.pow)([a, b])[1].numpy()
    core = with_core("Pow", lambda: tp.grads(tp.pow)([a, b])[1]).numpy()
    assert_safe(ours, core, a.numpy() <= 0, dtype)


def test_pow_hand_worked_values() -> None:
    a = tp.tensor([0.0, 0.0, 0.0, 0.0, 0.0, -8.0, -8.0, 2.0])
    b = tp.tensor([0.0, 0.5, 1.0, 2.0, -1.0, 1.0 / 3.0, 2.0, 3.0])
    da, db = tp.grads(lambda a, b: tp.pow(a, b))([a, b])
    assert da.tolist() == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -16.0, 12.0]
    assert db.tolist()[:7] == [0.0] * 7
    assert db.tolist()[7] == pytest.approx(8 * math.log(2.0), rel=1e-6)


# -- RealDiv ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("operand", [0, 1])
def test_real_div_is_zero_where_b_is_zero_and_the_core_elsewhere(dtype: str, operand: int) -> None:
    a, b = pairs(NUMERATORS, DENOMINATORS, dtype)
    ours = tp.grads(tp.div)([a, b])[operand].numpy()
    core = with_core("RealDiv", lambda: tp.grads(tp.div)([a, b])[operand]).numpy()
    assert_safe(ours, core, b.numpy() == 0, dtype)


def test_real_div_broadcasts_and_sums_back() -> None:
    a = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = tp.tensor([0.0, 2.0])
    da, db = tp.grads(lambda a, b: a / b)([a, b])
    assert da.tolist() == [[0.0, 0.5], [0.0, 0.5]]
    assert db.tolist() == [0.0, -(2.0 + 4.0) / 4.0]


# -- NaN from upstream is never masked ------------------------------------------


def test_a_nan_upstream_gradient_stays_nan_at_the_singular_points() -> None:
    zero = tp.tensor([0.0, 0.0])
    dy = tp.tensor([NAN, 1.0])
    for op in (tp.sqrt, tp.log, lambda x: tp.pow(x, 0.5), lambda x: tp.div(1.0, x), lambda x: tp.div(x, x)):
        g = tp.grad(op)(zero, dy).tolist()
        assert math.isnan(g[0]), (op, g)
        assert g[1] == 0.0, (op, g)


# -- the Euclidean norm and the where-gated patterns -----------------------------


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [((3,), {}), ((2, 3), {"axis": 1}), ((2, 3), {"axis": (0, 1)}), ((3,), {"ord": 3}), ((2, 2), {"ord": "fro"})],
)
def test_norm_gradient_is_zero_at_the_zero_vector(shape: tuple[int, ...], kwargs: dict[str, Any]) -> None:
    f = lambda x: tp.sum(tp.norm(x, **kwargs))
    zero = tp.zeros(shape)
    assert tp.grad(f)(zero).numpy().tolist() == np.zeros(shape).tolist()
    kernel = "Pow" if "ord" in kwargs and kwargs["ord"] == 3 else "Sqrt"
    assert np.isnan(with_core(kernel, lambda: tp.grad(f)(zero)).numpy()).all()  # the core: NaN
    x = tp.tensor(np.arange(1.0, 1.0 + math.prod(shape)).reshape(shape), "float32")
    np.testing.assert_allclose(tp.grad(f)(x).numpy(), with_core(kernel, lambda: tp.grad(f)(x)).numpy(), rtol=1e-6)


def test_where_gated_singularities_get_finite_gradients() -> None:
    x = tp.tensor([-1.0, 0.0, 4.0])
    cases = {
        "Sqrt": (lambda x: tp.where(x > 0, tp.sqrt(tp.abs(x)), 0.0), [0.0, 0.0, 0.25]),
        "Log": (lambda x: tp.where(x > 0, tp.log(x), 0.0), [0.0, 0.0, 0.25]),
        "RealDiv": (lambda x: tp.where(x != 0, tp.div(1.0, x), 0.0), [-1.0, 0.0, -1.0 / 16]),
        "Pow": (lambda x: tp.where(x > 0, tp.pow(x, 0.5), 0.0), [0.0, 0.0, 0.25]),
    }
    for kernel, (f, expected) in cases.items():
        assert tp.grad(f)(x).tolist() == expected, kernel
        assert np.isnan(with_core(kernel, lambda f=f: tp.grad(f)(x)).numpy()).any(), kernel


@pytest.mark.parametrize(
    ("kernel", "f", "points"),
    [
        ("Sqrt", tp.sqrt, [0.0, -0.0]),
        ("Log", tp.log, [0.0]),
        ("RealDiv", lambda b: tp.div(1.0, b), [0.0]),
        ("Pow", lambda a: tp.pow(a, 0.5), [0.0, -1.0]),
    ],
)
def test_the_gradient_of_each_safe_gradient_is_finite_at_its_singular_points(
    kernel: str, f: Callable[[tp.Tensor], tp.Tensor], points: list[float]
) -> None:
    """Each one feeds a stand-in to its masked branch, so it is safe on its own: the others are the core's here."""
    others = {k: core_spec(k) for k in ("Sqrt", "Log", "RealDiv", "Pow") if k != kernel}
    with tp.gradient_overrides(others):
        second = tp.grad(tp.grad(f))(tp.tensor(points, "float64"))
    assert second.tolist() == [0.0] * len(points)


# -- numeric checks to second order where the function is differentiable ---------


POSITIVE = [0.3, 1.7, 4.0]


@pytest.mark.parametrize(
    ("name", "f", "args"),
    [
        ("sqrt", tp.sqrt, [POSITIVE]),
        ("log", tp.log, [POSITIVE]),
        ("norm", lambda x: tp.norm(x), [[0.3, -1.7, 4.0]]),
        ("norm-axis", lambda x: tp.norm(x, axis=1, keepdims=True), [[[0.3, -1.7], [0.0, 2.0]]]),
        ("norm-p3", lambda x: tp.norm(x, ord=3), [[0.3, -1.7, 4.0]]),
        ("div", tp.div, [[-1.5, 0.0, 2.0], [0.5, -2.0, 3.0]]),
        ("div-broadcast", tp.div, [[[-1.5, 0.0], [2.0, 1.0]], [0.5, -2.0]]),
        ("pow", tp.pow, [POSITIVE, [-1.5, 0.5, 2.0]]),
        ("pow-broadcast", tp.pow, [[[0.3, 1.7], [4.0, 2.0]], [2.5]]),
    ],
)
def test_check_grads_second_order(name: str, f: Callable[..., tp.Tensor], args: list[Any]) -> None:
    tp.testing.check_grads(f, [tp.tensor(a) for a in args], order=2)


@pytest.mark.parametrize(
    ("base", "exponents"),
    [
        (-1.5, [0.0, 1.0, 2.0, 3.0, -1.0]),  # a negative base to whole powers: differentiable in a
        (0.0, [0.0, 1.0, 2.0, 3.0]),  # a zero base: a**0 and a**1 are where the core gives NaN
    ],
)
def test_check_grads_of_the_base_where_the_core_fails(base: float, exponents: list[float]) -> None:
    b = tp.tensor(exponents, "float64")
    f = lambda a: tp.pow(a, b)
    a = tp.tensor([base] * len(exponents))
    tp.testing.check_grads(f, [a], order=2)
    if base == 0.0:
        with pytest.raises(AssertionError):
            with_core("Pow", lambda: tp.testing.check_grads(f, [a], order=2))


# -- FloorDiv: an addition -------------------------------------------------------


def test_floor_div_is_differentiated_straight_through_as_real_division() -> None:
    a = tp.tensor([7.0, -7.0, 1.0, 3.0])
    b = tp.tensor([2.0, 2.0, 0.0, -0.5])
    ours = tp.grads(tp.floor_div)([a, b])
    real = tp.grads(tp.div)([a, b])
    for g, r in zip(ours, real, strict=True):
        assert g.tolist() == r.tolist()
    assert ours[0].tolist() == [0.5, 0.5, 0.0, -2.0]
    assert [s.source for s in tp.gradient_stack("FloorDiv")] == [CORE, DIST]
    assert tp.gradient_stack("FloorDiv")[0].grad is None  # the core declares it not differentiable
    with pytest.raises(tp.GradientError, match="'FloorDiv' is not differentiable"):
        with_core("FloorDiv", lambda: tp.grads(tp.floor_div)([a, b]))


def test_floor_div_second_order_matches_real_division() -> None:
    def second(op: Callable[..., tp.Tensor]) -> list[float]:
        return tp.grad(tp.grad(lambda b: tp.sum(op(tp.tensor([3.0, -2.0], "float64"), b))))(
            tp.tensor([0.5, 4.0], "float64")
        ).tolist()

    assert second(tp.floor_div) == second(tp.div) == [2 * 3.0 / 0.5**3, 2 * -2.0 / 4.0**3]


def test_integer_floor_div_is_unchanged() -> None:
    assert tp.floor_div(tp.tensor([7, -7]), 2).tolist() == [3, -4]
