"""tp.initializers on the dask backend: lazy dask storage over several chunks, seeds repeat, bounds hold."""

from __future__ import annotations

import math

import dask.array as da
import numpy as np

import tensorplug as tp


def test_initialisers_give_dask_tensors_with_the_formulas_spread() -> None:
    w = tp.initializers.glorot_uniform((60, 40), seed=0)  # chunks of two: 600 blocks
    assert w.backend == "dask"
    assert isinstance(w.raw, da.Array)
    values = w.numpy()
    np.testing.assert_array_equal(values, tp.initializers.glorot_uniform((60, 40), seed=0).numpy())
    limit = math.sqrt(6 / 100)
    assert np.abs(values).max() <= limit * (1 + 1e-6)
    assert abs(float(values.std()) / (limit / math.sqrt(3)) - 1) < 0.05  # 2,400 samples: ~0.9 % standard error
    t = tp.initializers.truncated_normal((20, 20), mean=1.0, stddev=0.25, seed=1)
    assert t.backend == "dask"
    assert np.abs(t.numpy() - 1.0).max() <= 0.5 * (1 + 1e-6)
    assert tp.initializers.zeros((3, 2)).backend == "dask"
