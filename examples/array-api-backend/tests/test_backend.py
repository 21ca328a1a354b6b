"""The array_api backend itself: registration, lazy imports, dtypes, data movement, namespaces, fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from typing import Any

import array_api_compat
import array_api_strict
import numpy as np
import pytest
import tensorplug as tp

from tensorplug_array_api._backend import ENV_NAMESPACE, ArrayAPIBackend
from tensorplug_array_api.plugin import BACKEND, FALLBACK


def _is_strict(raw: Any) -> bool:
    return array_api_compat.array_namespace(raw) is array_api_strict


def _python(code: str, **env: str) -> Any:
    """Run ``code`` in a fresh interpreter and return the JSON it prints."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, **env}
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_plugin_declares_a_low_priority_backend_falling_back_to_numpy() -> None:
    info = next(p for p in tp.plugins() if p.distribution == "tensorplug-array-api")
    assert info.backends == [BACKEND]
    assert tp.list_backends()[-1] == BACKEND  # never the default while numpy is installed
    from tensorplug._runtime._engine import engine

    assert engine.specs[BACKEND].fallback == FALLBACK == "numpy"


def test_import_tensorplug_imports_neither_the_namespace_nor_array_api_compat() -> None:
    loaded = _python(
        "import sys, json, tensorplug as tp; "
        "print(json.dumps([m for m in ('array_api_strict', 'array_api_compat', 'tensorplug_array_api._backend',"
        " 'tensorplug_array_api._unary') if m in sys.modules] + [tp.get_backend()]))"
    )
    assert loaded == ["numpy"]


def test_storage_is_the_namespace_s_array_and_dtypes_round_trip(strict: None) -> None:
    for dtype in tp.DTYPES:
        t = tp.tensor(np.arange(3).astype(dtype))
        assert _is_strict(t.raw)
        assert t.dtype == dtype
        assert t.numpy().dtype == np.dtype(dtype)
        assert t.backend == BACKEND


def test_results_of_native_and_fallback_kernels_live_on_the_backend(strict: None) -> None:
    x = tp.tensor([[0.5, -1.0], [2.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.FallbackWarning)
        for out in (tp.exp(x), tp.erf(x), tp.einsum("ij,jk->ik", x, x), x @ x):
            assert out.backend == BACKEND
            assert _is_strict(out.raw)


def test_each_fallback_kernel_warns_once() -> None:
    messages = _python(  # a fresh interpreter: nothing warned about yet
        "import json, warnings, tensorplug as tp; tp.set_backend('array_api'); x = tp.tensor([0.1, 0.2]); "
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3): tp.erf(x); tp.exp(x)\n"
        "print(json.dumps([str(w.message) for w in caught if issubclass(w.category, tp.FallbackWarning)]))"
    )
    assert len(messages) == 1  # Erf, once; Exp is native
    assert "backend 'array_api' has no kernel 'Erf'" in messages[0]
    assert "fallback backend 'numpy'" in messages[0]


def test_data_moves_between_numpy_and_array_api() -> None:
    tp.set_backend("numpy")
    on_numpy = tp.tensor([1.0, 2.0])
    tp.set_backend(BACKEND)
    total = on_numpy + tp.tensor([10.0, 20.0])  # moved in when a kernel uses it
    assert total.backend == BACKEND
    assert total.tolist() == [11.0, 22.0]
    back = total.to_backend("numpy")
    assert back.backend == "numpy"
    assert isinstance(back.raw, np.ndarray)
    assert back.tolist() == [11.0, 22.0]


def test_dlpack_in_and_out(strict: None) -> None:
    t = tp.from_dlpack(np.arange(4, dtype=np.float32))
    assert t.backend == BACKEND
    assert _is_strict(t.raw)
    assert np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tp.memory()[BACKEND]["bytes"] >= 16


def test_gradients_through_native_and_fallback_kernels_match_numpy() -> None:
    rng = np.random.default_rng(0)
    x_host, w_host = rng.standard_normal((1, 4, 4, 2)), rng.standard_normal((3, 3, 2, 3))

    def loss(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
        y = tp.conv2d(x, w, 1, "same")  # fallback
        return tp.sum(tp.tanh(y) * tp.erf(y)) + tp.sum(tp.softmax(tp.reshape(y, (16, 3))))  # native, fallback

    tp.set_backend("numpy")
    expected = [g.numpy() for g in tp.grads(loss)([tp.tensor(x_host), tp.tensor(w_host)])]
    tp.set_backend(BACKEND)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.FallbackWarning)
        got = tp.grads(loss)([tp.tensor(x_host), tp.tensor(w_host)])
    for g, want in zip(got, expected, strict=True):
        assert g.backend == BACKEND
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)


