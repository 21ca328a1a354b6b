"""Reduction and scan kernels (input ``x``): dask's own chunk-aware reductions and scans.

Sum, Max, Min, All and Any are dask's tree reductions (each chunk reduced,
then the partial results combined in groups); Prod is the same tree with
numpy's product run quietly (inf * 0 gives NaN without a warning, as the
numpy kernel); Mean is that Sum divided by the element count, which the
shapes give. ArgMax and ArgMin are dask's arg-reductions: each chunk's first
extreme and its value, combined in chunk order, so ties and NaNs go to the
first index, as ``np.argmax``. Cumsum and Cumprod are dask's sequential
scan: each chunk's scan plus the running total of the chunks before it.

The attrs come canonical from the ops (``axis`` a sorted tuple of
non-negative axes, or one int for the arg- and scan kernels). Values equal
the numpy backend's, dtypes included (sums and products keep the input's
dtype, integers wrap); floats summed over several chunks may differ in the
last bits, as they add in another order.
"""

# (dask.array has no type annotations)

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dask.array as da
import numpy as np
from dask.array.reductions import cumreduction

from tensorplug_dask._factories import Kernel, as_dask

# -- reductions -----------------------------------------------------------------------------------------------------


def _reduce(reduction: Callable[..., Any], keep_dtype: bool = False) -> Kernel:
    """The kernel of a dask reduction ``reduction(x, axis=, keepdims=)`` over the attrs' axes."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x, axis, keep_dims = as_dask(inputs["x"]), attrs["axis"], attrs["keep_dims"]
        if not axis:
            return x  # reducing no axes is the identity (numpy's reduce over axis=() keeps x as it is)
        empty = _empty_result(x, axis, keep_dims)
        if empty is not None:
            return empty
        if keep_dtype:
            return reduction(x, axis=axis, keepdims=keep_dims, dtype=x.dtype)
        return reduction(x, axis=axis, keepdims=keep_dims)

    kernel.__name__ = getattr(reduction, "__name__", "reduce")
    return kernel


def _empty_result(x: Any, axis: tuple[int, ...], keep_dims: bool) -> Any:
    """The empty result of reducing an empty ``x`` where the result is empty too, else None.

    dask's max and min fail on a graph whose every chunk is empty (numpy's reduce of an empty block with no
    identity); such a result has no values to compute.
    """
    shape = _reduced_shape(x.shape, axis, keep_dims)
    if x.size or math.prod(shape):
        return None
    return da.zeros(shape, dtype=x.dtype)


def _reduced_shape(shape: tuple[int, ...], axis: tuple[int, ...], keep_dims: bool) -> tuple[int, ...]:
    if keep_dims:
        return tuple(1 if i in axis else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axis)


def _quiet_prod(x: np.ndarray, axis: Any = None, keepdims: Any = False, dtype: Any = None) -> Any:
    """One chunk's (or one combination's) product, without numpy's warning for inf * 0."""
    with np.errstate(all="ignore"):
        return np.multiply.reduce(x, axis=axis, keepdims=keepdims, dtype=dtype)


def _prod(x: Any, axis: tuple[int, ...], keepdims: bool, dtype: Any) -> Any:
    return da.reduction(x, _quiet_prod, _quiet_prod, axis=axis, keepdims=keepdims, dtype=dtype)


sum_ = _reduce(da.sum, keep_dtype=True)
prod = _reduce(_prod, keep_dtype=True)
max_ = _reduce(da.max)
min_ = _reduce(da.min)
all_ = _reduce(da.all)
any_ = _reduce(da.any)


def mean(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """The Sum over the axes divided by their element count (NaN over zero elements, without a warning)."""
    x, axis = as_dask(inputs["x"]), attrs["axis"]
    total = sum_(inputs, attrs, backend)
    count = math.prod(x.shape[a] for a in axis)
    return total.map_blocks(_divide, count, dtype=x.dtype)


def _divide(total: np.ndarray, count: int) -> Any:
    with np.errstate(all="ignore"):
        return np.divide(total, count, dtype=total.dtype)


# -- arg-reductions -------------------------------------------------------------------------------------------------


def arg_max(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """The first index of the largest value along the axis (of the first NaN, if any), as int32."""
    return da.argmax(as_dask(inputs["x"]), axis=attrs["axis"]).astype(np.int32)


def arg_min(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """The first index of the smallest value along the axis (of the first NaN, if any), as int32."""
    return da.argmin(as_dask(inputs["x"]), axis=attrs["axis"]).astype(np.int32)


# -- scans ----------------------------------------------------------------------------------------------------------


def _cumsum_block(x: np.ndarray, axis: int, dtype: Any) -> Any:
    with np.errstate(all="ignore"):
        return np.cumsum(x, axis=axis, dtype=dtype)


def _cumprod_block(x: np.ndarray, axis: int, dtype: Any) -> Any:
    with np.errstate(all="ignore"):
        return np.cumprod(x, axis=axis, dtype=dtype)


def _add(a: np.ndarray, b: np.ndarray) -> Any:
    with np.errstate(all="ignore"):
        return np.add(a, b)


def _multiply(a: np.ndarray, b: np.ndarray) -> Any:
    with np.errstate(all="ignore"):
        return np.multiply(a, b)


def _scan(
    name: str, block: Callable[..., Any], binop: Callable[..., Any], identity: int, float_identity: float
) -> Kernel:
    """A cumulative kernel with TensorFlow.js's ``exclusive`` (shift in the identity) and ``reverse``.

    The carry into the first chunk starts at ``float_identity`` for floats: -0.0 for sums, so that a run of
    -0.0 stays -0.0 across chunk boundaries (dask's own cumsum starts at +0.0).
    """

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x, axis = as_dask(inputs["x"]), attrs["axis"]
        if x.shape[axis] == 0:
            return x
        start = float_identity if x.dtype.kind == "f" else identity
        if attrs["reverse"]:
            x = da.flip(x, axis)
        y = cumreduction(block, binop, start, x, axis, dtype=x.dtype)
        if attrs["exclusive"]:
            first = da.full(_with(x.shape, axis, 1), identity, dtype=x.dtype)
            shifted = y[(slice(None),) * axis + (slice(0, -1),)]
            y = da.concatenate([first, shifted], axis=axis).rechunk(x.chunks)
        return da.flip(y, axis) if attrs["reverse"] else y

    kernel.__name__ = name
    return kernel


def _with(shape: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    return (*shape[:axis], size, *shape[axis + 1 :])


cumsum = _scan("cumsum", _cumsum_block, _add, 0, -0.0)
cumprod = _scan("cumprod", _cumprod_block, _multiply, 1, 1.0)
