"""Slicing ops: ``tp.slice`` and ``tp.strided_slice``, and the canonical form of a strided slice's attrs
(``slice_spec``), which Tensor indexing and the gradients share.

Begin, size, end, strides and masks are host values, validated here against
the input's shape and passed to the kernel in a canonical form.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, NamedTuple

from tensorplug import kernel_names as K
from tensorplug._runtime._engine import dispatch
from tensorplug._runtime._errors import ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import int_arg, ints_arg
from tensorplug.ops._convert import as_tensor

__all__ = ["slice", "strided_slice"]


# -- slicing -----------------------------------------------------------------------------------


def slice(x: Any, begin: int | Sequence[int], size: int | Sequence[int] | None = None) -> Tensor:
    """The block of ``x`` starting at ``begin`` with ``size`` (a size of -1, or a missing one, runs to the end).

    As TensorFlow.js, a short ``begin`` is padded with 0 and a short ``size`` with -1.

    >>> import tensorplug as tp
    >>> tp.slice(tp.tensor([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1]).tolist()
    [[2, 3], [5, 6]]
    """
    t = as_tensor(x)
    rank = t.ndim
    starts = ints_arg("slice", "begin", begin)
    sizes = () if size is None else ints_arg("slice", "size", size)
    if len(starts) > rank or len(sizes) > rank:
        raise ShapeError(f"slice: begin {starts} and size {sizes} have more entries than {describe(t)} has axes")
    starts += (0,) * (rank - len(starts))
    sizes += (-1,) * (rank - len(sizes))
    resolved = []
    for i, (b, s, d) in enumerate(zip(starts, sizes, t.shape, strict=True)):
        if not 0 <= b <= d:
            raise ShapeError(f"slice: begin {b} is out of range for axis {i} of {describe(t)}")
        if s == -1:
            s = d - b
        if not 0 <= s <= d - b:
            raise ShapeError(f"slice: begin {b} with size {s} overflows axis {i} of {describe(t)}")
        resolved.append(s)
    return dispatch(K.SLICE, {"x": t}, {"begin": starts, "size": tuple(resolved)})


class SliceSpec(NamedTuple):
    """A strided slice resolved against a shape: canonical kernel attrs and the selection per axis of x."""

    attrs: dict[str, Any]
    starts: tuple[int, ...]  # first index taken, per axis of x
    counts: tuple[int, ...]  # number of indices taken (1 on shrunk axes)
    steps: tuple[int, ...]
    shape: tuple[int, ...]  # the result's shape


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def canonical_slice_attrs(
    entries: Sequence[tuple[int, int, int]], end_bits: int, new_bits: int, shrink_bits: int
) -> dict[str, Any]:
    """StridedSlice attrs in the canonical form kernels get: explicit (begin, end, stride) per entry, no begin or
    ellipsis mask; ``end_bits`` marks entries running to the end (a negative stride past index 0)."""
    return {
        "begin": tuple(e[0] for e in entries),
        "end": tuple(e[1] for e in entries),
        "strides": tuple(e[2] for e in entries),
        "begin_mask": 0,
        "end_mask": end_bits,
        "ellipsis_mask": 0,
        "new_axis_mask": new_bits,
        "shrink_axis_mask": shrink_bits,
    }


def slice_spec(op: str, shape: tuple[int, ...], attrs: dict[str, Any]) -> SliceSpec:
    """Resolve TensorFlow's strided-slice spec (begin, end, strides and the five masks) against ``shape``.

    A port of TensorFlow's ``ValidateStridedSliceOp``. The canonical attrs
    have one entry per axis of the result before shrinking (new axes
    included), non-negative begin/end clamped into range, no ellipsis and no
    begin mask; an end-mask bit only marks a negative stride running through
    index 0. Resolving canonical attrs again gives them back unchanged.
    """
    n = len(attrs["begin"])
    if len(attrs["end"]) != n or len(attrs["strides"]) != n:
        listed = ", ".join(f"{name} {tuple(attrs[name])}" for name in ("begin", "end", "strides"))
        raise ShapeError(f"{op}: {listed} must have the same length")
    masks = [int_arg(op, name, attrs[name]) for name in _MASKS]
    for name, mask in zip(_MASKS, masks, strict=True):
        if mask < 0 or mask >> n:
            raise ShapeError(f"{op}: {name}={mask} has bits beyond the {n} entries of begin/end/strides")
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    if ellipsis_mask & (ellipsis_mask - 1):
        raise ShapeError(f"{op}: ellipsis_mask={ellipsis_mask} sets more than one ellipsis")
    total = n
    if not ellipsis_mask:  # an implicit ellipsis after the last entry covers the axes left over
        ellipsis_mask = 1 << n
        total += 1
    ellipsis_at = ellipsis_mask.bit_length() - 1
    new_after_ellipsis = builtins.sum(1 for i in builtins.range(ellipsis_at + 1, n) if new_axis_mask >> i & 1)
    ndim = len(shape)
    # The dense spec: per entry, an axis of x with (begin, end, stride, begin masked, end masked, shrink),
    # or None for a new axis.
    dense: list[tuple[int, int, int, int, bool, bool, bool] | None] = []
    axis = 0
    for i in builtins.range(total):
        if i == ellipsis_at:
            stop = min(ndim - (total - i) + 1 + new_after_ellipsis, ndim)
            while axis < stop:
                dense.append((axis, 0, 0, 1, True, True, False))
                axis += 1
        elif new_axis_mask >> i & 1:
            dense.append(None)
        else:
            if axis >= ndim:
                raise ShapeError(f"{op}: the slice spec indexes more axes than the {ndim} of the input {shape}")
            b, e, s = (int_arg(op, name, attrs[name][i]) for name in ("begin", "end", "strides"))
            bit = 1 << i
            dense.append((axis, b, e, s, bool(begin_mask & bit), bool(end_mask & bit), bool(shrink_mask & bit)))
            axis += 1
    entries: list[tuple[int, int, int]] = []  # canonical (begin, end, stride) per dense position
    selected: list[tuple[int, int, int]] = []  # (first index, count, step) per axis of x
    out_shape: list[int] = []
    end_bits = new_bits = shrink_bits = 0
    for position, entry in enumerate(dense):
        if entry is None:
            new_bits |= 1 << position
            entries.append((0, 1, 1))
            out_shape.append(1)
            continue
        axis, b, e, s, masked_begin, masked_end, shrink = entry
        first, count, step, last = _resolve(op, shape, axis, b, e, s, masked_begin, masked_end, shrink)
        if shrink:
            shrink_bits |= 1 << position
        else:
            out_shape.append(count)
        if last < 0:  # a negative stride running through index 0
            end_bits |= 1 << position
            last = 0
        entries.append((first, last, step))
        selected.append((first, count, step))
    canonical = canonical_slice_attrs(entries, end_bits, new_bits, shrink_bits)
    starts, counts, steps = (tuple(column) for column in zip(*selected, strict=True)) if selected else ((), (), ())
    return SliceSpec(canonical, starts, counts, steps, tuple(out_shape))


def _resolve(
    op: str,
    shape: tuple[int, ...],
    axis: int,
    b: int,
    e: int,
    s: int,
    masked_begin: bool,
    masked_end: bool,
    shrink: bool,
) -> tuple[int, int, int, int]:
    """One axis of a strided slice as (first index, count, step, end): clamped as TensorFlow does."""
    d = shape[axis]
    if s == 0:
        raise ShapeError(f"{op}: the stride for axis {axis} is 0; strides must be non-zero")
    if shrink:
        if s < 0:
            raise ShapeError(
                f"{op}: axis {axis} of the input {shape} is indexed by a single position, which needs a positive stride"
            )
        index = b + d if b < 0 else b
        if not 0 <= index < d:
            raise ShapeError(f"{op}: index {b} is out of range for axis {axis} of size {d} of the input {shape}")
        return index, 1, 1, index + 1
    low, high = (0, d) if s > 0 else (-1, d - 1)
    first = (low if s > 0 else high) if masked_begin else min(max(b + d if b < 0 else b, low), high)
    last = (high if s > 0 else low) if masked_end else min(max(e + d if e < 0 else e, low), high)
    span = last - first
    count = 0 if span == 0 or (span < 0) != (s < 0) else -(-span // s)
    if count == 0:
        return 0, 0, 1, 0
    return first, count, s, last


def strided_slice(
    x: Any,
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int] | None = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
) -> Tensor:
    """``x[begin:end:strides]`` per axis, with TensorFlow.js's masks (bit i refers to entry i of begin/end/strides).

    ``begin_mask``/``end_mask`` ignore begin/end (run from the start / to the
    end), ``ellipsis_mask`` marks the entry standing for all the axes not
    otherwise named, ``new_axis_mask`` inserts an axis of size 1, and
    ``shrink_axis_mask`` takes the single index ``begin[i]`` and drops the axis.
    Negative begin/end count from the end; out-of-range ones are clamped.

    >>> import tensorplug as tp
    >>> x = tp.tensor([[1, 2, 3], [4, 5, 6]])
    >>> tp.strided_slice(x, [0, 2], [2, 0], [1, -1]).tolist()  # x[0:2, 2:0:-1]
    [[3, 2], [6, 5]]
    >>> tp.strided_slice(x, [-1], [0], shrink_axis_mask=1).tolist()  # x[-1]
    [4, 5, 6]
    """
    t = as_tensor(x)
    starts = ints_arg("strided_slice", "begin", begin)
    attrs = {
        "begin": starts,
        "end": ints_arg("strided_slice", "end", end),
        "strides": (1,) * len(starts) if strides is None else ints_arg("strided_slice", "strides", strides),
        "begin_mask": begin_mask,
        "end_mask": end_mask,
        "ellipsis_mask": ellipsis_mask,
        "new_axis_mask": new_axis_mask,
        "shrink_axis_mask": shrink_axis_mask,
    }
    spec = slice_spec("strided_slice", t.shape, attrs)
    return dispatch(K.STRIDED_SLICE, {"x": t}, spec.attrs)