def test_no_data_dependent_shapes_or_boolean_indexing_needed(strict: None) -> None:
    """The kernels stay within the standard's core: array_api_strict's optional features can be off."""
    array_api_strict.set_array_api_strict_flags(boolean_indexing=False, data_dependent_shapes=False)
    try:
        x = tp.tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
        assert tp.gather(x, tp.tensor([2, 0]), axis=1).tolist() == [[2.0, 3.0], [5.0, 0.0]]
        with pytest.raises(tp.KernelError, match="index 7 is out of range"):
            tp.gather(x, tp.tensor([0, 7]), axis=1)
        assert tp.top_k(x, 2)[0].tolist() == [[3.0, 2.0], [5.0, 0.0]]
    finally:
        array_api_strict.reset_array_api_strict_flags()


def test_an_older_standard_is_refused_by_name() -> None:
    array_api_strict.set_array_api_strict_flags(api_version="2023.12")
    try:
        with pytest.raises(tp.BackendError, match=r"implements version 2023\.12 .* need 2024\.12 or later"):
            ArrayAPIBackend("array_api_strict")
    finally:
        array_api_strict.reset_array_api_strict_flags()


# -- other namespaces -------------------------------------------------------------------------------------------------


def test_the_namespace_option_wraps_numpy_through_array_api_compat(namespace: str) -> None:
    tp.set_backend(BACKEND, namespace="numpy")
    try:
        assert tp.backend().namespace == "array_api_compat.numpy"
        x = tp.tensor([[1, 2], [3, 4]])
        assert isinstance(x.raw, np.ndarray)
        assert (x @ x).tolist() == [[7, 10], [15, 22]]
        assert (x > 2).dtype == "bool"
        assert tp.cumsum(x, 1, exclusive=True).tolist() == [[0, 1], [0, 3]]
    finally:
        tp.set_backend(BACKEND, namespace=namespace)


def test_the_environment_variable_picks_the_namespace() -> None:
    out = _python(
        "import json, tensorplug as tp; tp.set_backend('array_api'); "
        "print(json.dumps([tp.backend().namespace, type(tp.tensor([1.0]).raw).__module__]))",
        **{ENV_NAMESPACE: "numpy"},
    )
    assert out == ["array_api_compat.numpy", "numpy"]


def test_torch_too_when_it_is_installed(namespace: str) -> None:
    torch = pytest.importorskip("torch")
    tp.set_backend(BACKEND, namespace="torch")
    try:
        x = tp.tensor([[1.0, -2.0], [3.0, 4.0]])
        assert isinstance(x.raw, torch.Tensor)
        assert tp.relu(x @ x).tolist() == [[0.0, 0.0], [15.0, 10.0]]
    finally:
        tp.set_backend(BACKEND, namespace=namespace)


def test_an_unknown_namespace_says_what_to_do(namespace: str) -> None:
    with pytest.raises(tp.BackendError, match=f"cannot import the namespace 'no_such_lib'.*{ENV_NAMESPACE}"):
        tp.set_backend(BACKEND, namespace="no_such_lib")
    tp.set_backend(BACKEND, namespace=namespace)
