"""Conformance cases: composite ops and losses (no kernel of their own; ``kernel`` names the op).

Expected values are worked out by hand in the comments, or with Python's
math module in float64.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.testing._case import Case, f32, f64, i32

L = tp.losses
ln2, ln4 = math.log(2.0), math.log(4.0)


def _sigmoid_xent(z: float, x: float) -> float:
    """-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)), from the definition."""
    s = 1.0 / (1.0 + math.exp(-x))
    return -z * math.log(s) - (1.0 - z) * math.log(1.0 - s)


def _shape_is(shape: tuple[int, ...]) -> Callable[[np.ndarray], None]:
    def check(y: np.ndarray) -> None:
        assert y.shape == shape, f"shape {y.shape}, expected {shape}"

    return check


def _median_reduction(labels: tp.Tensor, logits: tp.Tensor) -> tp.Tensor:
    reduction: Any = "median"  # not a reduction: the op must refuse it
    return L.softmax_cross_entropy(labels, logits, reduction=reduction)


def _rows_normalised(y: np.ndarray) -> None:
    """exp(log_softmax) sums to 1 along the last axis."""
    np.testing.assert_allclose(np.exp(y).sum(-1), 1.0, rtol=1e-12)


def _finite(y: np.ndarray) -> None:
    """For cases whose point is the gradient check: the value must at least be finite."""
    assert np.all(np.isfinite(y)), y


_xent_pairs = [(1.0, 0.5), (0.0, -1.5), (1.0, 3.0), (0.25, -0.2)]
_rng = np.random.default_rng(7)

CASES: list[Case] = [
    # -- log_softmax / log_sum_exp ------------------------------------------------------------------------------
    Case("log_softmax", tp.log_softmax, (f32([[0.0, 0.0], [0.0, math.log(3.0)]]),),
         f32([[-ln2, -ln2], [-ln4, math.log(3.0) - ln4]]), name="values"),
    Case("log_softmax", tp.log_softmax, (f32([1000.0, 1000.0]),), f32([-ln2, -ln2]), name="large-logits-stable"),
    Case("log_softmax", tp.log_softmax, (f64(_rng.standard_normal((2, 5))),), check=_rows_normalised, grad=True,
         name="grad"),
    Case("log_softmax", tp.log_softmax, (i32([1, 2]),), raises=tp.DTypeError, match="float",
         name="int-input"),
    Case("log_sum_exp", lambda x: tp.log_sum_exp(x, 1), (f32([[0.0, 0.0], [1000.0, 1000.0]]),),
         f32([ln2, 1000.0 + ln2]), name="values"),
    Case("log_sum_exp", lambda x: tp.log_sum_exp(x, 1, keepdims=True), (f64(_rng.standard_normal((3, 4))),),
         check=_shape_is((3, 1)), grad=True, name="keepdims-grad"),
    # -- moving_average: v + (x - v) * (1 - decay) / (1 - decay**step) ------------------------------------------
    Case("moving_average", lambda v, x: tp.moving_average(v, x, 0.6, step=1), (f32([10.0, 10.0]), f32([1.0, 2.0])),
         f32([1.0, 2.0]), rtol=1e-6, name="debias-step1"),
    Case("moving_average", lambda v, x: tp.moving_average(v, x, 0.6, zero_debias=False),
         (f32([10.0, 10.0]), f32([1.0, 2.0])), f32([6.4, 6.8]), rtol=1e-6, name="no-debias"),
    Case("moving_average", lambda v, x: tp.moving_average(v, x, 0.9, step=3), (f64([0.5, -1.0]), f64([2.0, 1.0])),
         f64([0.5 + 1.5 * 0.1 / (1 - 0.9**3), -1.0 + 2.0 * 0.1 / (1 - 0.9**3)]), grad=True, name="grad"),
    Case("moving_average", lambda v, x: tp.moving_average(v, x, 0.6), (f32([1.0]), f32([2.0])),
         raises=tp.TensorplugError, match="step", name="missing-step"),
    # -- norm ---------------------------------------------------------------------------------------------------
    Case("norm", tp.norm, (f32([3.0, -4.0]),), f32(5.0), name="euclidean"),
    Case("norm", lambda x: tp.norm(x, 1), (f32([3.0, -4.0]),), f32(7.0), name="l1"),
    Case("norm", lambda x: tp.norm(x, math.inf), (f32([3.0, -4.0]),), f32(4.0), name="inf"),
    Case("norm", lambda x: tp.norm(x, -math.inf), (f32([3.0, -4.0]),), f32(3.0), name="minus-inf"),
    Case("norm", lambda x: tp.norm(x, 3), (f64([1.0, -2.0]),), f64(9.0 ** (1 / 3)), name="p3"),
    Case("norm", lambda x: tp.norm(x, "fro", (0, 1)), (f32([[1.0, 2.0], [2.0, 4.0]]),), f32(5.0), name="fro"),
    # columns sum to [4, 7] (max 7); rows sum to [3, 8] (max 8)
    Case("norm", lambda x: tp.norm(x, 1, (0, 1)), (f32([[1.0, -2.0], [3.0, 5.0]]),), f32(7.0), name="matrix-1"),
    Case("norm", lambda x: tp.norm(x, math.inf, (0, 1)), (f32([[1.0, -2.0], [3.0, 5.0]]),), f32(8.0),
         name="matrix-inf"),
    Case("norm", lambda x: tp.norm(x, axis=1, keepdims=True), (f32([[3.0, 4.0], [0.0, 1.0]]),), f32([[5.0], [1.0]]),
         name="axis-keepdims"),
    Case("norm", lambda x: tp.norm(x, axis=0), (f64([[0.3, -1.2], [2.0, 0.7]]),),
         f64([math.hypot(0.3, 2.0), math.hypot(1.2, 0.7)]), grad=True, name="grad"),
    Case("norm", lambda x: tp.norm(x, 2, (0, 1)), (f32([[1.0]]),), raises=tp.TensorplugError, match="matrix ord",
         name="matrix-2-unsupported"),
    # -- dropout ------------------------------------------------------------------------------------------------
    Case("dropout", lambda x: tp.dropout(x, 0.0), (f32([1.0, 2.0]),), f32([1.0, 2.0]), name="rate-0"),
    Case("dropout", lambda x: tp.dropout(x, 0.5, seed=3), (f32(np.ones(4000)),),
         check=lambda y: _check_dropout(y, 0.5), name="rate-half"),
    Case("dropout", lambda x: tp.dropout(x, 1.0), (f32([1.0]),), raises=tp.TensorplugError, match="rate",
         name="rate-1"),
    # -- losses -------------------------------------------------------------------------------------------------
    # softmax cross-entropy: rows ln 2 and ln 4
    Case("softmax_cross_entropy", lambda z, x: L.softmax_cross_entropy(z, x, reduction="none"),
         (f32([[0.0, 1.0], [1.0, 0.0]]), f32([[0.0, 0.0], [0.0, math.log(3.0)]])), f32([ln2, ln4]), name="none"),
    Case("softmax_cross_entropy", L.softmax_cross_entropy,
         (f32([[0.0, 1.0], [1.0, 0.0]]), f32([[0.0, 0.0], [0.0, math.log(3.0)]])), f32((ln2 + ln4) / 2),
         name="default-reduction"),
    Case("softmax_cross_entropy", lambda z, x: L.softmax_cross_entropy(z, x, weights=tp.tensor([0.0, 2.0])),
         (f32([[0.0, 1.0], [1.0, 0.0]]), f32([[0.0, 0.0], [0.0, math.log(3.0)]])), f32(2 * ln4), name="weights"),
    Case("softmax_cross_entropy", lambda z, x: L.softmax_cross_entropy(z, x, label_smoothing=0.5),
         (f32([[0.0, 1.0]]), f32([[0.0, 0.0]])), f32(ln2), name="label-smoothing"),
    Case("softmax_cross_entropy", L.softmax_cross_entropy,
         (f64(_rng.dirichlet(np.ones(4), 3)), f64(_rng.standard_normal((3, 4)))),
         check=_finite, grad=True, name="grad"),
    Case("softmax_cross_entropy", L.softmax_cross_entropy, (f32(np.ones((2, 3))), f32(np.ones((2, 2)))),
         raises=tp.ShapeError, match="same shape", name="shape-mismatch"),
    Case("softmax_cross_entropy", _median_reduction,
         (f32([[1.0]]), f32([[1.0]])), raises=tp.TensorplugError, match="reduction", name="bad-reduction"),
    # sigmoid cross-entropy, from the definition
    Case("sigmoid_cross_entropy", lambda z, x: L.sigmoid_cross_entropy(z, x, reduction="none"),
         (f64([z for z, _ in _xent_pairs]), f64([x for _, x in _xent_pairs])),
         f64([_sigmoid_xent(z, x) for z, x in _xent_pairs]), rtol=1e-12, name="none"),
    Case("sigmoid_cross_entropy", lambda z, x: L.sigmoid_cross_entropy(z, x, reduction="none"),
         (f32([1.0, 0.0]), f32([200.0, -200.0])), f32([0.0, 0.0]), atol=1e-6, name="large-logits-stable"),
    Case("sigmoid_cross_entropy", lambda z, x: L.sigmoid_cross_entropy(z, x, label_smoothing=0.2, reduction="sum"),
         (f64([1.0, 0.0]), f64([0.5, -1.5])), f64(_sigmoid_xent(0.9, 0.5) + _sigmoid_xent(0.1, -1.5)), rtol=1e-12,
         name="label-smoothing"),
    Case("sigmoid_cross_entropy", L.sigmoid_cross_entropy, (f64([1.0, 0.0, 0.3]), f64([0.5, -1.5, 2.0])),
         check=_finite, grad=True, name="grad"),
    # mean squared error: errors 0.5 and 1 -> (0.25 + 1) / 2
    Case("mean_squared_error", L.mean_squared_error, (f32([1.0, 2.0]), f32([1.5, 1.0])), f32(0.625), name="values"),
    Case("mean_squared_error", lambda z, p: L.mean_squared_error(z, p, reduction="mean", weights=tp.tensor(2.0)),
         (f32([1.0, 2.0]), f32([1.5, 1.0])), f32(0.625), name="scalar-weight-mean"),
    Case("mean_squared_error", L.mean_squared_error, (f64([1.0, 2.0, -1.0]), f64([1.5, 1.0, 0.3])),
         check=_finite, grad=True, name="grad"),
    Case("mean_squared_error", L.mean_squared_error, (f32([1.0, 2.0]), f32([1.0])), raises=tp.ShapeError,
         match="same shape", name="shape-mismatch"),
    # absolute difference: (0.5 + 1) / 2
    Case("absolute_difference", L.absolute_difference, (f32([1.0, 2.0]), f32([1.5, 1.0])), f32(0.75),
         name="values"),
    Case("absolute_difference", lambda z, p: L.absolute_difference(z, p, reduction="sum"),
         (f64([1.0, 2.0, -1.0]), f64([1.5, 1.0, 0.3])), f64(2.8), grad=True, name="grad"),
    # huber, delta 1: errors 0.5 -> 0.125; 2 -> 0.5 + 1 = 1.5
    Case("huber_loss", lambda z, p: L.huber_loss(z, p, reduction="none"), (f32([0.0, 0.0]), f32([0.5, -2.0])),
         f32([0.125, 1.5]), name="values"),
    Case("huber_loss", lambda z, p: L.huber_loss(z, p, delta=0.5, reduction="none"), (f32([0.0]), f32([2.0])),
         f32([0.5 * 0.25 + 0.5 * 1.5]), name="delta"),
    Case("huber_loss", L.huber_loss, (f64([0.0, 1.0, -1.0]), f64([0.3, 3.0, -1.2])), check=_finite,
         grad=True, name="grad"),
    Case("huber_loss", lambda z, p: L.huber_loss(z, p, delta=0.0), (f32([0.0]), f32([1.0])),
         raises=tp.TensorplugError, match="delta", name="bad-delta"),
    # log loss: -ln(0.8) and -ln(1 - 0.3), epsilon 1e-7
    Case("log_loss", lambda z, p: L.log_loss(z, p, reduction="none"), (f64([1.0, 0.0]), f64([0.8, 0.3])),
         f64([-math.log(0.8 + 1e-7), -math.log(0.7 + 1e-7)]), rtol=1e-12, name="values"),
    Case("log_loss", L.log_loss, (f64([1.0, 0.0, 0.5]), f64([0.8, 0.3, 0.6])), check=_finite, grad=True,
         name="grad"),
    # hinge: labels {0, 1} -> {-1, 1}; max(0, 1 - y p): [max(0, 1 - 0.3), max(0, 1 + 2)] -> [0.7, 3]
    Case("hinge_loss", lambda z, p: L.hinge_loss(z, p, reduction="none"), (f32([1.0, 0.0]), f32([0.3, 2.0])),
         f32([0.7, 3.0]), name="values"),
    Case("hinge_loss", L.hinge_loss, (f64([1.0, 0.0, 1.0]), f64([0.3, 0.5, -0.4])), check=_finite,
         grad=True, name="grad"),
]  # fmt: skip


def _check_dropout(y: np.ndarray, rate: float) -> None:
    kept = y != 0
    assert np.allclose(y[kept], 1.0 / (1.0 - rate)), "kept values are scaled by 1 / (1 - rate)"
    assert abs(kept.mean() - (1.0 - rate)) < 0.05, f"kept fraction {kept.mean()} far from {1 - rate}"
