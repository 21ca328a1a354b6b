"""A kernel registered for numpy only, with its decomposition, runs on dask as dask ops: lazily, across chunks, with
no data moved to numpy and no FallbackWarning, and it is differentiated through the decomposition."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import tensorplug as tp


def test_a_numpy_only_kernel_with_a_decomposition_runs_on_dask_as_its_ops(tensorplug_registries: Any) -> None:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return inputs["x"] / (1 + np.exp(-inputs["x"]))

    tp.register_kernel("Swish", "numpy", kernel)
    tp.register_decomposition("Swish", lambda inputs, attrs: inputs["x"] * tp.sigmoid(inputs["x"]))
    x = tp.tensor([-2.0, -0.5, 0.0, 0.5, 2.0])  # three chunks of two
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FallbackWarning: nothing runs on numpy
        y = tp.run_kernel("Swish", {"x": x})
        g = tp.grad(lambda x: tp.sum(tp.run_kernel("Swish", {"x": x})))(x)
    assert y.backend == "dask"
    a = x.numpy().astype(np.float64)
    s = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(y.numpy(), a * s, rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), s + a * s * (1 - s), rtol=1e-6)
    assert tp.coverage().decomposed_for("dask") == ["Swish"]
