"""Reductions and scans (kernel input ``x``).

Reductions take ``axis`` (an int, a sequence of ints, or None for all axes)
and hand the kernel a sorted tuple of non-negative axes and ``keep_dims``;
``argmax``/``argmin`` and the scans take one int axis, as in TensorFlow.js.
Sums and products of bool tensors count in int32; integer tensors keep
their dtype (overflow wraps, as in TensorFlow.js).
"""

from __future__ import annotations

import builtins
from typing import Any

from tensorplug import kernel_names as K
from tensorplug._runtime._engine import dispatch, engine, run_entry
from tensorplug._runtime._errors import DTypeError, ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import to_float
from tensorplug.ops._checked import Site, UnaryChecks, entry_of
from tensorplug.ops._convert import as_tensor, cast
from tensorplug.ops._shapes import normalize_axes, normalize_axis

__all__ = ["sum", "prod", "mean", "max", "min", "all", "any", "argmax", "argmin", "cumsum", "cumprod"]


def _reduce(site: Site, x: Any, checks: UnaryChecks, axis: Any, keepdims: bool, nonempty: bool = False) -> Tensor:
    """Run ``site``'s reduction on ``x`` as ``checks`` makes it (no checks once they passed for x's dtype)."""
    entry = entry_of(site, x)
    t = x if entry is not None else checks(site.op, x)
    axes = normalize_axes(site.op, axis, t.ndim)
    if nonempty and builtins.any(t.shape[a] == 0 for a in axes):
        raise ShapeError(
            f"{site.op}: cannot reduce {describe(t)} over an axis of size 0 (axis={axis!r}): "
            f"{site.op} of no elements is undefined"
        )
    attrs = {"axis": axes, "keep_dims": bool(keepdims)}
    if entry is not None:
        return run_entry(entry, {"x": t}, {"x": t._data}, attrs)
    table = engine.table
    out = dispatch(site.kernel, {"x": t}, attrs)
    if t is x:  # a tensor taken as it was, whose dtype passed the checks
        site.learn(t.dtype, table, out)
    return out


def _counted(op: str, x: Any) -> Tensor:
    """Bool tensors as int32, so that sums and products count."""
    t = as_tensor(x)
    return cast(t, "int32") if t.dtype == "bool" else t


def _floating(op: str, x: Any) -> Tensor:
    return to_float(as_tensor(x))


def _numeric(op: str, x: Any) -> Tensor:
    t = as_tensor(x)
    if t.dtype == "bool":
        raise DTypeError(f"{op}: expects a numeric tensor, got {describe(t)}; cast it with tp.cast(x, 'int32')")
    return t


def _boolean(op: str, x: Any) -> Tensor:
    t = as_tensor(x)
    if t.dtype != "bool":
        raise DTypeError(
            f"{op}: expects a bool tensor, got {describe(t)}; compare first, e.g. tp.not_equal(x, 0), "
            "or cast it with tp.cast(x, 'bool')"
        )
    return t


# The checked calls of the reductions (see ops._checked)
_SUM = Site("sum", K.SUM)
_PROD = Site("prod", K.PROD)
_MEAN = Site("mean", K.MEAN)
_MAX = Site("max", K.MAX)
_MIN = Site("min", K.MIN)
_ALL = Site("all", K.ALL, out="bool")
_ANY = Site("any", K.ANY, out="bool")


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Sum over ``axis`` (all axes when None); 0 over no elements. Bool tensors are summed as int32.

    >>> import tensorplug as tp
    >>> tp.sum(tp.tensor([[1, 2], [3, 4]]), axis=0).tolist()
    [4, 6]
    """
    return _reduce(_SUM, x, _counted, axis, keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Product over ``axis`` (all axes when None); 1 over no elements. Bool tensors multiply as int32.

    >>> import tensorplug as tp
    >>> tp.prod(tp.tensor([[1, 2], [3, 4]]), axis=1).tolist()
    [2, 12]
    """
    return _reduce(_PROD, x, _counted, axis, keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean over ``axis`` (all axes when None); integer inputs give float32. NaN over zero elements."""
    return _reduce(_MEAN, x, _floating, axis, keepdims)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis`` (all axes when None); NaN propagates. An axis of size 0 is an error."""
    return _reduce(_MAX, x, _numeric, axis, keepdims, nonempty=True)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis`` (all axes when None); NaN propagates. An axis of size 0 is an error."""
    return _reduce(_MIN, x, _numeric, axis, keepdims, nonempty=True)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Logical and over ``axis`` of a bool tensor (all axes when None); True over no elements."""
    return _reduce(_ALL, x, _boolean, axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Logical or over ``axis`` of a bool tensor (all axes when None); False over no elements."""
    return _reduce(_ANY, x, _boolean, axis, keepdims)


def _arg(op: str, kernel: str, x: Any, axis: int) -> Tensor:
    t = _numeric(op, x)
    if t.ndim == 0:
        raise ShapeError(f"{op}: expects a tensor of rank 1 or more, got {describe(t)}")
    a = normalize_axis(op, axis, t.ndim)
    if t.shape[a] == 0:
        raise ShapeError(f"{op}: cannot search {describe(t)} along axis {axis} of size 0: there is no index to return")
    return dispatch(kernel, {"x": t}, {"axis": a})


def argmax(x: Any, axis: int = 0) -> Tensor:
    """Index (int32) of the largest value along ``axis``: the first of ties, or the first NaN.

    >>> import tensorplug as tp
    >>> tp.argmax(tp.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1).tolist()
    [1, 0]
    """
    return _arg("argmax", K.ARG_MAX, x, axis)


def argmin(x: Any, axis: int = 0) -> Tensor:
    """Index (int32) of the smallest value along ``axis``: the first of ties, or the first NaN."""
    return _arg("argmin", K.ARG_MIN, x, axis)


def _scan(op: str, kernel: str, x: Any, axis: int, exclusive: bool, reverse: bool) -> Tensor:
    t = _counted(op, x)
    if t.ndim == 0:
        raise ShapeError(f"{op}: expects a tensor of rank 1 or more, got {describe(t)}")
    a = normalize_axis(op, axis, t.ndim)
    return dispatch(kernel, {"x": t}, {"axis": a, "exclusive": bool(exclusive), "reverse": bool(reverse)})


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False) -> Tensor:
    """Cumulative sum along ``axis``, as TensorFlow.js's ``cumsum``; bool tensors count as int32.

    ``exclusive`` leaves each element out of its own sum (the first is 0);
    ``reverse`` sums from the end.

    >>> import tensorplug as tp
    >>> tp.cumsum(tp.tensor([1, 2, 3])).tolist()
    [1, 3, 6]
    >>> tp.cumsum(tp.tensor([1, 2, 3]), exclusive=True, reverse=True).tolist()
    [5, 3, 0]
    """
    return _scan("cumsum", K.CUMSUM, x, axis, exclusive, reverse)


def cumprod(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False) -> Tensor:
    """Cumulative product along ``axis``, as TensorFlow.js's ``cumprod``; bool tensors multiply as int32.

    ``exclusive`` leaves each element out of its own product (the first is
    1); ``reverse`` multiplies from the end.

    >>> import tensorplug as tp
    >>> tp.cumprod(tp.tensor([1, 2, 3])).tolist()
    [1, 2, 6]
    >>> tp.cumprod(tp.tensor([1, 2, 3]), exclusive=True).tolist()
    [1, 1, 2]
    """
    return _scan("cumprod", K.CUMPROD, x, axis, exclusive, reverse)
