"""Torch kernels: reductions and scans (input ``x``), as the numpy backend's.

The ops hand over canonical attrs: ``axis`` is a sorted tuple of
non-negative axes for the reductions and one non-negative int for the
arg- and scan kernels. Two torch habits are undone here: an empty ``dim``
means "every axis" to torch but "no axis" to tensorplug, and torch widens
integer sums and products to int64 where tensorplug keeps the input's dtype
(so ``dtype=`` is passed). Arg-kernels return int32; torch's argmax/argmin
already give the first of ties and the first NaN, as NumPy's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from tensorplug_torch._factories import Kernel


def _reduce(fn: Callable[..., Any], keep_dtype: bool = False) -> Kernel:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x, axes = inputs["x"], attrs["axis"]
        if not axes:
            return x  # no axis to reduce (torch would read dim=() as every axis); storage is immutable
        if keep_dtype:
            return fn(x, axes, keepdim=attrs["keep_dims"], dtype=x.dtype)
        return fn(x, axes, keepdim=attrs["keep_dims"])

    kernel.__name__ = fn.__name__
    return kernel


def _prod(x: Any, axes: tuple[int, ...], keepdim: bool, dtype: Any) -> Any:
    """torch.prod over several axes: torch.prod takes one axis or all of them."""
    if len(axes) == x.ndim:
        total = torch.prod(x, dtype=dtype)
        return total.reshape((1,) * x.ndim) if keepdim else total
    for a in reversed(axes):  # from the last, so that the axes still to reduce keep their positions
        x = torch.prod(x, a, keepdim=keepdim, dtype=dtype)
    return x


sum_ = _reduce(torch.sum, keep_dtype=True)
prod = _reduce(_prod, keep_dtype=True)
mean = _reduce(torch.mean)  # the op hands over a float tensor; NaN over zero elements, as numpy's
max_ = _reduce(torch.amax)  # amax/amin propagate NaN (torch.max(x, dim) would also build indices)
min_ = _reduce(torch.amin)
all_ = _reduce(torch.all)
any_ = _reduce(torch.any)


def arg_max(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.argmax(inputs["x"], attrs["axis"]).to(torch.int32)  # the first of ties, or of NaNs


def arg_min(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.argmin(inputs["x"], attrs["axis"]).to(torch.int32)


def _scan(fn: Callable[..., Any], identity: int) -> Kernel:
    """A cumulative kernel with TensorFlow.js's ``exclusive`` (shift in the identity) and ``reverse``."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x, axis = inputs["x"], attrs["axis"]
        if attrs["reverse"]:
            x = torch.flip(x, (axis,))
        y = fn(x, axis, dtype=x.dtype)
        size = y.shape[axis]
        if attrs["exclusive"] and size:
            # drop the last element and put the identity in front: F.pad's widths run from the last axis back
            widths = (0, 0) * (y.ndim - 1 - axis) + (1, 0)
            y = F.pad(y.narrow(axis, 0, size - 1), widths, value=identity)
        return torch.flip(y, (axis,)) if attrs["reverse"] else y

    kernel.__name__ = fn.__name__
    return kernel


cumsum = _scan(torch.cumsum, 0)
cumprod = _scan(torch.cumprod, 1)
