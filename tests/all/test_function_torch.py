"""tp.function on the torch backend: replays equal eager calls bit for bit (same kernels, same raw inputs)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp

pytestmark = pytest.mark.usefixtures("on_torch")

rng = np.random.default_rng(41)


def f32(*shape: int) -> tp.Tensor:
    return tp.tensor(rng.standard_normal(shape).astype(np.float32))


def same(a: Any, b: Any) -> None:
    if isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            same(x, y)
        return
    assert a.backend == b.backend == "torch"
    assert (a.shape, a.dtype) == (b.shape, b.dtype)
    assert a.numpy().tobytes() == b.numpy().tobytes()


def mlp_loss(x: tp.Tensor, labels: tp.Tensor, *params: tp.Tensor) -> tp.Tensor:
    h = tp.relu(tp.matmul(x, params[0]) + params[1])
    return tp.losses.softmax_cross_entropy(labels, tp.matmul(h, params[2]) + params[3])


def weights(seed: int) -> list[np.ndarray]:
    r = np.random.default_rng(seed)
    return [
        (r.standard_normal((8, 16)) / 3).astype(np.float32),
        np.zeros(16, np.float32),
        (r.standard_normal((16, 4)) / 4).astype(np.float32),
        np.zeros(4, np.float32),
    ]


def onehot(n: int) -> tp.Tensor:
    return tp.tensor(np.eye(4, dtype=np.float32)[rng.integers(0, 4, n)])


def test_value_and_grads_replay_bit_for_bit_on_torch() -> None:
    params = [tp.tensor(w) for w in weights(0)]

    def step(x: tp.Tensor, labels: tp.Tensor, *ps: tp.Tensor) -> Any:
        return tp.value_and_grads(lambda *ws: mlp_loss(x, labels, *ws))(list(ps))

    traced = tp.function(step)
    for _ in range(3):
        x, labels = f32(6, 8), onehot(6)
        value, grads = traced(x, labels, *params)
        eager_value, eager_grads = step(x, labels, *params)
        same([value, *grads], [eager_value, *eager_grads])
    assert traced.trace_count == 1


@pytest.mark.parametrize("make", [lambda: tp.train.SGD(0.1), lambda: tp.train.Adam(0.01)], ids=["sgd", "adam"])
def test_an_optimizer_step_replays_bit_for_bit_on_torch(make: Any) -> None:
    eager_vars = [tp.variable(w) for w in weights(1)]
    traced_vars = [tp.variable(w) for w in weights(1)]
    eager_opt, traced_opt = make(), make()

    @tp.function
    def step(x: tp.Tensor, labels: tp.Tensor) -> tp.Tensor:
        return traced_opt.minimize(lambda: mlp_loss(x, labels, *traced_vars), traced_vars)

    for _ in range(5):
        x, labels = f32(6, 8), onehot(6)
        eager_loss = eager_opt.minimize(lambda: mlp_loss(x, labels, *eager_vars), eager_vars)  # noqa: B023 (called here)
        same(step(x, labels), eager_loss)
    same([tp.tensor(v) for v in traced_vars], [tp.tensor(v) for v in eager_vars])
    assert step.trace_count == 1


def test_seeded_dropout_and_second_order_replay_on_torch() -> None:
    def f(x: tp.Tensor) -> Any:
        d2 = tp.grad(lambda u: tp.sum(tp.grad(lambda v: tp.sum(tp.tanh(v) * v))(u)))(x)
        return tp.dropout(x, 0.5, seed=5), d2

    traced = tp.function(f)
    for _ in range(3):
        x = f32(32)
        same(list(traced(x)), list(f(x)))
    assert traced.trace_count == 1


def test_moving_a_computed_tensor_to_another_backend_runs_eagerly_and_a_moved_constant_replays() -> None:
    f = tp.function(lambda x: (x * 2.0).to_backend("numpy"))
    with pytest.warns(
        tp.FunctionWarning,
        match=r"float32\[2\] \(computed by the function\): it was moved from "
        r"backend 'torch' to 'numpy'",
    ):
        f(tp.tensor([1.0, 1.0]))
    out = f(tp.tensor([0.5, 1.5]))
    assert (out.backend, out.tolist()) == ("numpy", [1.0, 3.0])

    tp.set_backend("numpy")
    constant = tp.tensor([1.0, 2.0])
    tp.set_backend("torch")
    g = tp.function(lambda x: x + constant)  # the constant moves to torch once, at trace time
    g(tp.tensor([1.0, 1.0]))
    assert g(tp.tensor([0.5, 0.5])).tolist() == [1.5, 2.5]
    assert g.trace_count == 1
