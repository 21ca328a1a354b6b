"""Reductions (kernel input ``x``; attrs ``axis``: a sorted tuple of axes, ``keep_dims``)."""

from __future__ import annotations

import builtins
from typing import Any

from tensorplug import kernel_names as K
from tensorplug._engine import dispatch
from tensorplug._errors import DTypeError, ShapeError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops._convert import as_tensor, cast, normalize_axes, to_float

__all__ = ["sum", "mean", "max"]


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Sum over ``axis`` (all axes when None). Bool tensors are summed as int32."""
    x = as_tensor(x)
    axes = normalize_axes("sum", axis, x.ndim)
    if x.dtype == "bool":
        x = cast(x, "int32")
    return dispatch(K.SUM, {"x": x}, {"axis": axes, "keep_dims": bool(keepdims)})


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean over ``axis`` (all axes when None); integer inputs give float32. NaN over zero elements."""
    x = to_float(as_tensor(x))
    axes = normalize_axes("mean", axis, x.ndim)
    return dispatch(K.MEAN, {"x": x}, {"axis": axes, "keep_dims": bool(keepdims)})


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis`` (all axes when None); NaN propagates."""
    x = as_tensor(x)
    if x.dtype == "bool":
        raise DTypeError(f"max: expects a numeric tensor, got {describe(x)}")
    axes = normalize_axes("max", axis, x.ndim)
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise ShapeError(f"max: cannot reduce over an axis of size 0 ({describe(x)}, axis={axis!r})")
    return dispatch(K.MAX, {"x": x}, {"axis": axes, "keep_dims": bool(keepdims)})
