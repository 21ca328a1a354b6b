"""Conformance cases: binary elementwise arithmetic (Add to SquaredDifference, Atan2, Prelu).

Floor division, modulo, the comparisons, the logical ops, AddN and Select are in ``_binary_exact``.

Expected values are written by hand, or computed by :func:`_apply` with
Python's own arithmetic (and ``math``) on Python numbers, element by element:
never by NumPy's ufuncs, which are what the numpy kernels call.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing._case import Case, b8, f32, f64, i32, i64

inf, nan = math.inf, math.nan


def _apply(fn: Callable[..., Any], dtype: Any, *arrays: np.ndarray) -> np.ndarray:
    """``fn`` on Python numbers, element by element over the broadcast of ``arrays``, as an array of ``dtype``."""
    broadcast = np.broadcast_arrays(*arrays)
    columns = [b.ravel().tolist() for b in broadcast]
    values = [fn(*items) for items in zip(*columns, strict=True)]
    return np.array(values, dtype=dtype).reshape(broadcast[0].shape)


def _silent(op: Callable[..., Any]) -> Callable[..., Any]:
    """``op`` with warnings turned into errors: integer division by zero gives 0, quietly."""

    def run(*args: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return op(*args)

    return run


# Fixed float64 inputs for the gradient checks (shapes as in tests/unit/test_gradients.py).
A23 = f64([[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]])
B3 = f64([1.0, -0.5, 0.25])
B21 = f64([[0.3], [-1.1]])
COL21 = f64([[0.4], [-0.9]])
ROW14 = f64([[1.2, -0.3, 0.8, -1.6]])
POSITIVE23 = f64([[0.5, 1.2, 2.0], [1.5, 0.8, 1.1]])
AWAY3 = f64([0.8, -1.3, 0.45])
# Far apart, so that maximum and minimum have no ties within the finite-difference step.
DISTINCT23 = f64([[0.11, -1.0, 0.85], [-0.26, 1.22, 0.48]])
DISTINCT3 = f64([0.2, -0.63, 1.0])

EMPTY = f32(np.zeros((0,)))
EMPTY03 = f32(np.zeros((0, 3)))

CASES: list[Case] = [
    # -- Add ------------------------------------------------------------------------
    Case(K.ADD, tp.add, (f32([1.5, -2.0, 3.25]), f32([0.5, 2.0, -1.25])), f32([2.0, 0.0, 2.0]), name="float32"),
    Case(
        K.ADD,
        tp.add,
        (f32([[1.0], [2.0]]), f32([10.0, 20.0, 30.0])),
        f32([[11.0, 21.0, 31.0], [12.0, 22.0, 32.0]]),
        name="broadcast",
    ),
    Case(K.ADD, tp.add, (f64(2.5), f64(-1.0)), f64(1.5), name="float64-scalars"),
    Case(K.ADD, tp.add, (f64(2.0), f64([1.0, 2.0])), f64([3.0, 4.0]), name="scalar-and-vector"),
    Case(K.ADD, tp.add, (i32([1, -2, 7]), i32([3, 4, -7])), i32([4, 2, 0]), name="int32"),
    Case(K.ADD, tp.add, (i64([2**40, -1]), i64([1, 1])), i64([2**40 + 1, 0]), name="int64"),
    Case(K.ADD, tp.add, (i32([1, 2]), f32([0.5, 0.25])), f32([1.5, 2.25]), name="promote-int32-float32"),
    Case(K.ADD, tp.add, (i64([4, -3]), f32([0.5, 0.25])), f32([4.5, -2.75]), name="promote-int64-float32"),
    Case(K.ADD, tp.add, (i32([1]), i64([2])), i64([3]), name="promote-int32-int64"),
    Case(K.ADD, tp.add, (f32([1.0, 2.0]), 0.5), f32([1.5, 2.5]), name="weak-float"),
    Case(K.ADD, tp.add, (i32([1, 2]), 0.5), f32([1.5, 2.5]), name="weak-float-meets-int"),
    Case(K.ADD, tp.add, (i64([1, 2]), 3), i64([4, 5]), name="weak-int"),
    Case(K.ADD, tp.add, (b8([1, 1, 0, 0]), b8([1, 0, 1, 0])), b8([1, 1, 1, 0]), name="bool-is-or"),
    Case(K.ADD, tp.add, (EMPTY, EMPTY), EMPTY, name="empty"),
    Case(K.ADD, tp.add, (EMPTY03, f32([1.0, 2.0, 3.0])), EMPTY03, name="empty-broadcast"),
    Case(K.ADD, tp.add, (f32([inf, nan, inf]), f32([1.0, 1.0, -inf])), f32([inf, nan, nan]), name="inf-nan"),
    Case(
        K.ADD,
        tp.add,
        (f32(np.zeros((2, 3))), f32(np.zeros(4))),
        raises=tp.ShapeError,
        match="cannot be broadcast",
        name="shape-mismatch",
    ),
    Case(K.ADD, tp.add, (A23, B3), _apply(operator.add, "float64", A23, B3), grad=True, name="grad"),
    Case(K.ADD, tp.add, (COL21, ROW14), _apply(operator.add, "float64", COL21, ROW14), grad=True, name="grad-outer"),
    # -- Sub ------------------------------------------------------------------------
    Case(K.SUB, tp.sub, (f32([5.0, -1.0, 0.5]), f32([2.0, -3.0, 0.5])), f32([3.0, 2.0, 0.0]), name="float32"),
    Case(K.SUB, tp.sub, (i32([5, -3]), i32([7, -3])), i32([-2, 0]), name="int32"),
    Case(K.SUB, tp.sub, (i64([2**40, 0]), i64([1, 5])), i64([2**40 - 1, -5]), name="int64"),
    Case(K.SUB, tp.sub, (1.0, f32([0.25, 2.0])), f32([0.75, -1.0]), name="weak-float-left"),
    Case(K.SUB, tp.sub, (f64(0.5), f64(2.0)), f64(-1.5), name="float64-scalars"),
    Case(K.SUB, tp.sub, (f32([[1.0, 2.0]]), f32([[0.5], [1.0]])), f32([[0.5, 1.5], [0.0, 1.0]]), name="broadcast"),
    Case(K.SUB, tp.sub, (EMPTY03, EMPTY03), EMPTY03, name="empty"),
    Case(K.SUB, tp.sub, (f64([inf, inf]), f64([inf, 1.0])), f64([nan, inf]), name="inf"),
    Case(K.SUB, tp.sub, (b8([1]), b8([0])), raises=tp.DTypeError, match="expects numeric", name="bool-rejected"),
    Case(
        K.SUB,
        tp.sub,
        (f32(np.zeros(2)), f32(np.zeros(3))),
        raises=tp.ShapeError,
        match="cannot be broadcast",
        name="shape-mismatch",
    ),
    Case(K.SUB, tp.sub, (A23, B21), _apply(operator.sub, "float64", A23, B21), grad=True, name="grad"),
    # -- Multiply ---------------------------------------------------------------------
    Case(K.MULTIPLY, tp.mul, (f32([1.5, -2.0, 4.0]), f32([2.0, 0.25, -0.5])), f32([3.0, -0.5, -2.0]), name="float32"),
    Case(K.MULTIPLY, tp.mul, (i32([3, -4]), i32([5, 6])), i32([15, -24]), name="int32"),
    Case(K.MULTIPLY, tp.mul, (i64([2**20, -3]), i64([2**20, 3])), i64([2**40, -9]), name="int64"),
    Case(K.MULTIPLY, tp.mul, (b8([1, 1, 0, 0]), b8([1, 0, 1, 0])), b8([1, 0, 0, 0]), name="bool-is-and"),
    Case(
        K.MULTIPLY, tp.mul, (f64([[1.0], [2.0]]), f64([3.0, -1.0])), f64([[3.0, -1.0], [6.0, -2.0]]), name="broadcast"
    ),
    Case(K.MULTIPLY, tp.mul, (f32(3.0), f32(-2.0)), f32(-6.0), name="scalars"),
    Case(K.MULTIPLY, tp.mul, (i32([2, 3]), 2), i32([4, 6]), name="weak-int"),
    Case(K.MULTIPLY, tp.mul, (EMPTY03, f32(2.0)), EMPTY03, name="empty"),
    Case(K.MULTIPLY, tp.mul, (f32([inf, inf, nan]), f32([0.0, -2.0, 1.0])), f32([nan, -inf, nan]), name="inf-nan"),
    # Products below float32's smallest normal number (1.2e-38) are subnormal: kept exactly (atol=0), or zero on a
    # backend that declares flush_to_zero. The float64 product of two float32 numbers is exact, so rounding it once
    # to float32 gives the correctly rounded float32 product.
    Case(
        K.MULTIPLY,
        tp.mul,
        (f32([1e-20, -1e-20, 3.0]), f32([1e-20, 1e-20, 2.0])),
        (f32([1e-20]).astype(np.float64) ** 2 * [1.0, -1.0, 0.0] + [0.0, 0.0, 6.0]).astype(np.float32),
        atol=0.0,
        name="subnormal-result",
    ),
    Case(K.MULTIPLY, tp.mul, (A23, B3), _apply(operator.mul, "float64", A23, B3), grad=True, name="grad"),
    Case(
        K.MULTIPLY,
        tp.mul,
        (B3, f64(-1.5)),
        _apply(operator.mul, "float64", B3, f64(-1.5)),
        grad=True,
        name="grad-scalar",
    ),
    # -- RealDiv ----------------------------------------------------------------------
    Case(K.REAL_DIV, tp.div, (f32([1.0, -3.0, 0.0]), f32([2.0, 4.0, 5.0])), f32([0.5, -0.75, 0.0]), name="float32"),
    Case(K.REAL_DIV, tp.div, (f64([1.0, 2.0]), f64([3.0, 7.0])), f64([1 / 3, 2 / 7]), name="float64"),
    Case(K.REAL_DIV, tp.div, (i32([1, 3, -7]), i32([2, 2, 2])), f32([0.5, 1.5, -3.5]), name="int32-gives-float32"),
    Case(K.REAL_DIV, tp.div, (i64([1, 9]), i64([4, 3])), f32([0.25, 3.0]), name="int64-gives-float32"),
    Case(K.REAL_DIV, tp.div, (b8([1, 0]), b8([1, 1])), f32([1.0, 0.0]), name="bool-gives-float32"),
    Case(K.REAL_DIV, tp.div, (f32([1.0, -1.0, 0.0]), f32([0.0, 0.0, 0.0])), f32([inf, -inf, nan]), name="by-zero"),
    Case(K.REAL_DIV, tp.div, (i32([1, 0]), i32([0, 0])), f32([inf, nan]), name="int-by-zero"),
    Case(K.REAL_DIV, tp.div, (f32([[2.0], [4.0]]), f32([1.0, 2.0])), f32([[2.0, 1.0], [4.0, 2.0]]), name="broadcast"),
    Case(K.REAL_DIV, tp.div, (f32(1.0), f32(4.0)), f32(0.25), name="scalars"),
    Case(K.REAL_DIV, tp.div, (f32([3.0]), 2), f32([1.5]), name="weak-int"),
    Case(K.REAL_DIV, tp.div, (i32(np.zeros((0, 2))), i32([1, 2])), f32(np.zeros((0, 2))), name="empty"),
    Case(K.REAL_DIV, tp.div, (A23, AWAY3), _apply(operator.truediv, "float64", A23, AWAY3), grad=True, name="grad"),
    # -- Pow --------------------------------------------------------------------------
    Case(
        K.POW,
        tp.pow,
        (f32([2.0, 4.0, 9.0, 10.0]), f32([3.0, 0.5, -0.5, -1.0])),
        f32([8.0, 2.0, 1 / 3, 0.1]),
        name="float32",
    ),
    Case(K.POW, tp.pow, (i32([2, 3, -2, 0, 5]), i32([3, 2, 3, 0, 0])), i32([8, 9, -8, 1, 1]), name="int32"),
    Case(K.POW, tp.pow, (i64([2, 10]), i64([40, 3])), i64([2**40, 1000]), name="int64"),
    Case(
        K.POW,
        tp.pow,
        (f64([-8.0, 0.0, 0.0, -2.0]), f64([1 / 3, -1.0, 0.0, 2.0])),
        f64([nan, inf, 1.0, 4.0]),
        name="float64-special",
    ),
    Case(
        K.POW,
        tp.pow,
        (f32([[1.0], [2.0], [3.0]]), f32([0.0, 1.0, 2.0])),
        f32([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]),
        name="broadcast",
    ),
    # C's pow (torch, TensorFlow.js): (-inf) ** 0.5 is inf, not sqrt(-inf) = NaN as NumPy's shortcut gives
    Case(
        K.POW,
        lambda x: tp.pow(x, 0.5),
        (f32([-inf, -0.0, 4.0, inf, nan]),),
        f32([inf, 0.0, 2.0, inf, nan]),
        name="half-exponent-of-minus-inf",
    ),
    Case(K.POW, lambda x: tp.pow(x, 0.5), (f32(-inf),), f32(inf), name="half-exponent-of-minus-inf-0d"),
    Case(K.POW, tp.pow, (f64([-inf, -inf, -inf]), f64([1.5, 0.25, -0.5])), f64([inf, inf, 0.0]), name="minus-inf-base"),
    Case(K.POW, tp.pow, (f32([1.5, -2.0]), 2), f32([2.25, 4.0]), name="weak-int-exponent"),
    Case(K.POW, tp.pow, (i32([4, 9]), 0.5), f32([2.0, 3.0]), name="weak-float-exponent-of-int"),
    Case(K.POW, tp.pow, (f64(2.0), f64(-2.0)), f64(0.25), name="scalars"),
    Case(K.POW, tp.pow, (EMPTY, f32(2.0)), EMPTY, name="empty"),
    Case(
        K.POW,
        tp.pow,
        (i32([2, 3]), -1),
        raises=tp.DTypeError,
        match="negative integer power",
        name="int-to-negative-python-int",
    ),
    Case(
        K.POW,
        tp.pow,
        (i32([2, 3]), i32([1, -1])),
        raises=tp.KernelError,
        match="negative integer powers",
        name="int-to-negative-int-tensor",
    ),
    Case(K.POW, tp.pow, (b8([1]), b8([1])), raises=tp.DTypeError, match="expects numeric", name="bool-rejected"),
    Case(K.POW, tp.pow, (POSITIVE23, B3), _apply(operator.pow, "float64", POSITIVE23, B3), grad=True, name="grad"),
    Case(K.POW, tp.pow, (f64([0.6, 1.7]), f64(1.5)), f64([0.6**1.5, 1.7**1.5]), grad=True, name="grad-scalar-exponent"),
    # -- Maximum ----------------------------------------------------------------------
    Case(
        K.MAXIMUM,
        tp.maximum,
        (f32([1.0, 5.0, -2.0, 0.0]), f32([3.0, 2.0, -2.0, -0.5])),
        f32([3.0, 5.0, -2.0, 0.0]),
        name="float32",
    ),
    Case(K.MAXIMUM, tp.maximum, (f32([nan, 1.0, nan]), f32([1.0, nan, nan])), f32([nan, nan, nan]), name="nan"),
    Case(K.MAXIMUM, tp.maximum, (f64([inf, -inf]), f64([1.0, 1.0])), f64([inf, 1.0]), name="inf"),
    Case(K.MAXIMUM, tp.maximum, (i32([1, -5, 3]), i32([2, -7, 3])), i32([2, -5, 3]), name="int32"),
    Case(K.MAXIMUM, tp.maximum, (i64([2**40, -1]), i64([1, 2**41])), i64([2**40, 2**41]), name="int64"),
    Case(K.MAXIMUM, tp.maximum, (i32([1, 4]), f32([2.5, 0.5])), f32([2.5, 4.0]), name="promote-int32-float32"),
    Case(K.MAXIMUM, tp.maximum, (b8([1, 1, 0, 0]), b8([1, 0, 1, 0])), b8([1, 1, 1, 0]), name="bool"),
    Case(K.MAXIMUM, tp.maximum, (f32([[-1.0], [2.0]]), 0.0), f32([[0.0], [2.0]]), name="weak-float"),
    Case(
        K.MAXIMUM, tp.maximum, (f32([[1.0], [4.0]]), f32([0.0, 3.0])), f32([[1.0, 3.0], [4.0, 4.0]]), name="broadcast"
    ),
    Case(K.MAXIMUM, tp.maximum, (f64(-1.0), f64(-2.0)), f64(-1.0), name="scalars"),
    Case(K.MAXIMUM, tp.maximum, (EMPTY03, EMPTY03), EMPTY03, name="empty"),
    Case(
        K.MAXIMUM,
        tp.maximum,
        (DISTINCT23, DISTINCT3 + 0.1),
        _apply(max, "float64", DISTINCT23, DISTINCT3 + 0.1),
        grad=True,
        name="grad",
    ),
    # -- Minimum ----------------------------------------------------------------------
    Case(
        K.MINIMUM,
        tp.minimum,
        (f32([1.0, 5.0, -2.0, 0.0]), f32([3.0, 2.0, -2.0, -0.5])),
        f32([1.0, 2.0, -2.0, -0.5]),
        name="float32",
    ),
    Case(K.MINIMUM, tp.minimum, (f32([nan, 1.0, nan]), f32([1.0, nan, nan])), f32([nan, nan, nan]), name="nan"),
    Case(K.MINIMUM, tp.minimum, (f64([inf, -inf]), f64([1.0, 1.0])), f64([1.0, -inf]), name="inf"),
    Case(K.MINIMUM, tp.minimum, (i32([1, -5, 3]), i32([2, -7, 3])), i32([1, -7, 3]), name="int32"),
    Case(K.MINIMUM, tp.minimum, (i64([2**40, -1]), i64([1, 2**41])), i64([1, -1]), name="int64"),
    Case(K.MINIMUM, tp.minimum, (i32([1, 4]), f32([2.5, 0.5])), f32([1.0, 0.5]), name="promote-int32-float32"),
    Case(K.MINIMUM, tp.minimum, (b8([1, 1, 0, 0]), b8([1, 0, 1, 0])), b8([1, 0, 0, 0]), name="bool"),
    Case(K.MINIMUM, tp.minimum, (i32([[-1], [2]]), 0), i32([[-1], [0]]), name="weak-int"),
    Case(
        K.MINIMUM, tp.minimum, (f32([[1.0], [4.0]]), f32([0.0, 3.0])), f32([[0.0, 1.0], [0.0, 3.0]]), name="broadcast"
    ),
    Case(K.MINIMUM, tp.minimum, (f64(-1.0), f64(-2.0)), f64(-2.0), name="scalars"),
    Case(K.MINIMUM, tp.minimum, (EMPTY, EMPTY), EMPTY, name="empty"),
    Case(
        K.MINIMUM,
        tp.minimum,
        (DISTINCT23, DISTINCT3 + 0.1),
        _apply(min, "float64", DISTINCT23, DISTINCT3 + 0.1),
        grad=True,
        name="grad",
    ),
    # -- SquaredDifference ---------------------------------------------------------------
    Case(
        K.SQUARED_DIFFERENCE,
        tp.squared_difference,
        (f32([1.0, 5.0, -2.0]), f32([3.0, 2.0, -2.0])),
        f32([4.0, 9.0, 0.0]),
        name="float32",
    ),
    Case(
        K.SQUARED_DIFFERENCE,
        tp.squared_difference,
        (f64([0.5, -1.5]), f64([-0.25, 1.0])),
        f64([0.5625, 6.25]),
        name="float64",
    ),
    Case(K.SQUARED_DIFFERENCE, tp.squared_difference, (i32([1, -3]), i32([4, 2])), i32([9, 25]), name="int32"),
    Case(K.SQUARED_DIFFERENCE, tp.squared_difference, (i64([2**20, 0]), i64([0, -7])), i64([2**40, 49]), name="int64"),
    Case(
        K.SQUARED_DIFFERENCE,
        tp.squared_difference,
        (f32([[1.0], [3.0]]), f32([0.0, 2.0])),
        f32([[1.0, 1.0], [9.0, 1.0]]),
        name="broadcast",
    ),
    Case(K.SQUARED_DIFFERENCE, tp.squared_difference, (f32([1.5]), 0.5), f32([1.0]), name="weak-float"),
    Case(K.SQUARED_DIFFERENCE, tp.squared_difference, (f64(3.0), f64(-1.0)), f64(16.0), name="scalars"),
    Case(K.SQUARED_DIFFERENCE, tp.squared_difference, (EMPTY03, EMPTY03), EMPTY03, name="empty"),
    Case(
        K.SQUARED_DIFFERENCE,
        tp.squared_difference,
        (f64([inf, inf, nan]), f64([inf, 1.0, 0.0])),
        f64([nan, inf, nan]),
        name="inf-nan",
    ),
    Case(
        K.SQUARED_DIFFERENCE,
        tp.squared_difference,
        (b8([1]), b8([0])),
        raises=tp.DTypeError,
        match="expects numeric",
        name="bool-rejected",
    ),
    Case(
        K.SQUARED_DIFFERENCE,
        tp.squared_difference,
        (A23, B3),
        _apply(lambda x, y: (x - y) ** 2, "float64", A23, B3),
        grad=True,
        name="grad",
    ),
]

# -- Atan2 -------------------------------------------------------------------------
QUADRANTS_A = f64([1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 1.0, -1.0, 0.0])
QUADRANTS_B = f64([1.0, -1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 0.0, 1.0])
ATAN2_A = f64([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]])
ATAN2_B = f64([1.1, 0.6, -0.9])
CASES += [
    Case(
        K.ATAN2,
        tp.atan2,
        (QUADRANTS_A, QUADRANTS_B),
        _apply(math.atan2, "float64", QUADRANTS_A, QUADRANTS_B),
        name="float64-quadrants",
    ),
    Case(
        K.ATAN2,
        tp.atan2,
        (f32(QUADRANTS_A), f32(QUADRANTS_B)),
        _apply(math.atan2, "float32", QUADRANTS_A, QUADRANTS_B),
        name="float32-quadrants",
    ),
    Case(
        K.ATAN2,
        tp.atan2,
        (i32([1, 0, -3]), i32([1, -2, 0])),
        f32([math.pi / 4, math.pi, -math.pi / 2]),
        name="int32-gives-float32",
    ),
    Case(
        K.ATAN2,
        tp.atan2,
        (i64([2, -5]), i64([2, -5])),
        f32([math.pi / 4, -3 * math.pi / 4]),
        name="int64-gives-float32",
    ),
    Case(K.ATAN2, tp.atan2, (i32([1]), f64([2.0])), f64([math.atan2(1.0, 2.0)]), name="promote-int32-float64"),
    Case(
        K.ATAN2,
        tp.atan2,
        (f64([inf, inf, 1.0, nan, 1.0]), f64([inf, -inf, inf, 1.0, nan])),
        f64([math.pi / 4, 3 * math.pi / 4, 0.0, nan, nan]),
        name="inf-nan",
    ),
    Case(
        K.ATAN2,
        tp.atan2,
        (f32([[1.0], [-1.0]]), f32([1.0, -1.0])),
        f32([[math.pi / 4, 3 * math.pi / 4], [-math.pi / 4, -3 * math.pi / 4]]),
        name="broadcast",
    ),
    Case(K.ATAN2, tp.atan2, (f64(1.0), -1.0), f64(3 * math.pi / 4), name="scalars"),
    Case(K.ATAN2, tp.atan2, (i32(np.zeros((0, 2))), i32(np.zeros((0, 2)))), f32(np.zeros((0, 2))), name="empty"),
    Case(
        K.ATAN2, tp.atan2, (ATAN2_A, ATAN2_B), _apply(math.atan2, "float64", ATAN2_A, ATAN2_B), grad=True, name="grad"
    ),
]

# -- Prelu (inputs x, alpha) ---------------------------------------------------------
PRELU_X = f64([[-1.2, 0.7, -0.4], [1.5, -2.1, 0.9]])
PRELU_ALPHA = f64([0.1, 0.25, 0.3])


def _prelu(x: float, alpha: float) -> float:
    return x if x >= 0 else alpha * x


CASES += [
    Case(K.PRELU, tp.prelu, (f32([-2.0, -0.5, 0.0, 3.0]), f32(0.25)), f32([-0.5, -0.125, 0.0, 3.0]), name="float32"),
    Case(
        K.PRELU,
        tp.prelu,
        (f32([[-1.0, 2.0, -3.0], [4.0, -5.0, -6.0]]), f32([0.1, 0.2, 0.3])),
        f32([[-0.1, 2.0, -0.9], [4.0, -1.0, -1.8]]),
        name="per-channel",
    ),
    Case(K.PRELU, tp.prelu, (f64([-3.0, 0.5]), f64([0.5, 0.5])), f64([-1.5, 0.5]), name="float64"),
    Case(K.PRELU, tp.prelu, (i32([-3, 4, 0]), i32([2])), i32([-6, 4, 0]), name="int32"),
    Case(K.PRELU, tp.prelu, (i64([-(2**30), 5]), i64(4)), i64([-(2**32), 5]), name="int64"),
    Case(K.PRELU, tp.prelu, (f32([-4.0, 4.0]), 0.5), f32([-2.0, 4.0]), name="weak-alpha"),
    Case(K.PRELU, tp.prelu, (f64([nan, -inf, inf]), f64(0.5)), f64([nan, -inf, inf]), name="inf-nan"),
    Case(K.PRELU, tp.prelu, (f64(-2.0), f64(0.25)), f64(-0.5), name="scalars"),
    Case(K.PRELU, tp.prelu, (EMPTY03, f32([0.1, 0.2, 0.3])), EMPTY03, name="empty"),
    Case(K.PRELU, tp.prelu, (b8([1]), b8([0])), raises=tp.DTypeError, match="expects numeric", name="bool-rejected"),
    Case(
        K.PRELU,
        tp.prelu,
        (f32(np.zeros((2, 3))), f32([0.1, 0.2])),
        raises=tp.ShapeError,
        match="cannot be broadcast",
        name="shape-mismatch",
    ),
    Case(
        K.PRELU,
        tp.prelu,
        (PRELU_X, PRELU_ALPHA),
        _apply(_prelu, "float64", PRELU_X, PRELU_ALPHA),
        grad=True,
        name="grad",
    ),
    Case(
        K.PRELU,
        tp.prelu,
        (PRELU_X, f64(0.2)),
        _apply(_prelu, "float64", PRELU_X, f64(0.2)),
        grad=True,
        name="grad-scalar-alpha",
    ),
]
