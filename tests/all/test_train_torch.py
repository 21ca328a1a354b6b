"""tp.train on the torch backend: every optimizer's steps agree with the numpy backend's, and state follows a
backend switch."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

_names = itertools.count()

OPTIMIZERS: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"learning_rate": 0.1}),
    ("Momentum", {"learning_rate": 0.1, "momentum": 0.9}),
    ("Momentum", {"learning_rate": 0.05, "momentum": 0.8, "use_nesterov": True}),
    ("Adam", {}),
    ("Adam", {"learning_rate": 0.05, "beta1": 0.8, "beta2": 0.95}),
    ("RMSProp", {"learning_rate": 0.01}),
    ("RMSProp", {"learning_rate": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"learning_rate": 0.1}),
]
IDS = [f"{kind}-{'-'.join(map(str, config.values()))}" for kind, config in OPTIMIZERS]
TOLERANCES = {"float64": {"rtol": 1e-12, "atol": 1e-14}, "float32": {"rtol": 1e-5, "atol": 1e-6}}


def train(
    kind: str, config: dict[str, Any], dtype: str, backends: list[str]
) -> tuple[list[np.ndarray], list[tp.Variable], tp.train.Optimizer]:
    """One step per entry of ``backends`` (switching to it first) of minimizing sum(a * w**2 + b * w) from a
    seeded start; returns the final weights, the variables and the optimizer."""
    rng = np.random.default_rng(13)
    shapes = [(5, 3), (3,)]
    a = [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]
    b = [rng.standard_normal(s).astype(dtype) for s in shapes]
    tp.set_backend(backends[0])
    variables = [tp.variable(rng.standard_normal(s).astype(dtype), name=f"train_torch/w{next(_names)}") for s in shapes]
    optimizer: tp.train.Optimizer = getattr(tp.train, kind)(**config)

    def loss() -> tp.Tensor:
        terms = [tp.sum(tp.tensor(ai) * w * w + tp.tensor(bi) * w) for ai, bi, w in zip(a, b, variables, strict=True)]
        return terms[0] + terms[1]

    for backend in backends:
        tp.set_backend(backend)
        optimizer.minimize(loss, variables)
    return [v.numpy().copy() for v in variables], variables, optimizer


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("kind", "config"), OPTIMIZERS, ids=IDS)
def test_torch_steps_agree_with_numpy_steps(kind: str, config: dict[str, Any], dtype: str) -> None:
    on_numpy, _, _ = train(kind, config, dtype, ["numpy"] * 4)
    on_torch, variables, optimizer = train(kind, config, dtype, ["torch"] * 4)
    for v in variables:
        assert (v.backend, v.dtype) == ("torch", dtype)
    for name, t in optimizer.get_weights()[1:]:
        assert (t.backend, t.dtype) == ("torch", dtype), name
    for got, want in zip(on_torch, on_numpy, strict=True):
        np.testing.assert_allclose(got, want, **TOLERANCES[dtype])


@pytest.mark.parametrize(("kind", "config"), OPTIMIZERS, ids=IDS)
def test_state_follows_a_backend_switch(kind: str, config: dict[str, Any]) -> None:
    # two steps on torch, then two on numpy: the variables and the slots move along, as tensors do
    switched, variables, optimizer = train(kind, config, "float64", ["torch", "torch", "numpy", "numpy"])
    on_numpy, _, _ = train(kind, config, "float64", ["numpy"] * 4)
    for got, want in zip(switched, on_numpy, strict=True):
        np.testing.assert_allclose(got, want, **TOLERANCES["float64"])
    assert optimizer.iterations == 4
    assert all(v.backend == "numpy" for v in variables)
