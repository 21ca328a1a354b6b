"""The dask backend's reduction, scan, linear-algebra, random and neural-network kernels.

Every array here spans several chunks (``chunks=2``, see conftest), so the
kernels are checked across chunk boundaries. Each kernel runs under a
scheduler that refuses to compute (a kernel call must only add tasks), and
its values are compared with the numpy backend's kernel on the same inputs.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
import pytest
from lazy_guard import no_compute
from tensorplug_dask._factories import numpy_kernel

import tensorplug as tp

inf, nan = np.inf, np.nan
RNG = np.random.default_rng(20240611)


def _normal(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _tensor(value: Any) -> Any:
    if isinstance(value, list):
        return [tp.tensor(v) for v in value]
    return tp.tensor(value)


def run(name: str, inputs: dict[str, Any], attrs: dict[str, Any]) -> tuple[Any, np.ndarray]:
    """Kernel ``name`` on dask tensors (nothing computed during the call) and numpy's kernel on the same arrays."""
    tensors = {key: _tensor(value) for key, value in inputs.items()}
    with no_compute():
        out = tp.run_kernel(name, tensors, attrs)
    assert isinstance(out.raw, da.Array)
    expected = np.asarray(numpy_kernel(name)(inputs, attrs, None))
    return out, expected


def assert_matches(out: Any, expected: np.ndarray, rtol: float = 1e-12) -> None:
    """Same dtype, shape and values (NaN where numpy has NaN; -0.0 where it has -0.0); floats within rtol."""
    got = out.numpy()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, equal_nan=True)
        assert np.array_equal(np.signbit(got[got == 0]), np.signbit(expected[got == 0]))
    else:
        np.testing.assert_array_equal(got, expected)


def _with_nan(x: np.ndarray, *where: tuple[int, ...]) -> np.ndarray:
    x = x.copy()
    for index in where:
        x[index] = nan
    return x


X75 = _normal(7, 5)
CONV_X = _normal(5, 6, 7, 3)
CONV_W = _normal(3, 2, 3, 4)
CONV_ATTRS = {"strides": (2, 1), "pad": ((1, 1), (0, 1)), "dilations": (1, 2)}
CONV_DY = _normal(5, 3, 6, 4)  # (6 + 2 - 3) // 2 + 1 = 3 rows, (7 + 1 - 3) // 1 + 1 = 6 columns
POOL_X = _normal(5, 6, 6, 3)
POOL_ATTRS = {"filter_size": (3, 3), "strides": (2, 2), "pad": ((1, 1), (1, 1))}
POOL_DY = _normal(5, 3, 3, 3)
POOL_Y = np.asarray(numpy_kernel("MaxPool")({"x": POOL_X}, POOL_ATTRS, None))
# Ties within windows (many equal values), so MaxPoolGrad's first-maximum rule is checked per chunk.
POOL_TIES = RNG.integers(0, 3, (5, 6, 6, 3)).astype(np.float64)
POOL_TIES_Y = np.asarray(numpy_kernel("MaxPool")({"x": POOL_TIES}, POOL_ATTRS, None))

