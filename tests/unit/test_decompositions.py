"""A kernel's decomposition: its ops, run as the kernel on a backend that has none of its own (before any
fallback, with no data moved), and the way backprop differentiates a kernel that has no gradient."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.kernel_factories import unary


@pytest.fixture(autouse=True)
def _restored(tensorplug_registries: Any) -> Any:
    """The registries as they were, and the numpy backend active, after each test."""
    yield
    tp.set_backend("numpy")


def swish_ops(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    return inputs["x"] * tp.sigmoid(inputs["x"] * attrs.get("beta", 1.0))


def swish(x: Any, beta: float = 1.0) -> Any:
    return tp.run_kernel("Swish", {"x": x}, {"beta": beta})


@pytest.fixture
def numpy_only_swish(_restored: Any) -> None:
    """A custom kernel registered for numpy only, with its decomposition and no gradient."""
    tp.register_kernel(
        "Swish", "numpy", lambda inputs, attrs, b: inputs["x"] / (1 + np.exp(-attrs["beta"] * inputs["x"]))
    )
    tp.register_decomposition("Swish", swish_ops)


def expected(x: list[float], beta: float = 1.0) -> np.ndarray:
    a = np.array(x, dtype=np.float64)
    return a / (1 + np.exp(-beta * a))


@pytest.mark.usefixtures("numpy_only_swish")
@pytest.mark.parametrize("backend", ["torch"])  # dask: plugins/backend-dask/tests/test_dask_decompositions.py
def test_a_kernel_registered_for_numpy_runs_on_another_backend_as_its_ops(backend: str) -> None:
    pytest.importorskip(backend)
    tp.set_backend(backend)
    x = tp.tensor([-1.0, 0.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FallbackWarning: nothing runs on numpy
        y = swish(x, beta=1.5)
    assert y.backend == backend
    np.testing.assert_allclose(y.numpy(), expected([-1.0, 0.5, 2.0], 1.5), rtol=1e-6)
    row = next(r for r in tp.coverage().rows if r.kernel == "Swish")
    assert row.backends[backend] == "decomposition:runtime"
    assert "Swish" in tp.coverage().decomposed_for(backend)


@pytest.mark.usefixtures("numpy_only_swish")
def test_a_kernel_without_a_gradient_is_differentiated_through_its_decomposition_to_second_order() -> None:
    tp.set_backend("numpy")
    x = tp.tensor([-1.2, 0.3, 2.0], "float64")
    g = tp.grad(lambda x: tp.sum(swish(x)))(x)
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(g.numpy(), s + x.numpy() * s * (1 - s), rtol=1e-12)
    tp.testing.check_grads(lambda x: swish(x, beta=0.7), [tp.tensor([0.4, -1.1], "float64")], order=2)


@pytest.mark.usefixtures("numpy_only_swish")
def test_a_registered_gradient_comes_before_the_decomposition() -> None:
    tp.set_backend("numpy")
    tp.register_gradient("Swish", lambda dy, saved, attrs: (dy * 10.0,), new_kernel=True)
    assert tp.grad(lambda x: tp.sum(swish(x)))(tp.tensor([1.0])).tolist() == [10.0]


@pytest.mark.usefixtures("numpy_only_swish")
def test_a_traced_function_replays_the_decomposed_kernel() -> None:
    pytest.importorskip("torch")
    tp.set_backend("torch")
    f = tp.function(lambda x: swish(x) * 2.0)
    x = tp.tensor([-1.0, 0.5, 2.0])
    eager = (swish(x) * 2.0).tolist()
    assert f(x).tolist() == eager
    assert f(x).tolist() == eager


def test_a_decomposition_that_calls_its_own_kernel_is_refused_naming_it() -> None:
    tp.register_kernel("Loop", "numpy", lambda inputs, attrs, b: inputs["x"])
    tp.register_decomposition("Loop", lambda inputs, attrs: tp.run_kernel("Loop", {"x": inputs["x"]}))
    pytest.importorskip("torch")
    tp.set_backend("torch")
    with pytest.raises(tp.KernelError, match=r"the decomposition of 'Loop' .* calls 'Loop' itself on backend 'torch'"):
        tp.run_kernel("Loop", {"x": tp.tensor([1.0])})


def test_without_its_decomposition_the_kernel_is_missing_again() -> None:
    pytest.importorskip("torch")
    tp.register_kernel("Swish", "numpy", unary(lambda x: x / (1 + np.exp(-x))))
    tp.register_decomposition("Swish", swish_ops)
    tp.set_backend("torch")
    assert swish(tp.tensor([0.0])).tolist() == [0.0]
    tp.unregister_decomposition("Swish")
    with pytest.raises(tp.KernelNotFoundError):
        swish(tp.tensor([0.0]))
    assert tp.decompositions() == []


@pytest.mark.parametrize("prefers", [False, True])
def test_a_backend_that_prefers_decompositions_replays_them_in_place_of_the_kernel(
    prefers: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def counted(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return inputs["x"] / (1 + np.exp(-attrs["beta"] * inputs["x"]))

    tp.register_kernel("Swish", "numpy", counted)
    tp.register_decomposition("Swish", swish_ops)
    monkeypatch.setattr(tp.backend("numpy"), "prefers_decompositions", prefers)
    f = tp.function(lambda x: swish(x, 2.0) + 1.0)
    x = tp.tensor([-1.0, 0.5, 2.0])
    f(x)  # the trace runs the kernel eagerly
    calls.clear()
    replayed = f(x).numpy()
    assert bool(calls) is not prefers  # preferred: the replay runs Multiply, Sigmoid... in its place
    np.testing.assert_allclose(replayed, expected([-1.0, 0.5, 2.0], 2.0) + 1.0, rtol=1e-6)
    assert [s.kernel for s in f.program(x).kernel_steps] == ["Swish", "Add"]  # the program as traced
