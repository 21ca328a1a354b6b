"""Shape, indexing, dtype and creation kernels.

The ops hand these kernels canonical attrs (non-negative axes, resolved
sizes and paddings); index tensors are checked here, where their values
are. Padding is built from ``concat`` (the standard has no pad), gathering
from ``take`` and ``take_along_axis``. ScatterNd and UnsortedSegmentSum are
missing (the standard has no scatter-add): they run on the fallback backend.
"""

from __future__ import annotations

import math
from typing import Any

from tensorplug_array_api._factories import along, device_of

# -- shape and dtype -------------------------------------------------------------


def select(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.where(inputs["condition"], inputs["t"], inputs["e"])


def reshape(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.reshape(inputs["x"], tuple(attrs["shape"]))


def transpose(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.permute_dims(inputs["x"], tuple(attrs["perm"]))


def broadcast_to(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.broadcast_to(inputs["x"], tuple(attrs["shape"]))


def cast(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.astype(inputs["x"], backend.dtypes[attrs["dtype"]])


def identity(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"]  # storage is immutable, so sharing it is safe


# -- joining and splitting -------------------------------------------------------------


def concat(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.concat(inputs["tensors"], axis=attrs["axis"])


def pack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.stack(inputs["tensors"], axis=attrs["axis"])


def unpack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return tuple(backend.xp.unstack(inputs["value"], axis=attrs["axis"]))


def split_v(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, axis = inputs["x"], attrs["axis"]
    parts, start = [], 0
    for size in attrs["size_splits"]:
        parts.append(x[along(axis, slice(start, start + size))])
        start += size
    return tuple(parts)


# -- slicing, padding, tiling, reversing ------------------------------------------------


def slice_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"][tuple(slice(b, b + s) for b, s in zip(attrs["begin"], attrs["size"], strict=True))]


def strided_slice(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """The canonical attrs (no ellipsis, begin/end in range) are a basic index, which the standard has.

    A negative stride is taken as a positive one on the flipped axis: torch's
    namespace refuses negative slice steps.
    """
    xp, x = backend.xp, inputs["x"]
    index: list[Any] = []
    axis = 0  # the axis of x that entry i indexes
    for i, (b, e, s) in enumerate(zip(attrs["begin"], attrs["end"], attrs["strides"], strict=True)):
        bit = 1 << i
        if attrs["new_axis_mask"] & bit:
            index.append(None)
            continue
        if attrs["shrink_axis_mask"] & bit:
            index.append(b)
        elif s > 0:
            index.append(slice(b, e, s))
        else:  # b, b + s, ... down to e (exclusive), or through index 0 with the end-mask bit
            last = x.shape[axis] - 1
            x = xp.flip(x, axis=axis)
            index.append(slice(last - b, None if attrs["end_mask"] & bit else last - e, -s))
        axis += 1
    return x[tuple(index)]


def pad_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp, x, value = backend.xp, inputs["x"], attrs["constant_value"]
    for axis, (before, after) in enumerate(attrs["paddings"]):
        if before or after:
            blocks = []
            for size in (before, after):
                shape = (*x.shape[:axis], size, *x.shape[axis + 1 :])
                blocks.append(xp.full(shape, value, dtype=x.dtype, device=device_of(x)))
            x = xp.concat([blocks[0], x, blocks[1]], axis=axis)
    return x


def mirror_pad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``reflect`` mirrors about the edge element, ``symmetric`` repeats it (TensorFlow's modes)."""
    xp, x = backend.xp, inputs["x"]
    skip = 1 if attrs["mode"] == "reflect" else 0
    for axis, (before, after) in enumerate(attrs["paddings"]):
        if before or after:
            n = x.shape[axis]
            head = xp.flip(x[along(axis, slice(skip, skip + before))], axis=axis)
            tail = xp.flip(x[along(axis, slice(n - skip - after, n - skip))], axis=axis)
            x = xp.concat([head, x, tail], axis=axis)
    return x


def tile(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.tile(inputs["x"], tuple(attrs["reps"]))


def reverse(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dims = tuple(attrs["dims"])
    return backend.xp.flip(inputs["x"], axis=dims) if dims else inputs["x"]


# -- gathering ----------------------------------------------------------------------------


def _first_true(xp: Any, mask: Any) -> int:
    """The flat position of the first True of ``mask`` (which has one)."""
    return int(xp.argmax(xp.astype(xp.reshape(mask, (-1,)), xp.int8)))


def _check_range(xp: Any, kernel: str, indices: Any, size: int) -> None:
    bad = (indices < 0) | (indices >= size)
    if xp.any(bad):
        value = int(xp.reshape(indices, (-1,))[_first_true(xp, bad)])
        raise IndexError(f"{kernel}: index {value} is out of range [0, {size})")


def gather_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp, x, indices = backend.xp, inputs["x"], inputs["indices"]
    axis, b = attrs["axis"], attrs["batch_dims"]
    _check_range(xp, "GatherV2", indices, x.shape[axis])
    # batch, outer, [gathered], inner axes of x; batch, rest axes of indices: one take_along_axis does it all.
    batch, outer, inner = x.shape[:b], x.shape[b:axis], x.shape[axis + 1 :]
    n, rest = math.prod(batch), indices.shape[b:]
    xs = xp.reshape(x, (n, math.prod(outer), x.shape[axis], math.prod(inner)))
    ids = xp.reshape(xp.astype(indices, xp.int64), (n, 1, math.prod(rest), 1))  # torch takes int64 only
    ids = xp.broadcast_to(ids, (n, xs.shape[1], ids.shape[2], xs.shape[3]))
    out = xp.take_along_axis(xs, ids, axis=2)
    return xp.reshape(out, batch + outer + rest + inner)


def gather_nd(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp, params, indices = backend.xp, inputs["params"], inputs["indices"]
    depth, shape = indices.shape[-1], params.shape
    tuples = xp.reshape(xp.astype(indices, xp.int64), (math.prod(indices.shape[:-1]), depth))
    limits = xp.asarray(shape[:depth], dtype=xp.int64, device=device_of(tuples))
    bad = xp.any((tuples < 0) | (tuples >= limits), axis=1)
    if xp.any(bad):
        row = _first_true(xp, bad)
        index = [int(tuples[row, axis]) for axis in range(depth)]
        raise IndexError(f"GatherNd: index {index} is out of range for shape {tuple(shape)}")
    positions = xp.zeros(tuples.shape[0], dtype=xp.int64, device=device_of(tuples))
    for axis in range(depth):  # a loop over the index depth, not over elements
        positions = positions * shape[axis] + tuples[:, axis]
    rows = xp.reshape(params, (math.prod(shape[:depth]), *shape[depth:]))
    return xp.reshape(xp.take(rows, positions, axis=0), indices.shape[:-1] + shape[depth:])


def one_hot(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    xp, indices, dtype = backend.xp, inputs["indices"], backend.dtypes[attrs["dtype"]]
    where = device_of(indices)
    hot = indices[..., None] == xp.arange(attrs["depth"], dtype=indices.dtype, device=where)
    on = xp.full((), attrs["on_value"], dtype=dtype, device=where)
    off = xp.full((), attrs["off_value"], dtype=dtype, device=where)
    return xp.where(hot, on, off)


def top_k(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Largest first, ties by lower index (a stable descending sort), NaN above everything."""
    xp, x = backend.xp, inputs["x"]
    order = xp.argsort(x, axis=-1, descending=True, stable=True)[..., : attrs["k"]]
    return xp.take_along_axis(x, order, axis=-1), xp.astype(order, xp.int32)


# -- creation ----------------------------------------------------------------------------


def fill(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dtype = backend.dtypes[attrs["dtype"]]
    return backend.xp.full(tuple(attrs["shape"]), attrs["value"], dtype=dtype, device=backend.xp_device)


def zeros_like(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.zeros_like(inputs["x"])


def ones_like(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return backend.xp.ones_like(inputs["x"])


def range_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``start + i * step`` while short of ``stop``; float dtypes compute in float64 and round once."""
    xp, start, stop, step = backend.xp, attrs["start"], attrs["stop"], attrs["step"]
    dtype = backend.dtypes[attrs["dtype"]]
    if xp.isdtype(dtype, "real floating"):
        count = max(math.ceil((stop - start) / step), 0)
        steps = xp.arange(count, dtype=xp.float64, device=backend.xp_device)
        return xp.astype(start + step * steps, dtype)
    count = max(-((start - stop) // step), 0)
    return start + step * xp.arange(count, dtype=dtype, device=backend.xp_device)
