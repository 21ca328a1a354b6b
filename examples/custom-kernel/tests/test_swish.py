"""Swish, declared by this distribution for numpy only with a decomposition, a gradient and an ONNX translation:
it runs on every installed backend as that backend's ops, differentiates, and exports to ONNX (by its translation,
or as its decomposition) in a model ONNX Runtime runs."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import tensorplug as tp
from tensorplug.testing import check_grads

from tensorplug_swish import swish

BACKENDS = [name for name in ("numpy", "torch", "dask") if name in tp.list_backends()]
X = np.linspace(-4.0, 4.0, 12).reshape(3, 4)


def expected(x: np.ndarray, beta: float) -> np.ndarray:
    return x / (1.0 + np.exp(-beta * x))  # float64 throughout: the reference


def test_the_distribution_declares_the_kernel_for_numpy_and_the_rest_for_every_backend() -> None:
    (info,) = [p for p in tp.plugins() if p.distribution == "tensorplug-swish"]
    assert info.status == "loaded"
    assert info.contract == "1.1"
    assert info.decompositions == ["Swish"]
    assert info.translations == ["Swish (onnx)"]
    row = {r.kernel: r for r in tp.coverage().rows}["Swish"]
    assert row.backends["numpy"] == "tensorplug-swish"
    for backend in BACKENDS[1:]:
        assert row.backends[backend] == "decomposition:tensorplug-swish"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_it_runs_on_every_backend_without_moving_data(backend: str, dtype: str) -> None:
    tp.set_backend(backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FallbackWarning (data moved to another backend) fails the test
        y = swish(tp.tensor(X.astype(dtype)), beta=1.5)
        assert y.backend == backend
        assert y.dtype == dtype
        np.testing.assert_allclose(y.numpy(), expected(X, 1.5), rtol=2e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_its_gradient_is_checked_numerically_to_second_order(backend: str) -> None:
    tp.set_backend(backend)
    check_grads(lambda x: swish(x, beta=1.5), [X], order=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_its_gradient_traced_by_tp_function_equals_eager(backend: str) -> None:
    tp.set_backend(backend)
    x = tp.tensor(X)
    gradient = tp.grad(lambda x: swish(x, beta=0.5).sum())
    traced = tp.function(gradient)
    eager = gradient(x).numpy()
    for _ in range(2):  # the trace, then its replay
        np.testing.assert_allclose(traced(x).numpy(), eager, rtol=1e-12)


def run_onnx(model: Any, *inputs: np.ndarray) -> list[Any]:
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, {i.name: v for i, v in zip(model.graph.input, inputs, strict=True)}))


def predict(x: tp.Tensor) -> tp.Tensor:
    return tp.sum(swish(x * 2.0, beta=1.5), axis=1)


def test_it_exports_to_onnx_by_its_translation_and_runs_in_onnx_runtime() -> None:
    pytest.importorskip("tensorplug_onnx")
    x = X.astype(np.float32)
    model = tp.export(predict, tp.tensor(x), format="onnx")
    assert [n.op_type for n in model.graph.node] == ["Mul", "Mul", "Sigmoid", "Mul", "ReduceSum"]
    (got,) = run_onnx(model, x)
    np.testing.assert_allclose(got, predict(tp.tensor(x)).numpy(), rtol=1e-5, atol=1e-5)


def test_without_its_translation_it_exports_as_its_decomposition() -> None:
    pytest.importorskip("tensorplug_onnx")
    with pytest.warns(tp.PluginWarning, match="removed the translation"):  # another distribution's
        tp.unregister_translation("onnx", "Swish", source="tensorplug-swish")
    x = X.astype(np.float32)
    model = tp.export(predict, tp.tensor(x), format="onnx")
    kinds = [n.op_type for n in model.graph.node]
    assert "Swish" not in kinds
    assert kinds[-1] == "ReduceSum"
    (got,) = run_onnx(model, x)
    np.testing.assert_allclose(got, predict(tp.tensor(x)).numpy(), rtol=1e-5, atol=1e-5)


def test_without_translation_or_decomposition_the_export_says_both_ways_and_who_provides_it() -> None:
    pytest.importorskip("tensorplug_onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.PluginWarning)  # unregistering another distribution's entries warns
        tp.unregister_translation("onnx", "Swish", source="tensorplug-swish")
        tp.unregister_decomposition("Swish", source="tensorplug-swish")
    with pytest.raises(tp.ExportError) as refused:
        tp.export(predict, tp.tensor(X.astype(np.float32)), format="onnx")
    message = str(refused.value)
    assert "'Swish'" in message
    assert "it comes from tensorplug-swish" in message
    assert "tp.register_translation('onnx', 'Swish', translate)" in message
    assert "tp.register_decomposition('Swish', fn)" in message
