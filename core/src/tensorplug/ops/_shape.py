"""Shape and creation ops: reshape, transpose, broadcast_to, squeeze, fill, range, one_hot, top_k and helpers."""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import dispatch, engine
from tensorplug._runtime._errors import DTypeError, InvalidArgumentError, ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import check_indices, check_numeric, dispatch_several, int_arg, ints_arg, scalar_of
from tensorplug.ops._binary import add, mul
from tensorplug.ops._checked import Site, unary
from tensorplug.ops._convert import as_tensor, cast, check_storable, run_declared
from tensorplug.ops._indexing import concat
from tensorplug.ops._reduction import sum as sum_
from tensorplug.ops._shapes import broadcast_shapes, normalize_axes, normalize_shape

__all__ = [
    "reshape",
    "flatten",
    "transpose",
    "broadcast_to",
    "sum_to_shape",
    "squeeze",
    "expand_dims",
    "fill",
    "full",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "one_hot",
    "range",
    "arange",
    "linspace",
    "top_k",
]


def reshape(x: Any, shape: Any) -> Tensor:
    """``x`` with a new shape of the same size; one dimension may be -1 (inferred)."""
    t = as_tensor(x)
    if type(shape) is tuple and shape == t._data.shape:
        return t
    dims = list(ints_arg("reshape", "shape", shape))
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


def flatten(x: Any, start_axis: int = 1) -> Tensor:
    """``x`` with its axes from ``start_axis`` on merged into one: ``(N, H, W, C)`` becomes ``(N, H*W*C)``.

    A reshape that keeps the sizes of the axes before ``start_axis``: exported with a
    dynamic batch (``tp.export(..., dynamic_axes=...)``), the batch stays dynamic. ``start_axis=0`` makes a 1-D
    tensor.

    >>> import tensorplug as tp
    >>> tp.flatten(tp.zeros((2, 3, 4))).shape, tp.flatten(tp.zeros((2, 3, 4)), start_axis=0).shape
    ((2, 12), (24,))
    """
    t = as_tensor(x)
    start = int_arg("flatten", "start_axis", start_axis)
    rank = t.ndim
    if not -max(rank, 1) <= start < max(rank, 1):
        raise ShapeError(
            f"flatten: start_axis {start} is out of range for {describe(t)}; give an axis from {-max(rank, 1)} to "
            f"{max(rank, 1) - 1}"
        )
    start %= max(rank, 1)
    return reshape(t, (*t.shape[:start], math.prod(t.shape[start:])))


def transpose(x: Any, perm: Any = None) -> Tensor:
    """Permute the axes of ``x`` (reverse them when ``perm`` is None)."""
    t = as_tensor(x)
    ndim = t.ndim
    axes = tuple(reversed(builtins.range(ndim))) if perm is None else ints_arg("transpose", "perm", perm)
    valid = builtins.range(ndim)
    if sorted(p % ndim if ndim else p for p in axes) != list(valid) or any(not -ndim <= p < ndim for p in axes):
        raise ShapeError(f"transpose: perm {perm!r} is not a permutation of the {ndim} axes of {describe(t)}")
    axes = tuple(p % ndim for p in axes)
    if axes == tuple(valid):
        return t
    return dispatch(K.TRANSPOSE, {"x": t}, {"perm": axes})


def broadcast_to(x: Any, shape: Any) -> Tensor:
    """``x`` broadcast to ``shape`` (NumPy rules)."""
    t = as_tensor(x)
    if type(shape) is tuple and shape == t._data.shape:
        return t
    target = normalize_shape("broadcast_to", shape)
    try:
        fits = len(target) >= t.ndim and broadcast_shapes("broadcast_to", t.shape, target) == target
    except ShapeError:
        fits = False
    if not fits:
        raise ShapeError(
            f"broadcast_to: {describe(t)} cannot be broadcast to shape {target}; "
            "each dimension must equal the target's or be 1"
        )
    if target == t.shape:
        return t
    return dispatch(K.BROADCAST_TO, {"x": t}, {"shape": target})


