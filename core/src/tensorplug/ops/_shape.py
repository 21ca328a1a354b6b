"""Shape and creation ops: reshape, transpose, broadcast_to, fill and its helpers."""

from __future__ import annotations

import math
from typing import Any

from tensorplug import _dtypes
from tensorplug import kernel_names as K
from tensorplug._engine import dispatch
from tensorplug._errors import ShapeError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops._convert import as_tensor, broadcast_shapes, normalize_shape

__all__ = [
    "reshape",
    "transpose",
    "broadcast_to",
    "sum_to_shape",
    "fill",
    "full",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "expand_dims",
]


def reshape(x: Any, shape: Any) -> Tensor:
    """``x`` with a new shape of the same size; one dimension may be -1 (inferred)."""
    t = as_tensor(x)
    if shape == t._data.shape:
        return t
    dims = [shape] if isinstance(shape, int) else list(shape)
    if dims.count(-1) > 1:
        raise ShapeError(f"reshape: at most one dimension may be -1, got {tuple(dims)} for {describe(t)}")
    size = t.size
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot reshape {describe(t)} ({size} elements) to {tuple(dims)}")
        dims[dims.index(-1)] = size // known
    target = normalize_shape("reshape", dims)
    if math.prod(target) != size:
        raise ShapeError(f"reshape: cannot reshape {describe(t)} ({size} elements) to {target}")
    if target == t.shape:
        return t
    return dispatch(K.RESHAPE, {"x": t}, {"shape": target})


def transpose(x: Any, perm: Any = None) -> Tensor:
    """Permute the axes of ``x`` (reverse them when ``perm`` is None)."""
    t = as_tensor(x)
    ndim = t.ndim
    axes = tuple(reversed(range(ndim))) if perm is None else tuple(int(p) for p in perm)
    if sorted(p % ndim if ndim else p for p in axes) != list(range(ndim)) or any(not -ndim <= p < ndim for p in axes):
        raise ShapeError(f"transpose: perm {perm!r} is not a permutation of the {ndim} axes of {describe(t)}")
    axes = tuple(p % ndim for p in axes)
    if axes == tuple(range(ndim)):
        return t
    return dispatch(K.TRANSPOSE, {"x": t}, {"perm": axes})


def broadcast_to(x: Any, shape: Any) -> Tensor:
    """``x`` broadcast to ``shape`` (NumPy rules)."""
    t = as_tensor(x)
    if shape == t._data.shape:
        return t
    target = normalize_shape("broadcast_to", shape)
    if len(target) < t.ndim or broadcast_shapes("broadcast_to", t.shape, target) != target:
        raise ShapeError(f"broadcast_to: cannot broadcast {describe(t)} to shape {target}")
    if target == t.shape:
        return t
    return dispatch(K.BROADCAST_TO, {"x": t}, {"shape": target})


def sum_to_shape(dy: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``dy`` over the axes that broadcasting added or stretched, giving ``shape`` back.

    Used by the gradients of broadcasting kernels.
    """
    if dy.shape == shape:
        return dy
    from tensorplug.ops._reduction import sum as sum_

    lead = dy.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and dy.shape[lead + i] != 1)
    reduced = sum_(dy, axes) if axes else dy
    return reshape(reduced, shape)


def fill(shape: Any, value: bool | int | float, dtype: Any = None) -> Tensor:
    """A tensor of ``shape`` with every element ``value``; the dtype is inferred from ``value`` by default."""
    dims = normalize_shape("fill", shape)
    if dtype is None:
        dtype = _dtypes.bool_ if isinstance(value, bool) else _dtypes.weak_scalar_dtype(value, _dtypes.bool_)
        if isinstance(value, float):
            dtype = _dtypes.DEFAULT_FLOAT
    checked = _dtypes.check_dtype(dtype, "fill()")
    return dispatch(K.FILL, {}, {"shape": dims, "value": value, "dtype": checked})


def full(shape: Any, value: bool | int | float, dtype: Any = None) -> Tensor:
    """Same as :func:`fill`, with NumPy's name."""
    return fill(shape, value, dtype)


def zeros(shape: Any, dtype: Any = _dtypes.DEFAULT_FLOAT) -> Tensor:
    """A tensor of zeros (float32 by default)."""
    return fill(shape, 0, dtype)


def ones(shape: Any, dtype: Any = _dtypes.DEFAULT_FLOAT) -> Tensor:
    """A tensor of ones (float32 by default)."""
    return fill(shape, 1, dtype)


def zeros_like(x: Tensor) -> Tensor:
    """Zeros with the shape and dtype of ``x``."""
    return fill(x.shape, 0, x.dtype)


def ones_like(x: Tensor) -> Tensor:
    """Ones with the shape and dtype of ``x``."""
    return fill(x.shape, 1, x.dtype)


def expand_dims(x: Any, axis: int = 0) -> Tensor:
    """Insert a dimension of size 1 at ``axis``."""
    x = as_tensor(x)
    ndim = x.ndim + 1
    if not -ndim <= axis < ndim:
        raise ShapeError(f"expand_dims: axis {axis} is out of range for {describe(x)}")
    shape = list(x.shape)
    shape.insert(axis % ndim, 1)
    return reshape(x, shape)
