"""Conformance cases: the binary kernels with Python's exact semantics (floor division and modulo, the comparisons,
the logical ops), and AddN and Select.

Expected values come from Python's own operators on Python numbers (see ``_binary._apply``), never from NumPy's
ufuncs, which are what the numpy kernels call.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing._case import Case, b8, f32, f64, i32, i64
from tensorplug.testing.cases._binary import A23, AWAY3, B3, EMPTY, EMPTY03, _apply, _silent

inf, nan = math.inf, math.nan

CASES: list[Case] = []

# -- FloorDiv and Mod: Python's floor semantics, integers kept ----------------------------
MOD_A = f64([[5.3, -2.7, 7.9], [-4.3, 0.65, 3.3]])
MOD_B = f64([2.0, 1.5, -3.1])
CASES += [
    Case(
        K.FLOOR_DIV,
        tp.floor_div,
        (i32([7, -7, 7, -7, 6]), i32([2, 2, -2, -2, 3])),
        i32([3, -4, -4, 3, 2]),
        name="int32",
    ),
    Case(
        K.FLOOR_DIV,
        tp.floor_div,
        (i64([2**40 + 1, -(2**40) - 1]), i64([2, 2])),
        i64([2**39, -(2**39) - 1]),
        name="int64",
    ),
    Case(
        K.FLOOR_DIV,
        tp.floor_div,
        (f32([7.5, -7.5, 7.5, -7.5]), f32([2.0, 2.0, -2.0, -2.0])),
        f32([3.0, -4.0, -4.0, 3.0]),
        name="float32",
    ),
    # floor(a / b) as TensorFlow.js: 1.0 / 0.1 rounds to 10.0 exactly (Python's 1.0 // 0.1 is 9.0)
    Case(K.FLOOR_DIV, tp.floor_div, (f64([1.0]), f64([0.1])), f64([10.0]), name="float-floors-the-quotient"),
    Case(K.FLOOR_DIV, _silent(tp.floor_div), (i32([5, -5, 0]), i32([0, 0, 0])), i32([0, 0, 0]), name="int-by-zero"),
    Case(K.FLOOR_DIV, _silent(tp.floor_div), (i64([5, -5]), 0), i64([0, 0]), name="int64-by-zero"),
    Case(K.FLOOR_DIV, tp.floor_div, (f32([1.0, -1.0, 0.0]), f32(0.0)), f32([inf, -inf, nan]), name="float-by-zero"),
    Case(K.FLOOR_DIV, tp.floor_div, (i32([[7], [-7]]), i32([2, 3])), i32([[3, 2], [-4, -3]]), name="broadcast"),
    Case(K.FLOOR_DIV, tp.floor_div, (i64([9, -9]), 4), i64([2, -3]), name="weak-int"),
    Case(K.FLOOR_DIV, tp.floor_div, (i32([7]), 2.0), f32([3.0]), name="weak-float-meets-int"),
    Case(K.FLOOR_DIV, tp.floor_div, (f64(-0.5), f64(0.25)), f64(-2.0), name="scalars"),
    Case(
        K.FLOOR_DIV,
        tp.floor_div,
        (i32(np.zeros((0, 3), np.int32)), i32([1, 2, 3])),
        i32(np.zeros((0, 3))),
        name="empty",
    ),
    Case(
        K.FLOOR_DIV,
        tp.floor_div,
        (b8([1]), b8([1])),
        raises=tp.DTypeError,
        match="expects numeric",
        name="bool-rejected",
    ),
    Case(
        K.FLOOR_DIV,
        lambda x: tp.grad(lambda y: tp.sum(tp.floor_div(y, 2.0)))(x),
        (f64([1.0]),),
        raises=tp.GradientError,
        match="'FloorDiv' is not differentiable",
        name="not-differentiable",
    ),
    Case(K.MOD, tp.mod, (i32([7, -7, 7, -7, 6]), i32([3, 3, -3, -3, 3])), i32([1, 2, -2, -1, 0]), name="int32"),
    Case(K.MOD, tp.mod, (i64([2**40 + 5, -(2**40)]), i64([2**20, 3])), i64([5, 2]), name="int64"),
    Case(
        K.MOD,
        tp.mod,
        (f32([5.5, -5.5, 5.5, -5.5]), f32([2.0, 2.0, -2.0, -2.0])),
        f32([1.5, 0.5, -0.5, -1.5]),
        name="float32",
    ),
    Case(
        K.MOD,
        tp.mod,
        (f64([10.25, -3.75, 0.3]), f64([4.0, 1.5, 0.1])),
        _apply(operator.mod, "float64", f64([10.25, -3.75, 0.3]), f64([4.0, 1.5, 0.1])),
        name="float64",
    ),
    Case(K.MOD, _silent(tp.mod), (i32([5, -5, 0]), i32([0, 0, 0])), i32([0, 0, 0]), name="int-by-zero"),
    Case(K.MOD, tp.mod, (f32([1.0, -1.0]), f32([0.0, 0.0])), f32([nan, nan]), name="float-by-zero"),
    Case(K.MOD, tp.mod, (f64([inf, nan]), f64([2.0, 2.0])), f64([nan, nan]), name="inf-nan"),
    Case(K.MOD, tp.mod, (i32([[7], [-7]]), i32([2, 3])), i32([[1, 1], [1, 2]]), name="broadcast"),
    Case(K.MOD, tp.mod, (i64([9, -9]), 4), i64([1, 3]), name="weak-int"),
    Case(K.MOD, tp.mod, (f32([-7.5]), 2), f32([0.5]), name="weak-int-meets-float"),
    Case(K.MOD, tp.mod, (f64(-0.5), f64(0.375)), f64(0.25), name="scalars"),
    Case(K.MOD, tp.mod, (EMPTY, f32(2.0)), EMPTY, name="empty"),
    Case(K.MOD, tp.mod, (b8([1]), b8([1])), raises=tp.DTypeError, match="expects numeric", name="bool-rejected"),
    Case(K.MOD, tp.mod, (MOD_A, MOD_B), _apply(operator.mod, "float64", MOD_A, MOD_B), grad=True, name="grad"),
]

# -- Comparisons: one table of inputs, expected values from Python's own operators ----------
COMPARISONS: list[tuple[str, Callable[..., Any], Callable[[Any, Any], bool]]] = [
    (K.EQUAL, tp.equal, operator.eq),
    (K.NOT_EQUAL, tp.not_equal, operator.ne),
    (K.LESS, tp.less, operator.lt),
    (K.LESS_EQUAL, tp.less_equal, operator.le),
    (K.GREATER, tp.greater, operator.gt),
    (K.GREATER_EQUAL, tp.greater_equal, operator.ge),
]
COMPARED: list[tuple[str, np.ndarray, np.ndarray]] = [
    ("float32-nan", f32([1.0, 2.0, 3.0, nan, nan]), f32([1.0, 3.0, 2.0, 1.0, nan])),
    ("float64-inf", f64([inf, -inf, inf, 1e300]), f64([inf, inf, 1e308, -inf])),
    ("int32-broadcast", i32([[1], [2], [3]]), i32([2, 3])),
    ("int64", i64([2**40, -5, 2**41]), i64([2**40, 5, 2**40])),
    ("promote-int32-float32", i32([1, 2, 3]), f32([1.0, 2.5, 2.5])),
    ("bool", b8([1, 1, 0, 0]), b8([1, 0, 1, 0])),
    ("scalars", f32(2.0), f32(2.0)),
    ("empty", EMPTY03, f32([1.0, 2.0, 3.0])),
]
for _kernel, _op, _python in COMPARISONS:
    CASES += [Case(_kernel, _op, (a, b), _apply(_python, "bool", a, b), name=name) for name, a, b in COMPARED]
    CASES += [
        Case(
            _kernel,
            _op,
            (f64([0.5, 1.0, 1.5]), 1),
            _apply(_python, "bool", f64([0.5, 1.0, 1.5]), f64(1.0)),
            name="weak-int",
        ),
        Case(
            _kernel,
            _op,
            (f32(np.zeros(2)), f32(np.zeros(3))),
            raises=tp.ShapeError,
            match="cannot be broadcast",
            name="shape-mismatch",
        ),
    ]

# -- Logical: bool operands only ----------------------------------------------------------
LOGICALS: list[tuple[str, Callable[..., Any], Callable[[bool, bool], bool]]] = [
    (K.LOGICAL_AND, tp.logical_and, lambda x, y: x and y),
    (K.LOGICAL_OR, tp.logical_or, lambda x, y: x or y),
    (K.LOGICAL_XOR, tp.logical_xor, operator.ne),
]
TRUTH_A, TRUTH_B = b8([1, 1, 0, 0]), b8([1, 0, 1, 0])
COLUMN, ROW = b8([[1], [0]]), b8([1, 0])
for _kernel, _op, _python in LOGICALS:
    CASES += [
        Case(_kernel, _op, (TRUTH_A, TRUTH_B), _apply(_python, "bool", TRUTH_A, TRUTH_B), name="truth-table"),
        Case(_kernel, _op, (COLUMN, ROW), _apply(_python, "bool", COLUMN, ROW), name="broadcast"),
        Case(_kernel, _op, (b8(True), b8(False)), _apply(_python, "bool", b8(True), b8(False)), name="scalars"),
        Case(_kernel, _op, (ROW, True), _apply(_python, "bool", ROW, b8(True)), name="weak-bool"),
        Case(_kernel, _op, (b8(np.zeros((0, 2))), ROW), b8(np.zeros((0, 2))), name="empty"),
        Case(_kernel, _op, (i32([1, 0]), ROW), raises=tp.DTypeError, match="expects bool tensors", name="int-rejected"),
        Case(
            _kernel,
            _op,
            (ROW, f32([1.0, 0.0])),
            raises=tp.DTypeError,
            match="expects bool tensors",
            name="float-rejected",
        ),
        Case(_kernel, _op, (ROW, 1), raises=tp.DTypeError, match="expects bool tensors", name="python-int-rejected"),
        Case(
            _kernel, _op, (b8([1, 0, 1]), ROW), raises=tp.ShapeError, match="cannot be broadcast", name="shape-mismatch"
        ),
    ]

# -- AddN (a list input) ------------------------------------------------------------------
CASES += [
    Case(K.ADD_N, tp.add_n, ([f32([1.0, 2.0]), f32([3.0, 4.5]), f32([-1.0, 0.25])],), f32([3.0, 6.75]), name="float32"),
    Case(K.ADD_N, tp.add_n, ([f64([1.5, -2.0])],), f64([1.5, -2.0]), name="single"),
    Case(K.ADD_N, tp.add_n, ([i32([[1, 2]]), i32([[3, -4]]), i32([[5, 6]])],), i32([[9, 4]]), name="int32"),
    Case(K.ADD_N, tp.add_n, ([i64([2**40]), i64([2**40])],), i64([2**41]), name="int64"),
    Case(K.ADD_N, tp.add_n, ([b8([1, 0, 0]), b8([0, 0, 1])],), b8([1, 0, 1]), name="bool-is-or"),
    Case(K.ADD_N, tp.add_n, ([f32(1.0), f32(2.0), f32(-0.5)],), f32(2.5), name="scalars"),
    Case(K.ADD_N, tp.add_n, ([f32(np.zeros((0, 2))), f32(np.zeros((0, 2)))],), f32(np.zeros((0, 2))), name="empty"),
    Case(K.ADD_N, tp.add_n, ([f64([inf, 1.0, inf]), f64([-inf, nan, 1.0])],), f64([nan, nan, inf]), name="inf-nan"),
    Case(K.ADD_N, tp.add_n, ([[1.0, 2.0], [3.0, 4.0]],), f32([4.0, 6.0]), name="python-lists"),
    Case(
        K.ADD_N,
        tp.add_n,
        ([f32([1.0, 2.0]), f32([1.0])],),
        raises=tp.ShapeError,
        match="same shape",
        name="shape-mismatch",
    ),
    Case(
        K.ADD_N, tp.add_n, ([f32([1.0]), f64([1.0])],), raises=tp.DTypeError, match="same dtype", name="dtype-mismatch"
    ),
    Case(K.ADD_N, tp.add_n, ([],), raises=tp.ShapeError, match="at least one tensor", name="empty-list"),
    Case(K.ADD_N, tp.add_n, (f32([1.0, 2.0]),), raises=tp.TensorplugError, match="expects a list", name="not-a-list"),
    Case(
        K.ADD_N,
        lambda a, b, c: tp.add_n([a, b, c]),
        (A23, -A23 * 0.5, A23 + 1.0),
        _apply(lambda x: x + -x * 0.5 + (x + 1.0), "float64", A23),
        grad=True,
        name="grad",
    ),
    Case(
        K.ADD_N,
        lambda a, b: tp.add_n([a, b, a]),
        (B3, AWAY3),
        _apply(lambda x, y: x + y + x, "float64", B3, AWAY3),
        grad=True,
        name="grad-repeated-input",
    ),
]

# -- Select, through the where op (its kernel is in the shape family's table) ---------------------
CASES += [
    Case(
        K.SELECT,
        tp.where,
        (b8([[1], [0]]), f32([1.0, 2.0, 3.0]), f32([[10.0], [20.0]])),
        f32([[1.0, 2.0, 3.0], [20.0, 20.0, 20.0]]),
        name="where-broadcast",
    ),
    Case(K.SELECT, tp.where, (b8([1, 0]), 1.0, 2.0), f32([1.0, 2.0]), name="where-python-scalars"),
    Case(K.SELECT, tp.where, (b8([1, 0]), i32([1, 2]), f64([0.5, 0.5])), f64([1.0, 0.5]), name="where-promotes"),
    Case(
        K.SELECT,
        tp.where,
        (i32([1, 0]), f32([1.0, 2.0]), f32([3.0, 4.0])),
        raises=tp.DTypeError,
        match="condition must be a bool",
        name="where-condition-not-bool",
    ),
    Case(
        K.SELECT,
        tp.where,
        (b8([[1], [0]]), A23, B3),
        f64([[0.5, -1.25, 2.0], [1.0, -0.5, 0.25]]),
        grad=True,
        name="where-grad",
    ),
]