CASES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("sum-axis0", "Sum", {"x": X75}, {"axis": (0,), "keep_dims": False}),
    ("sum-all-keepdims", "Sum", {"x": X75}, {"axis": (0, 1), "keep_dims": True}),
    ("sum-no-axes", "Sum", {"x": X75}, {"axis": (), "keep_dims": False}),
    ("sum-int32-wraps", "Sum", {"x": np.full((5, 3), 2**30, np.int32)}, {"axis": (0, 1), "keep_dims": False}),
    ("sum-empty-axis", "Sum", {"x": np.zeros((0, 5), np.float32)}, {"axis": (0,), "keep_dims": False}),
    ("prod-axis0-keepdims", "Prod", {"x": 1.0 + 0.1 * X75}, {"axis": (0,), "keep_dims": True}),
    ("prod-inf-times-zero", "Prod", {"x": np.array([2.0, inf, 3.0, 0.0, 5.0])}, {"axis": (0,), "keep_dims": False}),
    ("prod-int32-wraps", "Prod", {"x": np.array([65536, 3, 65536, 1, 1], np.int32)},
     {"axis": (0,), "keep_dims": False}),
    ("mean-all", "Mean", {"x": _normal(9, 4, dtype=np.float32)}, {"axis": (0, 1), "keep_dims": False}),
    ("mean-axis1-keepdims", "Mean", {"x": X75}, {"axis": (1,), "keep_dims": True}),
    ("mean-empty-is-nan", "Mean", {"x": np.zeros((0, 5), np.float32)}, {"axis": (0,), "keep_dims": False}),
    ("max-nan-in-a-later-chunk", "Max", {"x": _with_nan(X75, (5, 2))}, {"axis": (0,), "keep_dims": False}),
    ("max-empty-other-axis", "Max", {"x": np.zeros((0, 5), np.float32)}, {"axis": (1,), "keep_dims": False}),
    ("min-axis1-keepdims", "Min", {"x": X75}, {"axis": (1,), "keep_dims": True}),
    ("min-int64", "Min", {"x": RNG.integers(-(2**40), 2**40, (7, 5))}, {"axis": (0, 1), "keep_dims": False}),
    ("all-axis0", "All", {"x": RNG.random((6, 5)) < 0.8}, {"axis": (0,), "keep_dims": False}),
    ("any-axis1", "Any", {"x": RNG.random((6, 5)) < 0.2}, {"axis": (1,), "keep_dims": True}),
    ("argmax-axis1", "ArgMax", {"x": X75}, {"axis": 1}),
    ("argmin-axis0-nan", "ArgMin", {"x": _with_nan(X75, (3, 1), (6, 1))}, {"axis": 0}),
    ("cumsum-axis0", "Cumsum", {"x": X75}, {"axis": 0, "exclusive": False, "reverse": False}),
    ("cumsum-axis1-exclusive-reverse", "Cumsum", {"x": X75}, {"axis": 1, "exclusive": True, "reverse": True}),
    ("cumprod-axis0-exclusive", "Cumprod", {"x": 1.0 + 0.1 * X75}, {"axis": 0, "exclusive": True, "reverse": False}),
    ("cumprod-axis1-reverse", "Cumprod", {"x": 1.0 + 0.1 * X75}, {"axis": 1, "exclusive": False, "reverse": True}),
    ("matmul-broadcast-batch", "BatchMatMul", {"a": _normal(3, 1, 5, 4), "b": _normal(2, 4, 3)},
     {"transpose_a": False, "transpose_b": False}),
    ("matmul-transposes", "BatchMatMul", {"a": _normal(2, 4, 5), "b": _normal(2, 3, 4)},
     {"transpose_a": True, "transpose_b": True}),
    ("matmul-int32-wraps", "BatchMatMul", {"a": np.full((3, 5), 2**30, np.int32), "b": np.ones((5, 3), np.int32)},
     {"transpose_a": False, "transpose_b": False}),
    ("einsum-batched", "Einsum", {"tensors": [_normal(3, 5, 4), _normal(3, 4, 5)]}, {"equation": "bij,bjk->bik"}),
    ("einsum-diagonal", "Einsum", {"tensors": [_normal(5, 5)]}, {"equation": "ii->i"}),
    ("einsum-three", "Einsum", {"tensors": [_normal(5), _normal(5, 3), _normal(3)]}, {"equation": "i,ij,j->"}),
    ("einsum-int32", "Einsum", {"tensors": [np.arange(15, dtype=np.int32).reshape(5, 3), np.ones((3, 5), np.int32)]},
     {"equation": "ij,jk->ik"}),
    ("softmax-dim1", "Softmax", {"logits": _with_nan(X75, (4, 0))}, {"dim": 1}),
    ("softmax-dim0-minus-inf", "Softmax", {"logits": np.where(X75 > 1.0, -inf, X75).astype(np.float32)}, {"dim": 0}),
    ("softmax-empty", "Softmax", {"logits": np.zeros((0, 5), np.float32)}, {"dim": 1}),
    ("conv2d", "Conv2D", {"x": CONV_X, "filter": CONV_W}, {**CONV_ATTRS, "data_format": "NHWC"}),
    ("conv2d-float32", "Conv2D", {"x": CONV_X.astype(np.float32), "filter": CONV_W.astype(np.float32)},
     {**CONV_ATTRS, "data_format": "NHWC"}),
    ("conv2d-empty-batch", "Conv2D", {"x": CONV_X[:0], "filter": CONV_W}, {**CONV_ATTRS, "data_format": "NHWC"}),
    ("conv2d-backprop-input", "Conv2DBackpropInput", {"dy": CONV_DY, "filter": CONV_W},
     {**CONV_ATTRS, "input_shape": (5, 6, 7, 3)}),
    ("conv2d-backprop-filter", "Conv2DBackpropFilter", {"x": CONV_X, "dy": CONV_DY},
     {**CONV_ATTRS, "filter_shape": (3, 2, 3, 4)}),
    ("conv2d-backprop-filter-empty-batch", "Conv2DBackpropFilter", {"x": CONV_X[:0], "dy": CONV_DY[:0]},
     {**CONV_ATTRS, "filter_shape": (3, 2, 3, 4)}),
    ("max-pool", "MaxPool", {"x": POOL_X}, POOL_ATTRS),
    ("max-pool-int32", "MaxPool", {"x": RNG.integers(-9, 9, (5, 6, 6, 3)).astype(np.int32)}, POOL_ATTRS),
    ("max-pool-grad", "MaxPoolGrad", {"dy": POOL_DY, "input": POOL_X, "output": POOL_Y}, POOL_ATTRS),
    ("max-pool-grad-ties", "MaxPoolGrad", {"dy": POOL_DY, "input": POOL_TIES, "output": POOL_TIES_Y}, POOL_ATTRS),
    ("avg-pool", "AvgPool", {"x": POOL_X}, POOL_ATTRS),
    ("avg-pool-grad", "AvgPoolGrad", {"dy": POOL_DY, "input": POOL_X}, POOL_ATTRS),
]  # fmt: skip


