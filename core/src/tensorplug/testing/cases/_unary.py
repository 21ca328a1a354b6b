"""Conformance cases: unary elementwise kernels.

Most kernels are described by their kernel reference entry (its NumPy
formula and :class:`~tensorplug.kernel_reference.Samples`: sample points in
its domain, hand-worked NaN/inf values, points for the gradient check), from
which the standard cases are built: float32, float64, int32, int64, bool, a
0-d scalar, an empty tensor, the special values, and a second-order gradient
check; a floating-point kernel takes integer and bool inputs as float32, a
numeric one keeps integer dtypes and refuses bool. Kernels with attributes
and the predicates have hand-written cases below.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.kernel_reference import REFERENCE, KernelEntry
from tensorplug.kernel_reference._entries import FLOAT as _FLOAT_DTYPES
from tensorplug.kernel_reference._entries import NUMERIC as _NUMERIC_DTYPES
from tensorplug.kernel_reference._unary import SELU_ALPHA, SELU_SCALE
from tensorplug.testing._case import Case, b8, f32, f64, i32, i64

NAN, INF = math.nan, math.inf

Ref = Callable[[float], float]


def _expected(ref: Ref, held: np.ndarray, dtype: Any) -> np.ndarray:
    """``ref`` (float64) applied to each value as the input tensor holds it, as an array of ``dtype``."""
    return np.array([ref(float(v)) for v in held.ravel()], dtype=dtype).reshape(held.shape)


def _untyped(value: Any) -> Any:
    """``value`` hidden from the type checker: some error cases pass a wrong type on purpose."""
    return value


def _sigmoid(v: float) -> float:
    return 1 / (1 + math.exp(-v))


def _elu(v: float) -> float:
    return v if v > 0 else math.expm1(v)


def _selu(v: float) -> float:
    return SELU_SCALE * (v if v > 0 else SELU_ALPHA * math.expm1(v))


# -- floating-point kernels: integer and bool inputs give float32 -------------------------------------------
# Their standard cases come from the kernel reference: an entry with samples gives the kernel's NumPy formula (the
# expected values, computed in float64), the points to sample and the special values worked out by hand.


def _by_formula(formula: Callable[..., Any], held: np.ndarray, dtype: Any) -> np.ndarray:
    """``formula`` applied to the values as the input tensor holds them, as an array of ``dtype``.

    It runs in ``np.longdouble`` (80-bit extended precision on x86), so that the expected values come from
    other code than the float64 NumPy functions a backend's kernels may call, and are rounded once.
    """
    with np.errstate(all="ignore"):
        return np.asarray(formula(held.astype(np.longdouble)), dtype=np.longdouble).astype(dtype)


def standard_cases(entry: KernelEntry) -> list[Case]:
    """The standard cases of a unary kernel, built from its kernel reference entry.

    float32, float64, int32, int64, bool, a 0-d scalar and an empty tensor
    against the entry's ``numpy`` formula, its hand-worked special values, and
    a second-order gradient check. A floating-point kernel takes integer and
    bool inputs as float32; a numeric one keeps integer dtypes (its float64
    results are exact) and refuses bool.
    """
    samples, formula = entry.samples, entry.numpy
    if samples is None or formula is None:
        raise ValueError(f"{entry.name}: its kernel reference entry gives no numpy formula and samples")
    numeric = entry.inputs[0].dtypes == _NUMERIC_DTYPES
    k, op = entry.name, getattr(tp, entry.op_name)
    points, ints, grad = list(samples.points), list(samples.ints), list(samples.grad)
    held32, held64, scalar = f32(points), f64(points).reshape(2, -1), f32(points[3])
    special_in, special_out = samples.special
    rtol64, atol64 = (1e-15, 0.0) if numeric else (1e-13, 1e-15)  # a numeric kernel's float64 results are exact
    int32, int64 = (np.int32, np.int64) if numeric else (np.float32, np.float32)
    if numeric:
        bools = Case(k, op, (b8([True, False]),), raises=tp.DTypeError, match="numeric tensor, got bool", name="bool")
        empty = Case(k, op, (i64(np.zeros((2, 0))),), i64(np.zeros((2, 0))), name="empty")
    else:
        bools = Case(k, op, (b8([False, True]),), _by_formula(formula, b8([False, True]), np.float32), name="bool")
        empty = Case(k, op, (f32(np.zeros((0, 3))),), f32(np.zeros((0, 3))), name="empty")
    return [
        Case(k, op, (held32,), _by_formula(formula, held32, np.float32), name="float32"),
        Case(k, op, (held64,), _by_formula(formula, held64, np.float64), rtol=rtol64, atol=atol64, name="float64"),
        Case(k, op, (i32(ints),), _by_formula(formula, i32(ints), int32), name="int32"),
        Case(k, op, (i64(ints),), _by_formula(formula, i64(ints), int64), name="int64"),
        bools,
        Case(k, op, (scalar,), _by_formula(formula, scalar, np.float32), name="scalar"),
        empty,
        Case(k, op, (f32(list(special_in)),), f32(list(special_out)), name="special"),
        Case(k, op, (f64(grad),), _by_formula(formula, f64(grad), np.float64), rtol=1e-6 if numeric else 1e-12,
             grad=True, name="grad"),
    ]  # fmt: skip


FLOATING = [entry for entry in REFERENCE.values() if entry.family == "unary" and entry.samples is not None
            and entry.inputs[0].dtypes == _FLOAT_DTYPES]  # fmt: skip
"""The floating-point unary kernels whose standard cases come from their kernel reference entry."""


NUMERIC = [entry for entry in REFERENCE.values() if entry.family == "unary" and entry.samples is not None
           and entry.inputs[0].dtypes == _NUMERIC_DTYPES]  # fmt: skip
"""The numeric unary kernels whose standard cases come from their kernel reference entry."""


# -- erf against math.erf, to float64 accuracy ---------------------------------------------------------------

_ERF_POINTS = np.concatenate([
    np.linspace(-6.5, 6.5, 2601),
    np.geomspace(1e-300, 30.0, 400),
    -np.geomspace(1e-300, 30.0, 400),
    [0.46875, np.nextafter(0.46875, 1.0), 4.0, np.nextafter(4.0, 5.0), 26.5, 27.0, 1e10, 1e300, 5e-324],
])  # fmt: skip

# -- hand-written cases --------------------------------------------------------------------------------------

_bool_grid = b8([[True, False], [False, False]])

HAND = [
    Case(K.ERF, tp.erf, (f64(_ERF_POINTS),), _expected(math.erf, f64(_ERF_POINTS), np.float64), rtol=1e-15,
         atol=0.0, name="float64-accuracy"),
    # erf(x) - 1 for |x| > 0.46875 and x R(x**2) below: both sides of the branch points
    Case(K.ERF, tp.erf, (f32([0.4, 0.46875, 0.5, 3.9, 4.0, 4.1]),),
         _expected(math.erf, f32([0.4, 0.46875, 0.5, 3.9, 4.0, 4.1]), np.float32), name="branches"),
    Case(K.SOFTPLUS, tp.softplus, (f64([-700.0, -40.0, 40.0, 800.0]),),
         f64([math.exp(-700.0), math.exp(-40.0), 40.0 + math.exp(-40.0), 800.0]), rtol=1e-14, atol=0.0,
         name="large-magnitude"),
    Case(K.SIGMOID, tp.sigmoid, (f64([-800.0, 800.0]),), f64([0.0, 1.0]), atol=1e-300, name="no-overflow"),
    Case(K.SIGMOID, tp.sigmoid, (f64([-30.0, -45.0, -700.0]),),
         f64([_sigmoid(-30.0), _sigmoid(-45.0), math.exp(-700.0)]), rtol=1e-14, atol=0.0, name="large-negative"),
    # e**x - 1 loses digits near 0; expm1 does not
    Case(K.ELU, tp.elu, (f64([-1e-10, -1e-6]),), f64([_elu(-1e-10), _elu(-1e-6)]), rtol=1e-14, atol=0.0,
         name="near-zero"),
    Case(K.SELU, tp.selu, (f64([-1e-10, -1e-6]),), f64([_selu(-1e-10), _selu(-1e-6)]), rtol=1e-14, atol=0.0,
         name="near-zero"),
    Case(K.EXPM1, tp.expm1, (f64([1e-10, -1e-12]),), f64([1e-10 + 5e-21, -1e-12 + 5e-25]), rtol=1e-15, atol=0.0,
         name="near-zero"),
    # subnormal inputs stay as they are (not applicable to a backend that declares flush_to_zero)
    Case(K.NEG, tp.neg, (f32([-1e-40, 1e-45]),), -f32([-1e-40, 1e-45]), atol=0.0, name="subnormal"),
    # e**-90 is 8.2e-40, subnormal in float32: kept (to 1e-5, a few units of its last place), or zero on a backend
    # that declares flush_to_zero
    Case(K.EXP, tp.exp, (f32([-90.0, 0.0]),), f32([math.exp(-90.0), 1.0]), rtol=1e-5, atol=0.0,
         name="subnormal-result"),
    Case(K.LOG1P, tp.log1p, (f64([1e-10, -1e-12]),), f64([1e-10 - 5e-21, -1e-12 - 5e-25]), rtol=1e-15, atol=0.0,
         name="near-zero"),
    # -- leaky_relu: alpha * x below 0 ---------------------------------------------------------------------------
    Case(K.LEAKY_RELU, tp.leaky_relu, (f32([-2.0, -0.5, 0.0, 3.0]),), f32([-0.4, -0.1, 0.0, 3.0]), name="default"),
    Case(K.LEAKY_RELU, lambda x: tp.leaky_relu(x, alpha=0.5), (f64([[-3.0, 1.0], [-1.0, 0.25]]),),
         f64([[-1.5, 1.0], [-0.5, 0.25]]), name="float64"),
    Case(K.LEAKY_RELU, lambda x: tp.leaky_relu(x, 1.5), (f32([-2.0, 2.0]),), f32([-3.0, 2.0]), name="alpha-above-1"),
    Case(K.LEAKY_RELU, tp.leaky_relu, (i32([-5, 0, 7]),), f32([-1.0, 0.0, 7.0]), name="int32"),
    Case(K.LEAKY_RELU, tp.leaky_relu, (i64([-5, 7]),), f32([-1.0, 7.0]), name="int64"),
    Case(K.LEAKY_RELU, tp.leaky_relu, (b8([True, False]),), f32([1.0, 0.0]), name="bool"),
    Case(K.LEAKY_RELU, tp.leaky_relu, (f32(-10.0),), f32(-2.0), name="scalar"),
    Case(K.LEAKY_RELU, tp.leaky_relu, (f32(np.zeros((3, 0))),), f32(np.zeros((3, 0))), name="empty"),
    Case(K.LEAKY_RELU, tp.leaky_relu, (f32([NAN, INF, -INF]),), f32([NAN, INF, -INF]), name="special"),
    Case(K.LEAKY_RELU, lambda x: tp.leaky_relu(x, alpha=_untyped(tp.tensor(0.1))), (f32([1.0]),), raises=TypeError,
         match="alpha must be a real number", name="tensor-alpha"),
    Case(K.LEAKY_RELU, lambda x: tp.leaky_relu(x, 0.3), (f64([-1.2, -0.4, 0.5, 2.0]),),
         f64([-0.36, -0.12, 0.5, 2.0]), rtol=1e-14, grad=True, name="grad"),
    # -- step: 1 above 0, alpha at or below 0, NaN stays NaN ---------------------------------------------------
    Case(K.STEP, tp.step, (f32([-2.0, 0.0, -0.0, 1e-30, 3.0]),), f32([0.0, 0.0, 0.0, 1.0, 1.0]), name="default"),
    Case(K.STEP, lambda x: tp.step(x, alpha=-0.5), (f64([[-2.0, 0.0], [0.1, 3.0]]),), f64([[-0.5, -0.5], [1.0, 1.0]]),
         name="float64-alpha"),
    Case(K.STEP, lambda x: tp.step(x, 0.5), (f32([NAN, INF, -INF]),), f32([NAN, 1.0, 0.5]), name="special"),
    Case(K.STEP, tp.step, (f64([NAN, INF, -INF, -0.0, 5e-324, -5e-324]),), f64([NAN, 1.0, 0.0, 0.0, 1.0, 0.0]),
         name="special-default-alpha"),
    # a NaN among many values (the backends find NaN with a reduction first): only its own entry is NaN
    Case(K.STEP, tp.step, (f32([[v if (i * 7 + j) % 97 else NAN for j, v in enumerate(np.linspace(-3, 3, 40))]
                                for i in range(30)]),),
         f32([[(1.0 if v > 0 else 0.0) if (i * 7 + j) % 97 else NAN for j, v in enumerate(np.linspace(-3, 3, 40))]
              for i in range(30)]), name="nan-among-many"),
    Case(K.STEP, tp.step, (i32([-3, 0, 4]),), i32([0, 0, 1]), name="int32"),
    Case(K.STEP, lambda x: tp.step(x, -1), (i64([-3, 0, 4]),), i64([-1, -1, 1]), name="int64-alpha"),
    Case(K.STEP, tp.step, (f32(2.0),), f32(1.0), name="scalar"),
    Case(K.STEP, tp.step, (f32(NAN),), f32(NAN), name="scalar-nan"),
    Case(K.STEP, tp.step, (f32(np.zeros(0)),), f32(np.zeros(0)), name="empty"),
    Case(K.STEP, lambda x: tp.step(x, 0.5), (i32([1]),), raises=tp.DTypeError, match="not a whole number",
         name="int-fractional-alpha"),
    Case(K.STEP, tp.step, (b8([True]),), raises=tp.DTypeError, match="expects a numeric tensor", name="bool"),
    Case(K.STEP, lambda x: tp.step(x, _untyped(None)), (f32([1.0]),), raises=TypeError,
         match="alpha must be a real number", name="none-alpha"),
    Case(K.STEP, lambda x: tp.step(x, 0.2), (f64([-1.3, -0.2, 0.4, 2.0]),), f64([0.2, 0.2, 1.0, 1.0]), grad=True,
         name="grad"),
    # relu's gradient is dy * step(x), as TensorFlow.js: 0 at and below 0, NaN at NaN
    Case(K.RELU, lambda x: tp.grad(lambda v: tp.sum(tp.relu(v)))(x), (f32([NAN, -1.0, -0.0, 0.0, 1e-30, 2.0]),),
         f32([NAN, 0.0, 0.0, 0.0, 1.0, 1.0]), name="gradient-at-nan-and-zero"),
    # -- clip_by_value: bounds included; NaN stays NaN ----------------------------------------------------------
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, -1.0, 2.5), (f32([-3.0, -1.0, 0.5, 2.5, 9.0]),),
         f32([-1.0, -1.0, 0.5, 2.5, 2.5]), name="float32"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, 0, 1), (f64([[-0.1, 0.3], [1.7, 1.0]]),),
         f64([[0.0, 0.3], [1.0, 1.0]]), name="float64"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, -2, 3), (i32([-9, -2, 0, 3, 7]),), i32([-2, -2, 0, 3, 3]),
         name="int32"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, -INF, 4.0), (i64([-2**40, 0, 2**40]),), i64([-2**40, 0, 4]),
         name="int64-infinite-bound"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, -1e12, 1e12), (i32([-5, 5]),), i32([-5, 5]),
         name="int32-bounds-beyond-range"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, 1.0, 1.0), (f32([-1.0, 3.0]),), f32([1.0, 1.0]),
         name="equal-bounds"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, -1.0, 1.0), (f32([NAN, INF, -INF]),), f32([NAN, 1.0, -1.0]),
         name="special"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, 0.0, 1.0), (f32(5.0),), f32(1.0), name="scalar"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, 0.0, 1.0), (f32(np.zeros((0, 2))),), f32(np.zeros((0, 2))),
         name="empty"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, 2.0, 1.0), (f32([1.0]),), raises=tp.TensorplugError,
         match=r"clip_value_min \(2.0\) must be less than or equal to clip_value_max \(1.0\)", name="min-above-max"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, NAN, 1.0), (f32([1.0]),), raises=tp.TensorplugError,
         match="must be less than or equal", name="nan-bound"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, 0.5, 2.0), (i32([1]),), raises=tp.DTypeError,
         match="clip_value_min=0.5 is not a whole number", name="int-fractional-bound"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, _untyped("0"), 1), (f32([1.0]),), raises=TypeError,
         match="clip_value_min must be a real number", name="string-bound"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, 0, 1), (b8([True]),), raises=tp.DTypeError,
         match="expects a numeric tensor", name="bool"),
    Case(K.CLIP_BY_VALUE, lambda x: tp.clip_by_value(x, -1.0, 1.5), (f64([-2.1, -0.3, 0.6, 1.2, 3.0]),),
         f64([-1.0, -0.3, 0.6, 1.2, 1.5]), grad=True, name="grad"),
    # -- predicates --------------------------------------------------------------------------------------------
    Case(K.IS_NAN, tp.isnan, (f32([NAN, INF, -INF, 0.0, 1.5]),), b8([True, False, False, False, False]),
         name="float32"),
    Case(K.IS_NAN, tp.isnan, (f64([[NAN, 1.0], [-INF, NAN]]),), b8([[True, False], [False, True]]), name="float64"),
    Case(K.IS_NAN, tp.isnan, (i32([0, -3]),), b8([False, False]), name="int32"),
    Case(K.IS_NAN, tp.isnan, (i64([5]),), b8([False]), name="int64"),
    Case(K.IS_NAN, tp.isnan, (b8([True, False]),), b8([False, False]), name="bool"),
    Case(K.IS_NAN, tp.isnan, (f32(NAN),), b8(True), name="scalar"),
    Case(K.IS_NAN, tp.isnan, (f32(np.zeros((0, 4))),), b8(np.zeros((0, 4))), name="empty"),
    Case(K.IS_INF, tp.isinf, (f32([NAN, INF, -INF, 0.0, 3e38]),), b8([False, True, True, False, False]),
         name="float32"),
    Case(K.IS_INF, tp.isinf, (f64([[NAN, 1e308], [-INF, INF]]),), b8([[False, False], [True, True]]),
         name="float64"),
    Case(K.IS_INF, tp.isinf, (i32([0, 2**31 - 1]),), b8([False, False]), name="int32"),
    Case(K.IS_INF, tp.isinf, (i64([5]),), b8([False]), name="int64"),
    Case(K.IS_INF, tp.isinf, (b8([True, False]),), b8([False, False]), name="bool"),
    Case(K.IS_INF, tp.isinf, (f32(-INF),), b8(True), name="scalar"),
    Case(K.IS_INF, tp.isinf, (f32(np.zeros(0)),), b8(np.zeros(0)), name="empty"),
    Case(K.IS_FINITE, tp.isfinite, (f32([NAN, INF, -INF, 0.0, 3e38]),), b8([False, False, False, True, True]),
         name="float32"),
    Case(K.IS_FINITE, tp.isfinite, (f64([[NAN, 1e308], [-INF, -0.0]]),), b8([[False, True], [False, True]]),
         name="float64"),
    Case(K.IS_FINITE, tp.isfinite, (i32([0, -2**31]),), b8([True, True]), name="int32"),
    Case(K.IS_FINITE, tp.isfinite, (i64([5]),), b8([True]), name="int64"),
    Case(K.IS_FINITE, tp.isfinite, (b8([True, False]),), b8([True, True]), name="bool"),
    Case(K.IS_FINITE, tp.isfinite, (f32(NAN),), b8(False), name="scalar"),
    Case(K.IS_FINITE, tp.isfinite, (f32(np.zeros((2, 0))),), b8(np.zeros((2, 0))), name="empty"),
    Case(K.LOGICAL_NOT, tp.logical_not, (_bool_grid,), b8([[False, True], [True, True]]), name="values"),
    Case(K.LOGICAL_NOT, tp.logical_not, (b8(False),), b8(True), name="scalar"),
    Case(K.LOGICAL_NOT, tp.logical_not, (b8(np.zeros((0, 2))),), b8(np.zeros((0, 2))), name="empty"),
    Case(K.LOGICAL_NOT, tp.logical_not, (f32([1.0]),), raises=tp.DTypeError, match="expects a bool tensor, got float32",
         name="float32"),
    Case(K.LOGICAL_NOT, tp.logical_not, (i32([1]),), raises=tp.DTypeError, match="expects a bool tensor, got int32",
         name="int32"),
]  # fmt: skip

CASES: list[Case] = [
    *(case for entry in FLOATING for case in standard_cases(entry)),
    *(case for entry in NUMERIC for case in standard_cases(entry)),
    *HAND,
]
