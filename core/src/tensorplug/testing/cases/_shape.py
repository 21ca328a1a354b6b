"""Conformance cases: shape, dtype and creation kernels, joining and splitting (slicing, gathering and
scattering are in ``_indexing``).

Expected values are written out by hand (small tensors whose every element
can be checked by eye), or built with plain Python lists; none comes from
numpy's own indexing, padding or sorting functions. Each differentiable
kernel has ``grad=True`` cases; their float64 inputs avoid ties where the
kernel has any (TopK).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing._case import Case, b8, f32, f64, i32, i64

NAN, INF = math.nan, math.inf

# A 3x4 matrix whose element (i, j) is 4 * i + j, in several dtypes; most slicing cases index it.
M = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
# A 2x3x4 tensor whose element (i, j, k) is 12 * i + 4 * j + k.
T3 = [[[12 * i + 4 * j + k for k in range(4)] for j in range(3)] for i in range(2)]


def _untyped(value: Any) -> Any:
    """``value`` hidden from the type checker: some error cases pass a wrong type on purpose."""
    return value


def _ss(**masks: int) -> Any:
    """``strided_slice(x, begin, end, strides, **masks)`` as a case op."""
    return lambda x, begin, end, strides=None: tp.strided_slice(x, begin, end, strides, **masks)


# -- reshape, transpose, broadcast_to (and the composites squeeze, expand_dims) -------------------

RESHAPE = [
    Case(K.RESHAPE, lambda x: tp.reshape(x, (3, 2)), (f32([[1, 2, 3], [4, 5, 6]]),),
         f32([[1, 2], [3, 4], [5, 6]]), name="float32"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (2, -1)), (i32([0, 1, 2, 3, 4, 5]),), i32([[0, 1, 2], [3, 4, 5]]),
         name="int32-inferred"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (2, 1, 2)), (i64([7, 8, 9, 10]),), i64([[[7, 8]], [[9, 10]]]),
         name="int64"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (2, 2)), (b8([True, False, False, True]),),
         b8([[True, False], [False, True]]), name="bool"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, ()), (f64([7.5]),), f64(7.5), name="to-scalar"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (1, 1)), (f64(-2.5),), f64([[-2.5]]), name="from-scalar"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (3, 0)), (f32(np.zeros((0, 3))),), f32(np.zeros((3, 0))), name="empty"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (4,)), (f32([[1, 2, 3], [4, 5, 6]]),), raises=tp.ShapeError,
         match="cannot reshape", name="wrong-size"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (-1, -1)), (f32([1, 2]),), raises=tp.ShapeError, match="at most one",
         name="two-inferred"),
    Case(K.RESHAPE, lambda x: tp.reshape(x, (2, 3)), (f64([[1, 2, 3], [4, 5, 6]]).T,),
         f64([[1, 4, 2], [5, 3, 6]]), grad=True, name="grad"),
    # squeeze and expand_dims are composites written with reshape
    Case(K.RESHAPE, tp.squeeze, (f32([[[1], [2], [3]]]),), f32([1, 2, 3]), name="squeeze-all"),
    Case(K.RESHAPE, lambda x: tp.squeeze(x, -1), (i32([[[1], [2]]]),), i32([[1, 2]]), name="squeeze-axis"),
    Case(K.RESHAPE, lambda x: tp.squeeze(x, 1), (i32([[1, 2]]),), raises=tp.ShapeError, match="not 1",
         name="squeeze-not-one"),
    Case(K.RESHAPE, lambda x: tp.expand_dims(x, 1), (i64([1, 2]),), i64([[1], [2]]), name="expand-dims"),
    Case(K.RESHAPE, lambda x: tp.expand_dims(x, 3), (i64([1, 2]),), raises=tp.ShapeError, match="out of range",
         name="expand-dims-bad-axis"),
]  # fmt: skip

TRANSPOSE = [
    Case(K.TRANSPOSE, tp.transpose, (f32([[1, 2, 3], [4, 5, 6]]),), f32([[1, 4], [2, 5], [3, 6]]), name="float32"),
    Case(K.TRANSPOSE, lambda x: tp.transpose(x, (2, 0, 1)), (i64([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]),),
         i64([[[1, 3], [5, 7]], [[2, 4], [6, 8]]]), name="int64-3d"),
    Case(K.TRANSPOSE, lambda x: tp.transpose(x, (1, 0)), (i32([[1, 2]]),), i32([[1], [2]]), name="int32"),
    Case(K.TRANSPOSE, tp.transpose, (b8([[True, False]]),), b8([[True], [False]]), name="bool"),
    Case(K.TRANSPOSE, tp.transpose, (f64(3.0),), f64(3.0), name="scalar"),
    Case(K.TRANSPOSE, tp.transpose, (f32(np.zeros((0, 2))),), f32(np.zeros((2, 0))), name="empty"),
    Case(K.TRANSPOSE, lambda x: tp.transpose(x, (0, 0)), (f32([[1.0]]),), raises=tp.ShapeError,
         match="not a permutation", name="bad-perm"),
    Case(K.TRANSPOSE, lambda x: tp.transpose(x, (1, 2, 0)), (f64([[[1, 2]], [[3, 4]], [[5, 6]]]),),
         f64([[[1, 3, 5], [2, 4, 6]]]), grad=True, name="grad"),
]  # fmt: skip

BROADCAST_TO = [
    Case(K.BROADCAST_TO, lambda x: tp.broadcast_to(x, (2, 3)), (f32([1, 2, 3]),), f32([[1, 2, 3], [1, 2, 3]]),
         name="float32"),
    Case(K.BROADCAST_TO, lambda x: tp.broadcast_to(x, (2,)), (i32(5),), i32([5, 5]), name="scalar"),
    Case(K.BROADCAST_TO, lambda x: tp.broadcast_to(x, (2, 2)), (b8([[True], [False]]),),
         b8([[True, True], [False, False]]), name="bool"),
    Case(K.BROADCAST_TO, lambda x: tp.broadcast_to(x, (1, 3)), (i64([4, 5, 6]),), i64([[4, 5, 6]]), name="int64"),
    Case(K.BROADCAST_TO, lambda x: tp.broadcast_to(x, (0, 2)), (f64([1.0, 2.0]),), f64(np.zeros((0, 2))),
         name="empty"),
    Case(K.BROADCAST_TO, lambda x: tp.broadcast_to(x, (2,)), (f32([1, 2, 3]),), raises=tp.ShapeError,
         match="cannot be broadcast to shape", name="incompatible"),
    Case(K.BROADCAST_TO, lambda x: tp.broadcast_to(x, (2, 3, 4)), (f64([[1], [2], [3]]),),
         f64([[[1] * 4, [2] * 4, [3] * 4]] * 2), grad=True, name="grad"),
]  # fmt: skip

# -- dtype, identity and creation -------------------------------------------------------------------

CAST = [
    Case(K.CAST, lambda x: tp.cast(x, "int32"), (f32([1.7, -1.7, 0.0, 2.5]),), i32([1, -1, 0, 2]),
         name="float-to-int-truncates"),
    Case(K.CAST, lambda x: tp.cast(x, "bool"), (i32([1, 0, -3]),), b8([True, False, True]), name="int-to-bool"),
    Case(K.CAST, lambda x: tp.cast(x, "bool"), (f64([0.5, 0.0, NAN]),), b8([True, False, True]),
         name="float-to-bool"),
    Case(K.CAST, lambda x: tp.cast(x, "float32"), (b8([True, False]),), f32([1.0, 0.0]), name="bool-to-float"),
    Case(K.CAST, lambda x: tp.cast(tp.transpose(x), "float64"), (b8([[True, False, True], [False, False, True]]),),
         f64([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]), name="bool-to-float-transposed"),
    Case(K.CAST, lambda x: tp.cast(x, "float32"), (f64([0.5, -2.25, NAN, INF, -INF]),),
         f32([0.5, -2.25, NAN, INF, -INF]), name="float64-to-float32"),
    Case(K.CAST, lambda x: tp.cast(x, "float64"), (f32([0.5, -2.25]),), f64([0.5, -2.25]),
         name="float32-to-float64"),
    Case(K.CAST, lambda x: tp.cast(x, "int32"), (i64([-5, 7]),), i32([-5, 7]), name="int64-to-int32"),
    Case(K.CAST, lambda x: tp.cast(x, "int64"), (i32([-5, 7]),), i64([-5, 7]), name="int32-to-int64"),
    Case(K.CAST, lambda x: tp.cast(x, "int32"), (f64(-2.5),), i32(-2), name="scalar"),
    Case(K.CAST, lambda x: tp.cast(x, "int64"), (f32(np.zeros((0, 2))),), i64(np.zeros((0, 2))), name="empty"),
    Case(K.CAST, lambda x: tp.cast(x, "complex64"), (f32([1.0]),), raises=tp.DTypeError, match="unsupported dtype",
         name="bad-dtype"),
    # float64 -> float32 rounds; inputs this small keep the rounding far below the finite-difference step
    Case(K.CAST, lambda x: tp.cast(x, "float32"), (f64([2**-17, -3 * 2**-18, 2**-16]),),
         f32([2**-17, -3 * 2**-18, 2**-16]), grad=True, name="grad"),
]  # fmt: skip

IDENTITY = [
    Case(K.IDENTITY, tp.identity, (f32([1.5, -2.0]),), f32([1.5, -2.0]), name="float32"),
    Case(K.IDENTITY, tp.identity, (i64([[1, 2]]),), i64([[1, 2]]), name="int64"),
    Case(K.IDENTITY, tp.identity, (i32(3),), i32(3), name="scalar"),
    Case(K.IDENTITY, tp.identity, (b8([True, False]),), b8([True, False]), name="bool"),
    Case(K.IDENTITY, tp.identity, (f32(np.zeros((2, 0))),), f32(np.zeros((2, 0))), name="empty"),
    Case(K.IDENTITY, tp.identity, (f64([0.25, NAN, -INF]),), f64([0.25, NAN, -INF]), name="nan"),
    Case(K.IDENTITY, tp.identity, (f64([0.25, -1.5]),), f64([0.25, -1.5]), grad=True, name="grad"),
]  # fmt: skip

FILL = [
    Case(K.FILL, lambda: tp.fill((2, 2), 3.5), (), f32([[3.5, 3.5], [3.5, 3.5]]), name="float"),
    Case(K.FILL, lambda: tp.fill((3,), 7), (), i32([7, 7, 7]), name="int"),
    Case(K.FILL, lambda: tp.fill((2,), True), (), b8([True, True]), name="bool"),
    Case(K.FILL, lambda: tp.fill((), 2, "float64"), (), f64(2.0), name="scalar-float64"),
    Case(K.FILL, lambda: tp.full((1, 2), -4, "int64"), (), i64([[-4, -4]]), name="full-int64"),
    Case(K.FILL, lambda: tp.fill((2,), NAN), (), f32([NAN, NAN]), name="nan"),
    Case(K.FILL, lambda: tp.fill((0, 3), 1.0), (), f32(np.zeros((0, 3))), name="empty"),
    Case(K.FILL, lambda: tp.zeros((2,), "int64"), (), i64([0, 0]), name="zeros"),
    Case(K.FILL, lambda: tp.ones((2, 1)), (), f32([[1.0], [1.0]]), name="ones"),
    Case(K.FILL, lambda: tp.fill((2, -1), 1.0), (), raises=tp.ShapeError, match="negative", name="negative-dim"),
    Case(K.FILL, lambda: tp.fill((2,), 1.0, "float16"), (), raises=tp.DTypeError, match="unsupported dtype",
         name="bad-dtype"),
]  # fmt: skip

ZEROS_ONES_LIKE = [
    Case(K.ZEROS_LIKE, tp.zeros_like, (f32([[1.5, -2.0]]),), f32([[0.0, 0.0]]), name="float32"),
    Case(K.ZEROS_LIKE, tp.zeros_like, (i64([3, 4]),), i64([0, 0]), name="int64"),
    Case(K.ZEROS_LIKE, tp.zeros_like, (i32(9),), i32(0), name="scalar"),
    Case(K.ZEROS_LIKE, tp.zeros_like, (b8([True]),), b8([False]), name="bool"),
    Case(K.ZEROS_LIKE, tp.zeros_like, (f64(np.zeros((0, 2))),), f64(np.zeros((0, 2))), name="empty"),
    Case(K.ZEROS_LIKE, tp.zeros_like, (f64([NAN, INF]),), f64([0.0, 0.0]), name="nan"),
    Case(K.ZEROS_LIKE, lambda x: tp.zeros_like(x) + x * x, (f64([0.5, -2.0]),), f64([0.25, 4.0]), grad=True,
         name="grad"),
    Case(K.ONES_LIKE, tp.ones_like, (f32([[1.5, -2.0]]),), f32([[1.0, 1.0]]), name="float32"),
    Case(K.ONES_LIKE, tp.ones_like, (i32([3, 4]),), i32([1, 1]), name="int32"),
    Case(K.ONES_LIKE, tp.ones_like, (f64(-9.0),), f64(1.0), name="scalar"),
    Case(K.ONES_LIKE, tp.ones_like, (b8([False, True]),), b8([True, True]), name="bool"),
    Case(K.ONES_LIKE, tp.ones_like, (i64(np.zeros((2, 0))),), i64(np.zeros((2, 0))), name="empty"),
    Case(K.ONES_LIKE, lambda x: tp.ones_like(x) * x * x, (f64([0.5, -2.0]),), f64([0.25, 4.0]), grad=True,
         name="grad"),
]  # fmt: skip

SELECT = [
    Case(K.SELECT, tp.where, (b8([True, False, True]), f32([1, 2, 3]), f32([10, 20, 30])), f32([1, 20, 3]),
         name="float32"),
    Case(K.SELECT, tp.where, (b8([[True], [False]]), i32([1, 2, 3]), i32(0)), i32([[1, 2, 3], [0, 0, 0]]),
         name="broadcast"),
    Case(K.SELECT, tp.where, (b8([False, True]), i64([1, 2]), i64([3, 4])), i64([3, 2]), name="int64"),
    Case(K.SELECT, tp.where, (b8([True, False]), b8([False, False]), b8([True, True])), b8([False, True]),
         name="bool"),
    Case(K.SELECT, tp.where, (b8(False), f64(1.5), f64(-1.5)), f64(-1.5), name="scalar"),
    Case(K.SELECT, tp.where, (b8(np.zeros((0, 2), bool)), f32(1.0), f32(2.0)), f32(np.zeros((0, 2))),
         name="empty"),
    Case(K.SELECT, tp.where, (b8([True, False]), f64([NAN, 1.0]), f64([2.0, INF])), f64([NAN, INF]), name="nan"),
    Case(K.SELECT, tp.where, (i32([1, 0]), f32([1, 2]), f32([3, 4])), raises=tp.DTypeError,
         match="condition must be a bool", name="int-condition"),
    Case(K.SELECT, lambda t, e: tp.where(tp.tensor([[True], [False]]), t, e), (f64([[1, 2, 3], [4, 5, 6]]),
         f64([7, 8, 9])), f64([[1, 2, 3], [7, 8, 9]]), grad=True, name="grad"),
]  # fmt: skip

ONE_HOT = [
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 3), (i32([0, 2, -1, 3]),),
         i32([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]), name="int32"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 2, 5.0, -1.0, "float32"), (i64([[1], [0]]),),
         f32([[[-1, 5]], [[5, -1]]]), name="float32-on-off"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 2, dtype="float64"), (i32([1]),), f64([[0, 1]]), name="float64"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 3, dtype="int64"), (i32(1),), i64([0, 1, 0]), name="scalar"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 2, dtype="bool"), (i32([0, 1]),), b8([[True, False], [False, True]]),
         name="bool"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 3), (i32(np.zeros(0)),), i32(np.zeros((0, 3))), name="empty"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 0), (i32([0, 1]),), i32(np.zeros((2, 0))), name="depth-0"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 3), (f32([0.0, 1.0]),), raises=tp.DTypeError, match="int32 or int64",
         name="float-indices"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, -1), (i32([0]),), raises=tp.ShapeError, match="depth", name="bad-depth"),
    Case(K.ONE_HOT, lambda i: tp.one_hot(i, 2, on_value=0.5), (i32([0]),), raises=tp.DTypeError,
         match="not an integer", name="bad-on-value"),
]  # fmt: skip

RANGE = [
    Case(K.RANGE, lambda: tp.range(5), (), f32([0, 1, 2, 3, 4]), name="float32-default"),
    Case(K.RANGE, lambda: tp.arange(1, 2, 0.25), (), f32([1, 1.25, 1.5, 1.75]), name="float-step"),
    Case(K.RANGE, lambda: tp.range(6, 0, -2, dtype="int32"), (), i32([6, 4, 2]), name="int32-negative-step"),
    Case(K.RANGE, lambda: tp.range(0, 10, 3, dtype="int64"), (), i64([0, 3, 6, 9]), name="int64"),
    Case(K.RANGE, lambda: tp.range(0, 1, 0.3, dtype="float64"), (), f64([0, 0.3, 0.6, 0.9]), name="float64"),
    Case(K.RANGE, lambda: tp.range(5, 1), (), f32([]), name="empty-wrong-direction"),
    Case(K.RANGE, lambda: tp.range(2, 2, dtype="int32"), (), i32([]), name="empty-same"),
    Case(K.RANGE, lambda: tp.range(0, 5, 0), (), raises=tp.TensorplugError, match="zero", name="zero-step"),
    Case(K.RANGE, lambda: tp.range(0, 2, 0.5, dtype="int32"), (), raises=tp.DTypeError, match="not an integer",
         name="fractional-int"),
    Case(K.RANGE, lambda: tp.range(0, 2, dtype="bool"), (), raises=tp.DTypeError, match="numeric", name="bool"),
    Case(K.RANGE, lambda: tp.range(0, INF), (), raises=tp.TensorplugError, match="finite", name="infinite"),
    # linspace is a composite written with range and fill
    Case(K.RANGE, lambda: tp.linspace(0, 1, 5), (), f32([0, 0.25, 0.5, 0.75, 1]), name="linspace"),
    Case(K.RANGE, lambda: tp.linspace(1, -1, 3), (), f32([1, 0, -1]), name="linspace-down"),
    Case(K.RANGE, lambda: tp.linspace(0.1, 0.7, 3), (), f32([0.1, 0.4, 0.7]), name="linspace-endpoints"),
    Case(K.RANGE, lambda: tp.linspace(2, 3, 1), (), f32([2]), name="linspace-one"),
    Case(K.RANGE, lambda: tp.linspace(2, 3, 0), (), raises=tp.ShapeError, match="num", name="linspace-none"),
]  # fmt: skip

# -- joining and splitting --------------------------------------------------------------------------

CONCAT = [
    Case(K.CONCAT, lambda a, b: tp.concat([a, b]), (f32([[1, 2]]), f32([[3, 4], [5, 6]])),
         f32([[1, 2], [3, 4], [5, 6]]), name="float32-axis0"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b], -1), (i32([[1], [2]]), i32([[3, 4], [5, 6]])),
         i32([[1, 3, 4], [2, 5, 6]]), name="int32-axis-1"),
    Case(K.CONCAT, lambda a, b, c: tp.concat([a, b, c]), (b8([True]), b8([False]), b8([True])),
         b8([True, False, True]), name="bool-three"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b]), (i32([1]), i64([2])), i64([1, 2]), name="promotes-int64"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b]), (i32([1]), f64([2.5])), f64([1, 2.5]), name="promotes-float64"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b]), (i64([1]), f32([2.5])), f32([1, 2.5]), name="promotes-float32"),
    Case(K.CONCAT, lambda a: tp.concat([a], 1), (f64([[1, 2]]),), f64([[1, 2]]), name="single"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b]), (f32(np.zeros((0, 2))), f32([[1, 2]])), f32([[1, 2]]),
         name="with-empty"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b], 1), (i64(np.zeros((2, 0))), i64(np.zeros((2, 0)))),
         i64(np.zeros((2, 0))), name="all-empty"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b]), (f32(1.0), f32(2.0)), raises=tp.ShapeError, match="0-d",
         name="scalars"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b], 1), (f32([[1, 2]]), f32([[1], [2]])), raises=tp.ShapeError,
         match="must match except along axis 1", name="mismatch"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b], 2), (f32([[1]]), f32([[2]])), raises=tp.ShapeError,
         match="out of range", name="bad-axis"),
    Case(K.CONCAT, lambda: tp.concat([]), (), raises=tp.TensorplugError, match="at least one", name="none"),
    Case(K.CONCAT, lambda a, b: tp.concat([a, b * b], 1), (f64([[1, 2, 3], [4, 5, 6]]), f64([[7, 8], [9, 10]])),
         f64([[1, 2, 3, 49, 64], [4, 5, 6, 81, 100]]), grad=True, name="grad"),
]  # fmt: skip

PACK = [
    Case(K.PACK, lambda a, b: tp.stack([a, b]), (i32([1, 2]), i32([3, 4])), i32([[1, 2], [3, 4]]),
         name="int32-axis0"),
    Case(K.PACK, lambda a, b: tp.stack([a, b], -1), (f32([1, 2]), f32([3, 4])), f32([[1, 3], [2, 4]]),
         name="float32-axis-1"),
    Case(K.PACK, lambda a, b, c: tp.stack([a, b, c]), (f64(1), f64(2), f64(3)), f64([1, 2, 3]), name="scalars"),
    Case(K.PACK, lambda a, b: tp.stack([a, b], 1), (b8([[True]]), b8([[False]])), b8([[[True], [False]]]),
         name="bool-middle"),
    Case(K.PACK, lambda a, b: tp.stack([a, b]), (i64([5]), i32([6])), i64([[5], [6]]), name="promotes"),
    Case(K.PACK, lambda a, b: tp.stack([a, b]), (f32(np.zeros(0)), f32(np.zeros(0))), f32(np.zeros((2, 0))),
         name="empty"),
    Case(K.PACK, lambda a, b: tp.stack([a, b]), (f32([1, 2]), f32([1])), raises=tp.ShapeError,
         match="same shape", name="mismatch"),
    Case(K.PACK, lambda a: tp.stack([a], 2), (f32([1, 2]),), raises=tp.ShapeError, match="out of range",
         name="bad-axis"),
    Case(K.PACK, lambda a, b: tp.stack([a * b, b], 1), (f64([1, 2, 3]), f64([4, 5, 6])),
         f64([[4, 4], [10, 5], [18, 6]]), grad=True, name="grad"),
]  # fmt: skip

UNPACK = [
    Case(K.UNPACK, tp.unstack, (i32([[1, 2], [3, 4]]),), (i32([1, 2]), i32([3, 4])), name="int32-axis0"),
    Case(K.UNPACK, lambda x: tp.unstack(x, 1), (f32([[1, 2], [3, 4]]),), (f32([1, 3]), f32([2, 4])),
         name="float32-axis1"),
    Case(K.UNPACK, lambda x: tp.unstack(x, -1), (i64([[[1, 2]], [[3, 4]]]),), (i64([[1], [3]]), i64([[2], [4]])),
         name="int64-last"),
    Case(K.UNPACK, tp.unstack, (f64([1.5, NAN]),), (f64(1.5), f64(NAN)), name="to-scalars"),
    Case(K.UNPACK, tp.unstack, (b8([[True], [False]]),), (b8([True]), b8([False])), name="bool"),
    Case(K.UNPACK, tp.unstack, (f32(np.zeros((2, 0))),), (f32(np.zeros(0)), f32(np.zeros(0))), name="empty"),
    Case(K.UNPACK, tp.unstack, (f32(np.zeros((0, 3))),), (), name="none"),
    Case(K.UNPACK, tp.unstack, (f32(1.0),), raises=tp.ShapeError, match="at least one axis", name="scalar"),
    Case(K.UNPACK, lambda x: tp.unstack(x, 1)[0] * tp.unstack(x, 1)[2], (f64([[1, 2, 3], [4, 5, 6]]),),
         f64([3, 24]), grad=True, name="grad"),
]  # fmt: skip

SPLIT_V = [
    Case(K.SPLIT_V, lambda x: tp.split(x, 3), (i32([1, 2, 3, 4, 5, 6]),), (i32([1, 2]), i32([3, 4]), i32([5, 6])),
         name="int32-equal"),
    Case(K.SPLIT_V, lambda x: tp.split(x, [1, -1], 1), (f32([[1, 2, 3], [4, 5, 6]]),),
         (f32([[1], [4]]), f32([[2, 3], [5, 6]])), name="float32-sizes"),
    Case(K.SPLIT_V, lambda x: tp.split(x, [0, 2]), (f64([1, 2]),), (f64([]), f64([1, 2])), name="empty-part"),
    Case(K.SPLIT_V, lambda x: tp.split(x, 1, -1), (i64([[7, 8]]),), (i64([[7, 8]]),), name="int64-one"),
    Case(K.SPLIT_V, lambda x: tp.split(x, 2), (b8([True, False]),), (b8([True]), b8([False])), name="bool"),
    Case(K.SPLIT_V, lambda x: tp.split(x, 2, 1), (f32(np.zeros((3, 0))),), (f32(np.zeros((3, 0))),) * 2,
         name="empty"),
    Case(K.SPLIT_V, lambda x: tp.split(x, 3), (f32([1, 2, 3, 4]),), raises=tp.ShapeError, match="do not divide",
         name="uneven"),
    Case(K.SPLIT_V, lambda x: tp.split(x, [1, 2]), (f32([1, 2, 3, 4]),), raises=tp.ShapeError,
         match="do not add up", name="wrong-sizes"),
    Case(K.SPLIT_V, lambda x: tp.split(x, [-1, -1]), (f32([1, 2]),), raises=tp.ShapeError, match="at most one -1",
         name="two-inferred"),
    Case(K.SPLIT_V, lambda x: tp.split(x, 2), (f32(1.0),), raises=tp.ShapeError, match="at least one axis",
         name="scalar"),
    Case(K.SPLIT_V, lambda x: tp.split(x, [1, 2], 1)[1] * tp.split(x, [1, 2], 1)[0], (f64([[1, 2, 3], [4, 5, 6]]),),
         f64([[2, 3], [20, 24]]), grad=True, name="grad"),
]  # fmt: skip

CASES: list[Case] = [
    *RESHAPE,
    *TRANSPOSE,
    *BROADCAST_TO,
    *CAST,
    *IDENTITY,
    *FILL,
    *ZEROS_ONES_LIKE,
    *SELECT,
    *ONE_HOT,
    *RANGE,
    *CONCAT,
    *PACK,
    *UNPACK,
    *SPLIT_V,
]