@pytest.mark.parametrize(("name", "inputs", "attrs"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_kernel_is_lazy_and_matches_numpy(name: str, inputs: dict[str, Any], attrs: dict[str, Any]) -> None:
    out, expected = run(name, inputs, attrs)
    assert_matches(out, expected, rtol=1e-5 if expected.dtype == np.float32 else 1e-12)


# -- reductions across many chunks -----------------------------------------------------------------------------------


def test_sum_over_an_axis_of_many_chunks_matches_numpy() -> None:
    x = RNG.random((301, 3)).astype(np.float32)  # 151 chunks along axis 0: a tree of partial sums
    out, expected = run("Sum", {"x": x}, {"axis": (0,), "keep_dims": False})
    assert out.raw.numblocks == (2,)
    assert_matches(out, expected, rtol=1e-5)


def test_int_reductions_over_many_chunks_are_exact() -> None:
    x = RNG.integers(-(2**31), 2**31, (97, 4)).astype(np.int32)  # sums and products wrap, in every order alike
    for name in ("Sum", "Prod"):
        out, expected = run(name, {"x": x}, {"axis": (0,), "keep_dims": False})
        assert_matches(out, expected)


def test_mean_of_an_empty_axis_is_nan_without_a_warning() -> None:
    out, _ = run("Mean", {"x": np.zeros((0, 3), np.float32)}, {"axis": (0,), "keep_dims": True})
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(out.numpy(), np.full((1, 3), nan, np.float32))


# -- arg-reductions: the first of ties and of NaNs, across chunk boundaries -----------------------------------------


@pytest.mark.parametrize(
    ("values", "axis_max", "axis_min"),
    [
        ([0.0, 7.0, 7.0, 1.0, 7.0], 1, 0),  # maxima at the end of chunk 0 and the start of chunk 1
        ([3.0, 1.0, 5.0, 1.0, 5.0, 1.0], 2, 1),  # the same extreme in three chunks
        ([9.0, 1.0, 3.0, nan, nan, 9.0], 3, 3),  # NaN wins, the first one (in chunk 1) over the one in chunk 2
        ([nan, 1.0, 9.0, nan], 0, 0),
        ([-inf, -inf, -inf], 0, 0),
    ],
)
def test_arg_reductions_take_the_first_across_chunks(values: list[float], axis_max: int, axis_min: int) -> None:
    x = np.array(values, np.float32)
    out, expected = run("ArgMax", {"x": x}, {"axis": 0})
    assert out.item() == expected == axis_max
    assert out.dtype == "int32"
    out, expected = run("ArgMin", {"x": x}, {"axis": 0})
    assert out.item() == expected == axis_min


def test_argmax_along_each_axis_of_a_matrix_with_ties() -> None:
    x = RNG.integers(0, 3, (9, 7)).astype(np.int64)  # many ties in every row and column
    for axis in (0, 1):
        for name in ("ArgMax", "ArgMin"):
            out, expected = run(name, {"x": x}, {"axis": axis})
            assert_matches(out, expected.astype(np.int32))


# -- scans ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name", ["Cumsum", "Cumprod"])
def test_scans_across_chunks(name: str, exclusive: bool, reverse: bool) -> None:
    attrs = {"axis": 0, "exclusive": exclusive, "reverse": reverse}
    ints = RNG.integers(-3, 4, 9).astype(np.int32)  # exact: each element against numpy's
    out, expected = run(name, {"x": ints}, attrs)
    assert_matches(out, expected)
    assert out.raw.chunks == ((2, 2, 2, 2, 1),)  # the input's chunks, exclusive or not
    floats = 1.0 + 0.1 * _normal(4, 9)
    out, expected = run(name, {"x": floats}, {**attrs, "axis": 1})
    assert_matches(out, expected)


def test_cumsum_keeps_negative_zero_across_chunks() -> None:
    out, expected = run("Cumsum", {"x": np.full(7, -0.0)}, {"axis": 0, "exclusive": False, "reverse": False})
    assert np.signbit(expected).all()
    assert np.signbit(out.numpy()).all()


@pytest.mark.parametrize(
    ("name", "values"),
    [("Cumsum", [1.0, 2.0, inf, 1.0, -inf, 2.0, 3.0]), ("Cumprod", [2.0, 3.0, inf, 1.0, 0.0, 2.0, -0.0])],
)
def test_scans_carry_inf_and_nan_across_chunks(name: str, values: list[float]) -> None:
    out, expected = run(name, {"x": np.array(values)}, {"axis": 0, "exclusive": False, "reverse": False})
    assert np.isnan(expected[-1])
    assert_matches(out, expected)


# -- convolution and pooling on batches of several chunks -----------------------------------------------------------


def test_conv2d_maps_each_batch_chunk() -> None:
    out, expected = run("Conv2D", {"x": CONV_X, "filter": CONV_W}, {**CONV_ATTRS, "data_format": "NHWC"})
    assert out.raw.chunks == ((2, 2, 1), (3,), (6,), (4,))  # the batch keeps its chunks; the rest is whole
    assert_matches(out, expected)


def test_conv2d_backprop_input_chunks_have_the_batch_chunks_of_dy() -> None:
    out, expected = run("Conv2DBackpropInput", {"dy": CONV_DY, "filter": CONV_W},
                        {**CONV_ATTRS, "input_shape": (5, 6, 7, 3)})  # fmt: skip
    assert out.raw.chunks == ((2, 2, 1), (6,), (7,), (3,))
    assert_matches(out, expected)


def test_conv2d_backprop_filter_sums_the_batch_chunks() -> None:
    x, dy = _normal(11, 6, 7, 3), _normal(11, 3, 6, 4)  # six batch chunks, the last of one image
    out, expected = run("Conv2DBackpropFilter", {"x": x, "dy": dy}, {**CONV_ATTRS, "filter_shape": (3, 2, 3, 4)})
    assert out.shape == (3, 2, 3, 4)
    assert_matches(out, expected)


@pytest.mark.parametrize("name", ["MaxPool", "AvgPool"])
def test_pools_keep_batch_and_channel_chunks(name: str) -> None:
    out, expected = run(name, {"x": POOL_X}, POOL_ATTRS)
    assert out.raw.chunks == ((2, 2, 1), (3,), (3,), (2, 1))  # channels pool independently: their chunks stay
    assert_matches(out, expected)


def test_avg_pool_grad_does_not_compute_the_input() -> None:
    x = tp.tensor(POOL_X)
    with no_compute():
        dx = tp.run_kernel("AvgPoolGrad", {"dy": tp.tensor(POOL_DY), "input": x}, POOL_ATTRS)
    graph = dict(dx.raw.__dask_graph__())
    assert not any(isinstance(key, tuple) and key[0] == x.raw.name for key in graph)  # only its shape is used
    assert_matches(dx, np.asarray(numpy_kernel("AvgPoolGrad")({"dy": POOL_DY, "input": POOL_X}, POOL_ATTRS, None)))


# -- random ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "attrs"),
    [
        ("RandomUniform", {"minval": -2.0, "maxval": 3.0, "dtype": "float32"}),
        ("RandomUniform", {"minval": -3, "maxval": 4, "dtype": "int32"}),
        ("RandomUniform", {"minval": 2**40, "maxval": 2**40 + 5, "dtype": "int64"}),
        ("RandomNormal", {"mean": 1.0, "stddev": 0.5, "dtype": "float64"}),
    ],
)
def test_random_kernels_are_lazy_chunked_and_seeded(name: str, attrs: dict[str, Any]) -> None:
    shape = (301, 3)
    with no_compute():
        a = tp.run_kernel(name, {}, {**attrs, "shape": shape, "seed": 7})
        b = tp.run_kernel(name, {}, {**attrs, "shape": shape, "seed": 7})
        c = tp.run_kernel(name, {}, {**attrs, "shape": shape, "seed": 8})
        d = tp.run_kernel(name, {}, {**attrs, "shape": shape, "seed": None})
    assert a.raw.chunks == da.ones(shape, chunks=tp.backend()._chunks_for(shape)).chunks  # as the backend chunks
    assert a.raw.numblocks == (151, 2)
    values = a.numpy()
    assert values.dtype == np.dtype(attrs["dtype"])
    assert values.shape == shape
    np.testing.assert_array_equal(values, b.numpy())
    assert not np.array_equal(values, c.numpy())
    np.testing.assert_array_equal(d.numpy(), d.numpy())  # unseeded: drawn once, the same on every read
    if name == "RandomUniform":
        assert attrs["minval"] <= values.min()
        assert values.max() < attrs["maxval"]
        if values.dtype.kind == "i":
            assert set(values.ravel().tolist()) == set(range(attrs["minval"], attrs["maxval"]))
    else:
        assert abs(values.mean() - 1.0) < 0.05
        assert abs(values.std() - 0.5) < 0.05


def test_random_kernels_give_scalars_and_empty_arrays() -> None:
    scalar = tp.run_kernel("RandomUniform", {}, {"shape": (), "minval": 2.0, "maxval": 3.0, "dtype": "float64",
                                                 "seed": 1})  # fmt: skip
    assert scalar.shape == ()
    assert 2.0 <= scalar.item() < 3.0
    empty = tp.run_kernel("RandomNormal", {}, {"shape": (2, 0), "mean": 0.0, "stddev": 1.0, "dtype": "float32",
                                               "seed": None})  # fmt: skip
    assert empty.numpy().shape == (2, 0)
    assert empty.dtype == "float32"
