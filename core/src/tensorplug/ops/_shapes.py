"""Shape arguments: broadcasting, axes and shapes, normalised and checked (with their caches)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorplug._runtime._errors import DTypeError, ShapeError
from tensorplug._runtime._tensor import Tensor

_BROADCASTS: dict[tuple[Sequence[int], ...], tuple[int, ...]] = {}  # shapes -> their broadcast (successes only)
_CACHE_MAX = 4096


def broadcast_shapes(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of ``shapes`` (NumPy rules), or a ShapeError naming the op and the shapes."""
    cached = _BROADCASTS.get(shapes)
    if cached is not None:
        return cached
    result = _broadcast(op, shapes)
    if len(_BROADCASTS) >= _CACHE_MAX:
        _BROADCASTS.clear()
    _BROADCASTS[shapes] = result
    return result


def broadcasts(*shapes: Sequence[int]) -> bool:
    """Whether ``shapes`` are known to broadcast: ``broadcast_shapes`` succeeded for them (and is still caching
    it). A fast path's check; False says to take the checked path, which makes it known."""
    return shapes in _BROADCASTS


def _broadcast(op: str, shapes: tuple[Sequence[int], ...]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    result = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            d = s[i] if -i <= len(s) else 1
            if d != 1:
                if size != 1 and d != size:
                    listed = " and ".join(str(tuple(s)) for s in shapes)
                    raise ShapeError(f"{op}: shapes {listed} cannot be broadcast together")
                size = d
        result.append(size)
    return tuple(result)


_AXES: dict[tuple[Any, int], tuple[int, ...]] = {}  # (axis, ndim) -> normalized axes (successes only)


def normalize_axes(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int, or a sequence of ints) as a sorted tuple of non-negative axes."""
    plain = axis is None or type(axis) is int or (type(axis) is tuple and all(type(a) is int for a in axis))
    key = (axis, ndim) if plain else None  # only plain ints are keys: anything else may not even be hashable
    if key is not None:
        cached = _AXES.get(key)
        if cached is not None:
            return cached
    result = _normalize_axes(op, axis, ndim)
    if key is not None:
        if len(_AXES) >= _CACHE_MAX:
            _AXES.clear()
        _AXES[key] = result
    return result


def _normalize_axes(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    try:
        given = [axis] if isinstance(axis, int | np.integer) else list(axis)
        if isinstance(axis, str) or any(isinstance(a, bool | np.bool_) for a in given):
            raise TypeError(axis)
        axes = [operator.index(a) for a in given]
    except TypeError:
        raise DTypeError(f"{op}: axis must be an int, a sequence of ints, or None; got {axis!r}") from None
    result = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        result.append(a % ndim if ndim else 0)
    if len(set(result)) != len(result):
        raise ShapeError(f"{op}: axis {axis!r} repeats an axis")
    return tuple(sorted(result))


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    try:
        if isinstance(axis, bool | np.bool_):
            raise TypeError(axis)
        a = operator.index(axis)
    except TypeError:
        raise DTypeError(f"{op}: axis must be an int, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise ShapeError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
    return a % ndim


_MAX_ELEMENTS = 2**60  # elements of 8 bytes past this overflow a 64-bit byte count (numpy refuses, torch views)


def normalize_shape(op: str, shape: Any) -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple of non-negative ints."""
    if type(shape) is tuple:  # a shape taken from a tensor (what gradients pass): plain ints, checked in one loop
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            if math.prod(shape) < _MAX_ELEMENTS:
                return shape
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    try:
        dims = [shape] if isinstance(shape, int | np.integer) else list(shape)
        if isinstance(shape, str) or any(isinstance(d, bool | np.bool_) for d in dims):
            raise TypeError(shape)
        result = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise DTypeError(f"{op}: shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in result):
        raise ShapeError(f"{op}: shape {result} has a negative dimension")
    if math.prod(result) >= _MAX_ELEMENTS:
        raise ShapeError(f"{op}: shape {result} has more elements than any backend can address (2**60)")
    return result
