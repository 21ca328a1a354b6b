"""Numeric gradient checks (first and second order) for every differentiable kernel and composite.

Each case is keyed by the kernel it exercises; a test below makes sure every
kernel with a registered gradient has a case, so a new gradient cannot land
unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import kernel_names as K

rng = np.random.default_rng(1234)


def normal(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def positive(*shape: int) -> np.ndarray:
    return rng.uniform(0.5, 2.0, shape)


def away_from_zero(*shape: int) -> np.ndarray:
    return rng.uniform(0.3, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def distinct(*shape: int) -> np.ndarray:
    """Values far apart, so that max and maximum have no ties within the finite-difference step."""
    values = np.arange(int(np.prod(shape)), dtype=np.float64) * 0.37 - 1.0
    return rng.permutation(values).reshape(shape)


Case = tuple[Callable[..., Any], list[np.ndarray]] | tuple[Callable[..., Any], list[np.ndarray], dict[str, float]]

CASES: dict[str, list[Case]] = {
    K.NEG: [(tp.neg, [normal(3)])],
    K.EXP: [(tp.exp, [normal(2, 3)])],
    K.LOG: [(tp.log, [positive(4)])],
    K.SQRT: [(tp.sqrt, [positive(4)])],
    K.SQUARE: [(tp.square, [normal(3)])],
    K.TANH: [(tp.tanh, [normal(3)])],
    K.SIGMOID: [(tp.sigmoid, [normal(3)])],
    K.RELU: [(tp.relu, [away_from_zero(5)])],
    K.IDENTITY: [(tp.identity, [normal(2)])],
    K.ADD: [(tp.add, [normal(2, 3), normal(3)]), (tp.add, [normal(2, 1), normal(1, 4)])],
    K.SUB: [(tp.sub, [normal(2, 3), normal(2, 1)])],
    K.MULTIPLY: [(tp.mul, [normal(2, 3), normal(3)]), (tp.mul, [normal(4), normal()])],
    K.REAL_DIV: [(tp.div, [normal(2, 3), away_from_zero(3)])],
    K.POW: [(tp.pow, [positive(2, 3), normal(3)])],
    K.MAXIMUM: [(tp.maximum, [distinct(2, 3), distinct(3) + 0.1])],
    K.SELECT: [(lambda t, e: tp.where(tp.tensor([[True], [False]]), t, e), [normal(2, 3), normal(3)])],
    K.SUM: [
        (lambda x: tp.sum(x), [normal(2, 3)]),
        (lambda x: tp.sum(x, 1, keepdims=True), [normal(2, 3)]),
        (lambda x: tp.sum(x, (0, 2)), [normal(2, 3, 2)]),
    ],
    K.MEAN: [(lambda x: tp.mean(x, 0), [normal(3, 2)]), (lambda x: tp.mean(x), [normal(4)])],
    K.MAX: [(lambda x: tp.max(x, 1), [distinct(3, 4)]), (lambda x: tp.max(x, keepdims=True), [distinct(2, 2)])],
    K.BATCH_MAT_MUL: [
        (tp.matmul, [normal(2, 3), normal(3, 4)]),
        (lambda a, b: tp.matmul(a, b, transpose_a=True), [normal(3, 2), normal(3, 4)]),
        (lambda a, b: tp.matmul(a, b, transpose_b=True), [normal(2, 3), normal(4, 3)]),
        (lambda a, b: tp.matmul(a, b, transpose_a=True, transpose_b=True), [normal(3, 2), normal(4, 3)]),
        (tp.matmul, [normal(2, 1, 2, 3), normal(4, 3, 2)]),
        (tp.matmul, [normal(3), normal(3, 2)]),
    ],
    K.RESHAPE: [(lambda x: tp.reshape(x, (3, 2)), [normal(2, 3)])],
    K.TRANSPOSE: [(lambda x: tp.transpose(x, (1, 2, 0)), [normal(2, 3, 4)])],
    K.BROADCAST_TO: [(lambda x: tp.broadcast_to(x, (2, 3, 4)), [normal(3, 1)])],
    # float64 -> float32 rounds, so the (linear) cast is checked with a large step and a looser tolerance
    K.CAST: [(lambda x: tp.cast(x, "float32"), [normal(3)], {"eps": 0.1, "rtol": 1e-4})],
    K.SOFTMAX: [(tp.softmax, [normal(2, 4)]), (lambda x: tp.softmax(x, 0), [normal(3, 2)])],
}

COMPOSITES: dict[str, Case] = {
    "log_softmax": (tp.log_softmax, [normal(2, 5)]),
    "log_sum_exp": (lambda x: tp.log_sum_exp(x, 1), [normal(3, 4)]),
    "moving_average": (lambda v, x: tp.moving_average(v, x, 0.9, step=3), [normal(3), normal(3)]),
    "softmax_cross_entropy": (
        lambda labels, logits: tp.losses.softmax_cross_entropy(labels, logits),
        [rng.dirichlet(np.ones(4), 3), normal(3, 4)],
    ),
    "softmax_cross_entropy_weighted_smoothed": (
        lambda logits: tp.losses.softmax_cross_entropy(
            tp.tensor(np.eye(3)[[0, 2]]), logits, weights=tp.tensor([1.0, 3.0]), label_smoothing=0.1
        ),
        [normal(2, 3)],
    ),
    "mlp_layer": (lambda x, w, b: tp.tanh(tp.matmul(x, w) + b), [normal(4, 3), normal(3, 2), normal(2)]),
}


@pytest.mark.parametrize(
    ("kernel", "index"), [(k, i) for k, cases in CASES.items() for i in range(len(cases))], ids=str
)
def test_kernel_gradient_matches_finite_differences(kernel: str, index: int) -> None:
    f, args, *options = CASES[kernel][index]
    tp.testing.check_grads(f, [tp.tensor(a) for a in args], order=2, **(options[0] if options else {}))


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_gradient_matches_finite_differences(name: str) -> None:
    f, args = COMPOSITES[name]
    tp.testing.check_grads(f, [tp.tensor(a) for a in args], order=2)


def test_every_differentiable_kernel_has_a_gradient_check() -> None:
    differentiable: set[str] = set()
    for name in K.CATALOGUE:
        spec = tp.get_gradient(name)
        assert spec is not None, f"kernel {name} has neither a gradient nor a not-differentiable entry"
        if spec.grad is not None:
            differentiable.add(name)
    assert differentiable - set(CASES) == set()


def test_check_grads_catches_a_wrong_gradient() -> None:
    @tp.register_gradient("Tanh", outputs_to_save=[0], override=True)
    def off_by_a_bit(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        (y,) = saved
        return (dy * (1.0 - y * y) * 1.001,)

    try:
        with pytest.raises(AssertionError, match="differ"):
            tp.testing.check_grads(tp.tanh, [tp.tensor([0.3, -0.7])], order=1)
    finally:
        tp.unregister_gradient("Tanh")


def test_check_grads_catches_a_wrong_second_derivative() -> None:
    # First derivative right, but written with a constant, so the second derivative is lost.
    @tp.register_gradient("Square", inputs_to_save=["x"], override=True)
    def detached(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        (x,) = saved
        return (dy * tp.stop_gradient(x) * 2.0,)

    try:
        tp.testing.check_grads(tp.square, [tp.tensor([0.3, -0.7])], order=1)
        with pytest.raises(AssertionError, match="order 1 left"):
            tp.testing.check_grads(tp.square, [tp.tensor([0.3, -0.7])], order=2)
    finally:
        tp.unregister_gradient("Square")
