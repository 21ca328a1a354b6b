"""Shape, indexing, dtype and creation kernels.

The ops hand these kernels canonical attrs (non-negative axes, resolved
sizes and paddings); index tensors are checked here, where their values are.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorplug.kernel_factories import strided_slice_key
from tensorplug_numpy._factories import quiet

# -- shape and dtype -------------------------------------------------------------


# np.where branches on every element, which a random mask makes slow (89 µs for 128x256 float32); on large
# float inputs, selecting the bits through an integer view of the same width gives exactly np.where's result
# (NaN, inf and -0.0 included) without branches (29 µs). Small inputs keep np.where, cheaper to set up.
_BITS = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}
_BIT_SELECT_MIN_SIZE = 4096


def select(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    condition, t, e = inputs["condition"], inputs["t"], inputs["e"]
    bits = _BITS.get(t.dtype)
    if bits is None or t.size < _BIT_SELECT_MIN_SIZE:
        return np.where(condition, t, e)
    mask = -np.asarray(condition).astype(bits)  # all ones where the condition holds, zeros elsewhere
    chosen = (np.asarray(t).view(bits) & mask) | (np.asarray(e).view(bits) & ~mask)  # broadcast, as np.where
    return chosen.view(t.dtype)


def reshape(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.reshape(inputs["x"], attrs["shape"])


def transpose(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.transpose(inputs["x"], attrs["perm"])


def broadcast_to(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.broadcast_to(inputs["x"], attrs["shape"])


@quiet  # NaN, inf and floats past the range of the target: undefined, as the contract says
def cast(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"].astype(attrs["dtype"])


def identity(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"]  # storage is immutable, so sharing it is safe


# -- joining and splitting -------------------------------------------------------------


def concat(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.concatenate(inputs["tensors"], axis=attrs["axis"])


def pack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.stack(inputs["tensors"], axis=attrs["axis"])


def unpack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return tuple(np.moveaxis(inputs["value"], attrs["axis"], 0))


def split_v(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return tuple(np.split(inputs["x"], np.cumsum(attrs["size_splits"])[:-1], axis=attrs["axis"]))


# -- slicing, padding, tiling, reversing ------------------------------------------------


def slice_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"][tuple(slice(b, b + s) for b, s in zip(attrs["begin"], attrs["size"], strict=True))]


def strided_slice(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """TensorFlow.js's semantics, masks included: numpy's basic indexing clamps and wraps the same way."""
    return inputs["x"][strided_slice_key(attrs)]


# np.pad refuses an empty tuple of paddings (a 0-d x); the scalar 0 pads nothing on every axis.


@quiet  # a constant beyond the dtype's range becomes inf
def pad_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.pad(inputs["x"], attrs["paddings"] or 0, constant_values=attrs["constant_value"])


def mirror_pad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.pad(inputs["x"], attrs["paddings"] or 0, mode=attrs["mode"])  # numpy's modes are TensorFlow's


def tile(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.tile(inputs["x"], attrs["reps"])


def reverse(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.flip(inputs["x"], attrs["dims"])


# -- gathering and scattering -----------------------------------------------------------


def _check_range(kernel: str, indices: Any, size: int) -> None:
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        bad = indices[(indices < 0) | (indices >= size)].flat[0]
        raise IndexError(f"{kernel}: index {bad} is out of range [0, {size})")


def _positions(kernel: str, indices: Any, shape: tuple[int, ...]) -> Any:
    """Row-major positions in ``shape[:depth]`` of the index tuples along the last axis of ``indices``."""
    depth = indices.shape[-1]
    tuples = indices.reshape(math.prod(indices.shape[:-1]), depth).astype(np.int64)
    bad = (tuples < 0) | (tuples >= np.array(shape[:depth], dtype=np.int64))
    if bad.any():
        row = tuples[bad.any(axis=1)][0]
        raise IndexError(f"{kernel}: index {row.tolist()} is out of range for shape {tuple(shape)}")
    positions = np.zeros(len(tuples), dtype=np.int64)
    for axis in range(depth):  # a loop over the index depth, not over elements
        positions = positions * shape[axis] + tuples[:, axis]
    return positions


def gather_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, indices = inputs["x"], inputs["indices"]
    axis, b = attrs["axis"], attrs["batch_dims"]
    _check_range("GatherV2", indices, x.shape[axis])
    if b == 0:
        return np.take(x, indices, axis=axis)
    # batch, outer, [gathered], inner axes of x; batch, rest axes of indices
    batch, outer, inner = x.shape[:b], x.shape[b:axis], x.shape[axis + 1 :]
    n = math.prod(batch)
    xs = x.reshape(n, math.prod(outer), x.shape[axis], math.prod(inner))
    ids = indices.reshape(n, math.prod(indices.shape[b:]))
    out = xs[np.arange(n)[:, None], :, ids]  # advanced indices first: (batch, rest, outer, inner)
    return out.transpose(0, 2, 1, 3).reshape(batch + outer + indices.shape[b:] + inner)


def gather_nd(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    params, indices = inputs["params"], inputs["indices"]
    depth = indices.shape[-1]
    positions = _positions("GatherNd", indices, params.shape)
    rows = params.reshape((math.prod(params.shape[:depth]), *params.shape[depth:]))
    return rows[positions].reshape(indices.shape[:-1] + params.shape[depth:])


@quiet  # inf + -inf updates give NaN, as the contract says
def scatter_nd(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    indices, updates, shape = inputs["indices"], inputs["updates"], attrs["shape"]
    depth = indices.shape[-1]
    positions = _positions("ScatterNd", indices, shape)
    out = np.zeros((math.prod(shape[:depth]), *shape[depth:]), dtype=updates.dtype)
    np.add.at(out, positions, updates.reshape((len(positions), *shape[depth:])))
    return out.reshape(shape)


@quiet
def unsorted_segment_sum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, ids, n = inputs["x"], inputs["segment_ids"], attrs["num_segments"]
    rest = x.shape[ids.ndim :]
    flat_ids = ids.reshape(-1)
    values = x.reshape((flat_ids.size, *rest))
    keep = (flat_ids >= 0) & (flat_ids < n)  # ids out of range are dropped
    out = np.zeros((n, *rest), dtype=x.dtype)
    np.add.at(out, flat_ids[keep], values[keep])
    return out


@quiet
def one_hot(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    hot = inputs["indices"][..., None] == np.arange(attrs["depth"])
    return np.where(hot, attrs["on_value"], attrs["off_value"]).astype(attrs["dtype"])


def top_k(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Largest first, ties by lower index: a stable ascending sort of the reversed axis, read backwards."""
    x = inputs["x"]
    last = x.shape[-1] - 1
    order = np.argsort(np.flip(x, -1), axis=-1, kind="stable")[..., ::-1][..., : attrs["k"]]
    indices = last - order
    return np.take_along_axis(x, indices, -1), indices.astype(np.int32)


# -- creation ----------------------------------------------------------------------------


@quiet  # a value beyond the dtype's range becomes inf
def fill(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.full(attrs["shape"], attrs["value"], dtype=attrs["dtype"])


def zeros_like(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.zeros_like(inputs["x"])


def ones_like(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.ones_like(inputs["x"])


@quiet
def range_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``start + i * step`` while short of ``stop``; float dtypes compute in float64 and round once."""
    start, stop, step, dtype = attrs["start"], attrs["stop"], attrs["step"], np.dtype(attrs["dtype"])
    if dtype.kind == "f":
        count = max(math.ceil((stop - start) / step), 0)
        return (start + step * np.arange(count, dtype=np.float64)).astype(dtype)
    count = max(-((start - stop) // step), 0)
    return (start + step * np.arange(count, dtype=dtype)).astype(dtype, copy=False)
