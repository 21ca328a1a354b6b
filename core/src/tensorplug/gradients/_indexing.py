"""Gradients of the indexing kernels (joining, splitting, slicing, padding, tiling, gathering, scattering).

Each is written with the indexing ops themselves (the gradient of a slice
is a pad, of a pad a slice, of a gather a segment sum, of a scatter a
gather), so every gradient is differentiable again.
"""

from __future__ import annotations

import math
from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import (
    add,
    concat,
    gather,
    gather_nd,
    less,
    mul,
    pad,
    reshape,
    reverse,
    scatter_nd,
    split,
    stack,
    sum,
    transpose,
    unsorted_segment_sum,
    unstack,
    where,
    zeros,
    zeros_like,
)
from tensorplug.ops import range as range_
from tensorplug.ops import slice as slice_
from tensorplug.ops._slicing import slice_spec

_INT32_MAX = 2**31 - 1

# -- joining and splitting -----------------------------------------------------------------


def grad_concat(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any]:
    (tensors,) = saved
    axis = attrs["axis"]
    return (lambda: split(dy, [t.shape[axis] for t in tensors], axis),)


# -- slicing and padding --------------------------------------------------------------------


def _take(t: Tensor, axis: int, begin: int, size: int) -> Tensor:
    """``size`` elements of ``t`` from ``begin`` along one axis."""
    starts = [0] * t.ndim
    sizes = [-1] * t.ndim
    starts[axis], sizes[axis] = begin, size
    return slice_(t, starts, sizes)


def _pad_axis(t: Tensor, axis: int, before: int, after: int) -> Tensor:
    """``t`` with zeros added before and after along one axis."""
    pairs = [(0, 0)] * t.ndim
    pairs[axis] = (before, after)
    return pad(t, pairs)


