"""Indexing ops: joining, splitting, slicing, padding, tiling, reversing, gathering and scattering.

The slicing ops are written in ``_slicing`` (with the canonical strided-slice spec) and listed here.

Every argument that shapes the result (axes, begin/size, masks, paddings,
reps, splits) is a host value, validated here against the tensors' shapes
and passed to the kernel in a canonical form. Index *tensors* stay on the
device: their values are checked by the kernels (out-of-range gather and
scatter indices raise a KernelError), never read back here.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime._engine import dispatch
from tensorplug._runtime._errors import DTypeError, InvalidArgumentError, ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import check_indices, check_numeric, dispatch_several, int_arg, ints_arg, scalar_of
from tensorplug.ops._convert import as_tensor
from tensorplug.ops._promote import promote_all
from tensorplug.ops._shapes import normalize_axes, normalize_axis, normalize_shape
from tensorplug.ops._slicing import slice, strided_slice

__all__ = [
    "concat",
    "stack",
    "unstack",
    "split",
    "slice",
    "strided_slice",
    "pad",
    "mirror_pad",
    "tile",
    "reverse",
    "gather",
    "gather_nd",
    "scatter_nd",
    "unsorted_segment_sum",
]


def _tensor_list(op: str, tensors: Any) -> list[Tensor]:
    """A non-empty sequence of tensor-likes as tensors promoted to one dtype (NumPy's rules)."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence) or isinstance(tensors, str):
        raise DTypeError(f"{op}: expects a list of tensors, got {describe(tensors)}; wrap it in a list")
    if not tensors:
        raise InvalidArgumentError(f"{op}: needs at least one tensor, got an empty list")
    return promote_all(tensors)


def _listed(ts: Sequence[Tensor]) -> str:
    return ", ".join(describe(t) for t in ts)


# -- joining and splitting -----------------------------------------------------------


def concat(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along an existing ``axis``; their other dimensions must match.

    >>> import tensorplug as tp
    >>> tp.concat([tp.tensor([[1, 2]]), tp.tensor([[3, 4]])], axis=1).tolist()
    [[1, 2, 3, 4]]
    """
    ts = _tensor_list("concat", tensors)
    ndim = ts[0].ndim
    if ndim == 0:
        raise ShapeError(f"concat: cannot join 0-d tensors ({_listed(ts)}) along an axis; use tp.stack")
    ax = normalize_axis("concat", axis, ndim)
    for t in ts:
        if t.ndim != ndim or t.shape[:ax] + t.shape[ax + 1 :] != ts[0].shape[:ax] + ts[0].shape[ax + 1 :]:
            raise ShapeError(f"concat: shapes must match except along axis {ax}, got {_listed(ts)}")
    return dispatch(K.CONCAT, {"tensors": ts}, {"axis": ax})


def stack(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of one shape along a new ``axis``.

    >>> import tensorplug as tp
    >>> tp.stack([tp.tensor([1, 2]), tp.tensor([3, 4])], axis=1).tolist()
    [[1, 3], [2, 4]]
    """
    ts = _tensor_list("stack", tensors)
    ax = normalize_axis("stack", axis, ts[0].ndim + 1)
    if any(t.shape != ts[0].shape for t in ts):
        raise ShapeError(f"stack: all tensors must have the same shape, got {_listed(ts)}")
    return dispatch(K.PACK, {"tensors": ts}, {"axis": ax})


def unstack(x: Any, axis: int = 0) -> list[Tensor]:
    """Split ``x`` along ``axis`` into a list of tensors with that axis removed.

    >>> import tensorplug as tp
    >>> [t.tolist() for t in tp.unstack(tp.tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    t = as_tensor(x)
    if t.ndim == 0:
        raise ShapeError(f"unstack: x must have at least one axis, got {describe(t)}")
    ax = normalize_axis("unstack", axis, t.ndim)
    return dispatch_several(K.UNPACK, {"value": t}, {"axis": ax, "num": t.shape[ax]})


_MAX_EMPTY_PARTS = 1 << 16  # an empty axis splits into any number of empty parts; beyond this, it is a mistake


def split(x: Any, num_or_size_splits: int | Sequence[int], axis: int = 0) -> list[Tensor]:
    """Split ``x`` along ``axis`` into that many equal parts, or into parts of the given sizes (one may be -1).

    >>> import tensorplug as tp
    >>> [t.tolist() for t in tp.split(tp.tensor([1, 2, 3, 4, 5]), [2, -1])]
    [[1, 2], [3, 4, 5]]
    """
    t = as_tensor(x)
    if t.ndim == 0:
        raise ShapeError(f"split: x must have at least one axis, got {describe(t)}")
    ax = normalize_axis("split", axis, t.ndim)
    size = t.shape[ax]
    if isinstance(num_or_size_splits, int | np.integer):
        num = int_arg("split", "num_or_size_splits", num_or_size_splits)
        if size == 0 and num > _MAX_EMPTY_PARTS:
            raise ShapeError(
                f"split: {num} parts of the empty axis {ax} of {describe(t)}: at most {_MAX_EMPTY_PARTS} "
                "(each part is an empty tensor)"
            )
        if num < 1 or size % num:
            raise ShapeError(f"split: {num} equal parts do not divide axis {ax} of {describe(t)}; pass sizes instead")
        sizes = (size // num,) * num
    else:
        sizes = ints_arg("split", "num_or_size_splits", num_or_size_splits)
        if not sizes or sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise ShapeError(
                f"split: sizes {num_or_size_splits!r} must be non-empty and non-negative, with at most one -1 "
                f"(inferred), for {describe(t)}"
            )
        known = builtins.sum(s for s in sizes if s != -1)
        if -1 in sizes and known <= size:
            sizes = tuple(size - known if s == -1 else s for s in sizes)
        if builtins.sum(sizes) != size or -1 in sizes:  # a -1 left means the known sizes overflow the axis
            raise ShapeError(f"split: sizes {sizes} do not add up to {size}, the size of axis {ax} of {describe(t)}")
    return dispatch_several(K.SPLIT_V, {"x": t}, {"size_splits": sizes, "axis": ax})


# -- padding, tiling, reversing ---------------------------------------------------------


def _paddings(op: str, t: Tensor, paddings: Any) -> tuple[tuple[int, int], ...]:
    try:
        pairs = [ints_arg(op, "paddings", p) for p in paddings]
    except TypeError:
        raise ShapeError(f"{op}: paddings must be a sequence of (before, after) pairs, got {paddings!r}") from None
    if len(pairs) != t.ndim or any(len(p) != 2 for p in pairs):
        raise ShapeError(f"{op}: paddings {paddings!r} must hold one (before, after) pair per axis of {describe(t)}")
    if any(v < 0 for p in pairs for v in p):
        raise ShapeError(f"{op}: paddings {paddings!r} must be non-negative")
    return tuple((p[0], p[1]) for p in pairs)


def pad(x: Any, paddings: Sequence[Sequence[int]], constant_value: bool | float = 0) -> Tensor:
    """Pad each axis with ``(before, after)`` elements of ``constant_value``.

    >>> import tensorplug as tp
    >>> tp.pad(tp.tensor([1, 2]), [(1, 2)]).tolist()
    [0, 1, 2, 0, 0]
    """
    t = as_tensor(x)
    pairs = _paddings("pad", t, paddings)
    value = scalar_of("pad", "constant_value", constant_value, t.dtype)
    return dispatch(K.PAD_V2, {"x": t}, {"paddings": pairs, "constant_value": value})


def mirror_pad(x: Any, paddings: Sequence[Sequence[int]], mode: str) -> Tensor:
    """Pad each axis with its mirror image: ``"reflect"`` leaves out the edge element, ``"symmetric"`` repeats it.

    >>> import tensorplug as tp
    >>> tp.mirror_pad(tp.tensor([1, 2, 3]), [(2, 1)], "reflect").tolist()
    [3, 2, 1, 2, 3, 2]
    """
    t = as_tensor(x)
    pairs = _paddings("mirror_pad", t, paddings)
    if not isinstance(mode, str) or mode.lower() not in ("reflect", "symmetric"):
        raise InvalidArgumentError(f"mirror_pad: mode must be 'reflect' or 'symmetric', got {mode!r}")
    mode = mode.lower()
    offset = 1 if mode == "reflect" else 0
    for i, ((before, after), d) in enumerate(zip(pairs, t.shape, strict=True)):
        if max(before, after) > d - offset:
            raise ShapeError(
                f"mirror_pad: padding ({before}, {after}) of axis {i} of {describe(t)} is larger than {d - offset}, "
                f"the most that {mode!r} mode can mirror"
            )
    return dispatch(K.MIRROR_PAD, {"x": t}, {"paddings": pairs, "mode": mode})


def tile(x: Any, reps: int | Sequence[int]) -> Tensor:
    """Repeat ``x`` ``reps[i]`` times along each axis i (one entry per axis).

    >>> import tensorplug as tp
    >>> tp.tile(tp.tensor([[1, 2]]), [2, 2]).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    t = as_tensor(x)
    counts = ints_arg("tile", "reps", reps)
    if len(counts) != t.ndim:
        raise ShapeError(f"tile: reps {counts} must have one entry per axis of {describe(t)}")
    if any(r < 0 for r in counts):
        raise ShapeError(f"tile: reps {counts} must be non-negative")
    return dispatch(K.TILE, {"x": t}, {"reps": counts})


def reverse(x: Any, axis: Any = None) -> Tensor:
    """``x`` with the order of the elements reversed along ``axis`` (an int, a sequence, or None for all axes).

    >>> import tensorplug as tp
    >>> tp.reverse(tp.tensor([[1, 2], [3, 4]]), 1).tolist()
    [[2, 1], [4, 3]]
    """
    t = as_tensor(x)
    return dispatch(K.REVERSE, {"x": t}, {"dims": normalize_axes("reverse", axis, t.ndim)})


# -- gathering and scattering ----------------------------------------------------------


def gather(x: Any, indices: Any, axis: int = 0, batch_dims: int = 0) -> Tensor:
    """Take the slices of ``x`` at ``indices`` along ``axis``, as TensorFlow.js's ``gather``.

    The result has shape ``x.shape[:axis] + indices.shape[batch_dims:] + x.shape[axis + 1:]``;
    the first ``batch_dims`` axes of ``x`` and ``indices`` are batch axes, gathered
    pairwise. Indices must lie in ``[0, x.shape[axis])``: the kernel raises otherwise.

    >>> import tensorplug as tp
    >>> tp.gather(tp.tensor([[1, 2], [3, 4], [5, 6]]), [2, 0]).tolist()
    [[5, 6], [1, 2]]
    """
    t = as_tensor(x)
    idx = as_tensor(indices)
    check_indices("gather", "indices", idx)
    b = int_arg("gather", "batch_dims", batch_dims)
    if b < 0:
        b += idx.ndim
    if not 0 <= b <= idx.ndim:
        raise ShapeError(f"gather: batch_dims={batch_dims} is out of range for indices {describe(idx)}")
    if t.ndim == 0:
        raise ShapeError(f"gather: x must have at least one axis, got {describe(t)}")
    ax = normalize_axis("gather", axis, t.ndim)
    if b > ax:
        raise ShapeError(
            f"gather: batch_dims={batch_dims} (axis {b} of indices) must not be larger than axis={axis} "
            f"(axis {ax} of x), for x {describe(t)} and indices {describe(idx)}"
        )
    if t.shape[:b] != idx.shape[:b]:
        raise ShapeError(
            f"gather: the first {b} (batch) axes of x and indices must match, got {describe(t)} and {describe(idx)}"
        )
    return dispatch(K.GATHER_V2, {"x": t, "indices": idx}, {"axis": ax, "batch_dims": b})


def gather_nd(params: Any, indices: Any) -> Tensor:
    """Take the slices of ``params`` at the index tuples in the last axis of ``indices``.

    The result has shape ``indices.shape[:-1] + params.shape[indices.shape[-1]:]``.

    >>> import tensorplug as tp
    >>> tp.gather_nd(tp.tensor([[1, 2], [3, 4]]), [[1, 0], [0, 1]]).tolist()
    [3, 2]
    """
    p = as_tensor(params)
    idx = as_tensor(indices)
    check_indices("gather_nd", "indices", idx)
    if idx.ndim == 0 or idx.shape[-1] > p.ndim:
        raise ShapeError(
            f"gather_nd: indices {describe(idx)} need at least one axis, whose last size (the index depth) "
            f"is at most the rank of params {describe(p)}"
        )
    return dispatch(K.GATHER_ND, {"params": p, "indices": idx})


def scatter_nd(indices: Any, updates: Any, shape: Any) -> Tensor:
    """A zero tensor of ``shape`` with ``updates`` added at the index tuples in ``indices`` (duplicates add up).

    >>> import tensorplug as tp
    >>> tp.scatter_nd([[1], [3], [1]], tp.tensor([1.0, 2.0, 3.0]), [4]).tolist()
    [0.0, 4.0, 0.0, 2.0]
    """
    idx = as_tensor(indices)
    u = as_tensor(updates)
    check_indices("scatter_nd", "indices", idx)
    check_numeric("scatter_nd", u)
    dims = normalize_shape("scatter_nd", shape)
    if idx.ndim == 0 or idx.shape[-1] > len(dims):
        raise ShapeError(
            f"scatter_nd: indices {describe(idx)} need at least one axis, whose last size (the index depth) "
            f"is at most the rank of shape {dims}"
        )
    expected = idx.shape[:-1] + dims[idx.shape[-1] :]
    if u.shape != expected:
        raise ShapeError(f"scatter_nd: updates {describe(u)} must have shape {expected} for indices {describe(idx)}")
    return dispatch(K.SCATTER_ND, {"indices": idx, "updates": u}, {"shape": dims})


def unsorted_segment_sum(x: Any, segment_ids: Any, num_segments: int) -> Tensor:
    """Sum the slices of ``x`` that share a segment id; ids outside ``[0, num_segments)`` are dropped.

    ``segment_ids`` has the shape of the leading axes of ``x``; the result has
    shape ``(num_segments,) + x.shape[segment_ids.ndim:]``.

    >>> import tensorplug as tp
    >>> tp.unsorted_segment_sum(tp.tensor([1, 2, 3, 4]), [0, 2, 0, 1], 3).tolist()
    [4, 4, 2]
    """
    t = as_tensor(x)
    ids = as_tensor(segment_ids)
    check_numeric("unsorted_segment_sum", t)
    check_indices("unsorted_segment_sum", "segment_ids", ids)
    n = int_arg("unsorted_segment_sum", "num_segments", num_segments)
    if n < 0:
        raise ShapeError(f"unsorted_segment_sum: num_segments must be >= 0, got {n}")
    if t.shape[: ids.ndim] != ids.shape:
        raise ShapeError(
            f"unsorted_segment_sum: segment_ids {describe(ids)} must have the shape of leading axes of {describe(t)}"
        )
    return dispatch(K.UNSORTED_SEGMENT_SUM, {"x": t, "segment_ids": ids}, {"num_segments": n})
