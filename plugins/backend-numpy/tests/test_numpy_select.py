"""The numpy backend's Select on large float inputs takes a branch-free path: it must equal np.where bit for bit.

Expected values come from ``np.where`` on the same arrays; the conformance
cases of Select are small, so they exercise the other path.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp

SHAPES = [
    ((128, 256), (128, 256), ()),  # a ReLU-style gradient: a scalar "else"
    ((128, 256), (256,), (128, 1)),  # every operand broadcast differently
    ((64, 1), (1, 128), (64, 128)),
    ((5000,), (5000,), (5000,)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape_c", "shape_t", "shape_e"), SHAPES)
def test_large_select_equals_np_where_bit_for_bit(
    dtype: str, shape_c: tuple[int, ...], shape_t: tuple[int, ...], shape_e: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(7)
    condition = rng.random(shape_c) > 0.5
    t = rng.standard_normal(shape_t).astype(dtype)
    e = rng.standard_normal(shape_e).astype(dtype)
    t.flat[:3] = [np.nan, np.inf, -0.0]  # special values must come through unchanged
    e.flat[0] = -np.inf
    got = tp.where(tp.tensor(condition), tp.tensor(t), tp.tensor(e)).numpy()
    expected = np.where(condition, t, e)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    assert np.array_equal(got.view(np.uint8), expected.view(np.uint8))
