"""tp.initializers on the torch backend: the tensors live on torch, seeds repeat, the spread is the formula's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorplug as tp

pytestmark = pytest.mark.usefixtures("on_torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_he_normal_and_truncated_normal_on_torch(dtype: str) -> None:
    w = tp.initializers.he_normal((3, 3, 16, 32), dtype=dtype, seed=0)  # fan_in 3 * 3 * 16 = 144
    assert w.backend == "torch"
    assert w.dtype == dtype
    assert type(w.raw).__module__.startswith("torch")
    np.testing.assert_array_equal(w.numpy(), tp.initializers.he_normal((3, 3, 16, 32), dtype=dtype, seed=0).numpy())
    assert abs(float(w.numpy().std()) / math.sqrt(2 / 144) - 1) < 0.05  # 4,608 samples
    t = tp.initializers.truncated_normal((20_000,), stddev=0.5, dtype=dtype, seed=1)
    assert t.backend == "torch"
    assert float(np.abs(t.numpy()).max()) <= 1.0 * (1 + 1e-6)