def sum_to_shape(dy: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``dy`` over the axes that broadcasting added or stretched, giving ``shape`` back.

    Used by the gradients of broadcasting kernels.
    """
    dy_shape = tuple(dy._data.shape)
    if dy_shape == shape:
        return dy
    lead = len(dy_shape) - len(shape)
    if lead < 0 or any(d != 1 and d != e for d, e in zip(shape, dy_shape[lead:], strict=True)):
        raise ShapeError(f"sum_to_shape: {describe(dy)} is not a broadcast of shape {tuple(shape)}")
    stretched = tuple(lead + i for i, d in enumerate(shape) if d == 1 and dy_shape[lead + i] != 1)
    if not stretched:  # only leading axes were added (a bias, say): summing them away gives the shape
        return sum_(dy, tuple(builtins.range(lead)))
    return reshape(sum_(dy, tuple(builtins.range(lead)) + stretched), shape)


def squeeze(x: Any, axis: Any = None) -> Tensor:
    """Remove axes of size 1 (all of them when ``axis`` is None; naming an axis of another size is an error).

    >>> import tensorplug as tp
    >>> tp.squeeze(tp.zeros((1, 3, 1))).shape
    (3,)
    """
    t = as_tensor(x)
    if axis is None:
        return reshape(t, tuple(d for d in t.shape if d != 1))
    axes = normalize_axes("squeeze", axis, t.ndim)
    for a in axes:
        if t.shape[a] != 1:
            raise ShapeError(f"squeeze: axis {a} of {describe(t)} has size {t.shape[a]}, not 1; it cannot be removed")
    return reshape(t, tuple(d for i, d in enumerate(t.shape) if i not in axes))


def expand_dims(x: Any, axis: int = 0) -> Tensor:
    """Insert a dimension of size 1 at ``axis``."""
    x = as_tensor(x)
    ndim = x.ndim + 1
    axis = int_arg("expand_dims", "axis", axis)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"expand_dims: axis {axis} is out of range for {describe(x)}")
    shape = list(x.shape)
    shape.insert(axis % ndim, 1)
    return reshape(x, shape)


# -- creation ------------------------------------------------------------------


def fill(shape: Any, value: bool | int | float, dtype: Any = None) -> Tensor:
    """A tensor of ``shape`` with every element ``value``; the dtype is inferred from ``value`` by default."""
    dims = normalize_shape("fill", shape)
    if isinstance(value, np.generic):
        value = value.item()
    if dtype is None:
        if not isinstance(value, bool | int | float):
            raise DTypeError(f"fill: value must be a Python number or bool, got {value!r} ({type(value).__name__})")
        dtype = _dtypes.bool_ if isinstance(value, bool) else _dtypes.weak_scalar_dtype(value, _dtypes.bool_)
        if isinstance(value, float):
            dtype = _dtypes.DEFAULT_FLOAT
    checked = _dtypes.check_dtype(dtype, "fill()")
    value = scalar_of("fill", "value", value, checked)
    check_storable("fill", checked, dims)
    return run_declared(K.FILL, "fill", {}, {"shape": dims, "value": value, "dtype": checked})


def full(shape: Any, value: bool | int | float, dtype: Any = None) -> Tensor:
    """Same as :func:`fill`, with NumPy's name."""
    return fill(shape, value, dtype)


def zeros(shape: Any, dtype: Any = _dtypes.DEFAULT_FLOAT) -> Tensor:
    """A tensor of zeros (float32 by default, ``dtype=None`` included)."""
    return fill(shape, 0, _dtypes.DEFAULT_FLOAT if dtype is None else dtype)


def ones(shape: Any, dtype: Any = _dtypes.DEFAULT_FLOAT) -> Tensor:
    """A tensor of ones (float32 by default, ``dtype=None`` included)."""
    return fill(shape, 1, _dtypes.DEFAULT_FLOAT if dtype is None else dtype)


_ZEROS_LIKE = Site("zeros_like", K.ZEROS_LIKE)  # their checked calls (see ops._checked)
_ONES_LIKE = Site("ones_like", K.ONES_LIKE)


def _any(op: str, x: Any) -> Tensor:
    return as_tensor(x)


def zeros_like(x: Any) -> Tensor:
    """Zeros with the shape and dtype of ``x``."""
    return unary(_ZEROS_LIKE, x, _any)


def ones_like(x: Any) -> Tensor:
    """Ones with the shape and dtype of ``x``."""
    return unary(_ONES_LIKE, x, _any)


def one_hot(indices: Any, depth: int, on_value: Any = 1, off_value: Any = 0, dtype: Any = "int32") -> Tensor:
    """A new last axis of size ``depth``: ``on_value`` at each index, ``off_value`` elsewhere.

    Indices outside ``[0, depth)`` (negative ones included) give a row of ``off_value``.

    >>> import tensorplug as tp
    >>> tp.one_hot([0, 2, -1], 3).tolist()
    [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
    """
    t = as_tensor(indices)
    check_indices("one_hot", "indices", t)
    n = int_arg("one_hot", "depth", depth)
    if n < 0:
        raise ShapeError(f"one_hot: depth must be >= 0, got {n}")
    target = _dtypes.check_dtype(dtype, "one_hot()")
    on = scalar_of("one_hot", "on_value", on_value, target)
    off = scalar_of("one_hot", "off_value", off_value, target)
    check_storable("one_hot", target, (*t.shape, n))
    attrs = {"depth": n, "on_value": on, "off_value": off, "dtype": target}
    return run_declared(K.ONE_HOT, "one_hot", {"indices": t}, attrs)


def range(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tensor:
    """Numbers from ``start`` up to (not including) ``stop`` by ``step``; float32 by default, as TensorFlow.js.

    With one argument it counts from 0: ``range(n)`` is ``range(0, n)``. A step
    pointing away from ``stop`` gives an empty tensor; integer dtypes need whole numbers.

    >>> import tensorplug as tp
    >>> tp.range(5).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0]
    >>> tp.range(6, 0, -2, dtype="int32").tolist()
    [6, 4, 2]
    """
    if stop is None:
        start, stop = 0, start
    target = _dtypes.DEFAULT_FLOAT if dtype is None else _dtypes.check_dtype(dtype, "range()")
    if target == _dtypes.bool_:
        raise DTypeError("range: dtype must be numeric (float32, float64, int32 or int64), got bool")
    values = [scalar_of("range", name, v, target) for name, v in (("start", start), ("stop", stop), ("step", step))]
    if not all(math.isfinite(v) for v in values):
        raise InvalidArgumentError(f"range: start, stop and step must be finite, got {start!r}, {stop!r}, {step!r}")
    if values[2] == 0:
        raise InvalidArgumentError(f"range: step must not be zero, got start={start!r}, stop={stop!r}, step={step!r}")
    count = builtins.max(0, math.ceil((values[1] - values[0]) / values[2]))
    check_storable("range", target, (count,))
    attrs = {"start": values[0], "stop": values[1], "step": values[2], "dtype": target}
    return run_declared(K.RANGE, "range", {}, attrs)


arange = range
"""Same as :func:`range`, with NumPy's name."""


def linspace(start: float, stop: float, num: int) -> Tensor:
    """``num`` evenly spaced float32 values from ``start`` to ``stop``, both included (as TensorFlow.js).

    >>> import tensorplug as tp
    >>> tp.linspace(0.0, 1.0, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    n = int_arg("linspace", "num", num)
    if n < 1:
        raise ShapeError(f"linspace: num must be >= 1, got {n}")
    first = scalar_of("linspace", "start", start, _dtypes.float64)
    last = scalar_of("linspace", "stop", stop, _dtypes.float64)
    if n == 1:
        return fill((1,), first, _dtypes.float32)
    # start + i * step computed in float64 (in float32 on a backend that cannot store float64) and rounded
    # once; the last value is exactly ``stop``.
    step = (last - first) / (n - 1)
    backend = engine.active or engine.ensure_active()
    wide = _dtypes.float32 if _dtypes.float64 in backend.unsupported_dtypes else _dtypes.float64
    head = add(mul(range(0, n - 1, dtype=wide), step), first)
    return concat([cast(head, _dtypes.float32), fill((1,), last, _dtypes.float32)])


def top_k(x: Any, k: int = 1, sorted: bool = True) -> tuple[Tensor, Tensor]:
    """The ``k`` largest values along the last axis and their int32 indices, largest first.

    Ties go to the lower index first; NaN ranks above every number.
    ``sorted=False`` lets a backend return the k values in any order.

    >>> import tensorplug as tp
    >>> values, indices = tp.top_k(tp.tensor([1.0, 3.0, 2.0, 3.0]), k=3)
    >>> values.tolist(), indices.tolist()
    ([3.0, 3.0, 2.0], [1, 3, 2])
    """
    t = as_tensor(x)
    check_numeric("top_k", t)
    if t.ndim == 0:
        raise ShapeError(f"top_k: x must have at least one axis, got {describe(t)}")
    count = int_arg("top_k", "k", k)
    if not 0 <= count <= t.shape[-1]:
        raise ShapeError(f"top_k: k={count} must be between 0 and the size of the last axis of {describe(t)}")
    values, indices = dispatch_several(K.TOP_K, {"x": t}, {"k": count, "sorted": bool(sorted)})
    return values, indices