def grad_slice(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    (x,) = saved
    pairs = [(b, d - b - s) for b, s, d in zip(attrs["begin"], attrs["size"], x.shape, strict=True)]
    return (pad(dy, pairs),)


def grad_strided_slice(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """Put dy back where the slice took it from: undo shrink/new axes, flip negative steps, spread, pad."""
    (x,) = saved
    spec = slice_spec("StridedSlice gradient", x.shape, attrs)
    if 0 in spec.counts:
        return (zeros_like(x),)
    g = reshape(dy, spec.counts)
    flipped = tuple(i for i, s in enumerate(spec.steps) if s < 0)
    if flipped:
        g = reverse(g, flipped)
    steps = [abs(s) for s in spec.steps]
    starts = [b + (n - 1) * s if s < 0 else b for b, n, s in zip(spec.starts, spec.counts, spec.steps, strict=True)]
    spans = [(n - 1) * s + 1 for n, s in zip(spec.counts, steps, strict=True)]
    if any(s > 1 for s in steps):
        # Along each axis element i moves to i * step: insert an axis, pad it to the step, merge, cut the tail.
        interleaved = [d for n in spec.counts for d in (n, 1)]
        widths = [w for s in steps for w in ((0, 0), (0, s - 1))]
        g = pad(reshape(g, interleaved), widths)
        g = reshape(g, [n * s for n, s in zip(spec.counts, steps, strict=True)])
        g = slice_(g, [0] * len(spans), spans)
    pairs = [(b, d - b - span) for b, span, d in zip(starts, spans, x.shape, strict=True)]
    return (pad(g, pairs),)


def grad_pad_v2(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor, ...]:
    paddings = attrs["paddings"]
    sizes = [d - before - after for (before, after), d in zip(paddings, dy.shape, strict=True)]
    return (slice_(dy, [before for before, _ in paddings], sizes),)


def grad_mirror_pad(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """Axis by axis: the centre, plus each mirrored border flipped back onto the elements it copies."""
    offset = 1 if attrs["mode"] == "reflect" else 0  # reflect leaves out the edge element
    g = dy
    for axis, (before, after) in enumerate(attrs["paddings"]):
        if before == after == 0:
            continue
        d = g.shape[axis] - before - after
        total = _take(g, axis, before, d)
        if before:
            left = reverse(_take(g, axis, 0, before), axis)
            total = add(total, _pad_axis(left, axis, offset, d - before - offset))
        if after:
            right = reverse(_take(g, axis, before + d, after), axis)
            total = add(total, _pad_axis(right, axis, d - after - offset, offset))
        g = total
    return (g,)


def grad_tile(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """dy as (rep, size) pairs per axis, summed over the repetitions."""
    (x,) = saved
    if x.ndim == 0:
        return (dy,)
    pairs = [v for r, d in zip(attrs["reps"], x.shape, strict=True) for v in (r, d)]
    return (sum(reshape(dy, pairs), tuple(range(0, 2 * x.ndim, 2))),)


# -- gathering and scattering -------------------------------------------------------------------


def grad_gather_v2(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, None]:
    """Sum dy into the gathered rows; batch axes become offsets into one flat segment axis."""
    x, indices = saved
    axis, b = attrs["axis"], attrs["batch_dims"]

    def dx() -> Tensor:
        batch, outer, inner = (math.prod(s) for s in (x.shape[:b], x.shape[b:axis], x.shape[axis + 1 :]))
        rest = math.prod(indices.shape[b:])
        size = x.shape[axis]
        g = reshape(dy, (batch, outer, rest, inner))
        if outer != 1:
            g = transpose(g, (0, 2, 1, 3))
        ids = reshape(indices, (batch, rest))
        if batch != 1:
            ids = add(ids, reshape(mul(range_(0, batch, dtype=indices.dtype), size), (batch, 1)))
        summed = unsorted_segment_sum(reshape(g, (batch * rest, outer, inner)), reshape(ids, (-1,)), batch * size)
        summed = reshape(summed, (batch, size, outer, inner))
        if outer != 1:
            summed = transpose(summed, (0, 2, 1, 3))
        return reshape(summed, x.shape)

    return dx, None


def grad_gather_nd(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, None]:
    params, indices = saved
    return lambda: scatter_nd(indices, dy, params.shape), None


def grad_scatter_nd(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[None, Any]:
    (indices,) = saved
    return None, lambda: gather_nd(dy, indices)


def grad_unsorted_segment_sum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, None]:
    """Gather dy back by segment id; slices whose id was dropped (out of range) get zero."""
    (ids,) = saved
    n = attrs["num_segments"]

    def dx() -> Tensor:
        if n == 0:
            return zeros(ids.shape + dy.shape[1:], dy.dtype)
        valid = where(less(ids, 0), False, less(ids, n))
        g = gather(dy, where(valid, ids, 0))
        mask = reshape(valid, ids.shape + (1,) * (dy.ndim - 1))
        return where(mask, g, zeros_like(g))

    return dx, None


def grad_top_k(dy: list[Tensor], saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any]:
    """Scatter the values' gradient to the positions they were taken from, row by row."""
    x, indices = saved

    def dx() -> Tensor:
        size, k = x.shape[-1], attrs["k"]
        rows = math.prod(x.shape[:-1])
        # Positions in the flattened x, in int32 (which every backend stores) while they fit, as TopK's indices.
        index_dtype = "int32" if rows * size <= _INT32_MAX else "int64"
        offsets = reshape(mul(range_(0, rows, dtype=index_dtype), size), (rows, 1))
        positions = reshape(add(reshape(indices, (rows, k)), offsets), (rows * k, 1))
        return reshape(scatter_nd(positions, reshape(dy[0], (rows * k,)), (rows * size,)), x.shape)

    return (dx,)


def grad_pack(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any]:
    return (lambda: unstack(dy, attrs["axis"]),)


def grad_unpack(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any]:
    return (lambda: stack(dy, attrs["axis"]),)


def grad_split_v(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any]:
    return (lambda: concat(dy, attrs["axis"]),)


def grad_reverse(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    return (reverse(dy, attrs["dims"]),)
