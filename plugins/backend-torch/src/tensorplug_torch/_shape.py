"""Torch kernels: shape, indexing, dtype and creation.

The ops hand these kernels canonical attrs (non-negative axes, resolved
sizes and paddings); index tensors are checked here, where their values are.
Results match the numpy backend's element for element: views where numpy
gives views (storage is immutable, so sharing it is safe), new tensors on
``backend.torch_device`` where numpy creates arrays.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from tensorplug_torch._backend import DTYPES
from tensorplug_torch._factories import unary
from tensorplug_torch._graphs import reads_to_host

_FLOAT32_MAX = torch.finfo(torch.float32).max


def _held(value: Any, dtype: Any) -> Any:
    """The Python scalar ``value`` as numpy's unsafe cast stores it in ``dtype``, where torch would refuse it.

    torch raises on a float past float32's range (numpy rounds it to inf) and on NaN, inf or a float past the
    range of an int dtype (numpy's cast gives what the CPU's conversion does); those few take the same
    float64-to-dtype cast through a CPU torch scalar (no device sync). Every other value is returned as it is.
    """
    if type(value) is not float or dtype is torch.float64 or dtype is torch.bool:
        return value
    if dtype is torch.float32:
        fits = not abs(value) > _FLOAT32_MAX  # NaN and inf are fine
    else:
        info = torch.iinfo(dtype)
        fits = math.isfinite(value) and info.min <= value <= info.max
    return value if fits else torch.tensor(value, dtype=torch.float64).to(dtype).item()


# -- shape and dtype -------------------------------------------------------------


def select(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.where(inputs["condition"], inputs["t"], inputs["e"])


def reshape(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"].reshape(attrs["shape"])


def transpose(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"].permute(attrs["perm"])


def broadcast_to(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"].expand(attrs["shape"])


def cast(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    # Float to int truncates toward zero, as numpy. NaN, inf and floats past the int's range are undefined in C:
    # on x86 CPUs both libraries give the int's minimum; other hardware (CUDA) may differ, and no case pins them.
    x = inputs["x"]
    target = DTYPES[attrs["dtype"]]
    if x.dtype is torch.bool and target is not torch.bool:
        x = x.view(torch.uint8)  # the same bytes; torch casts from uint8 ~3x faster than from bool on the CPU
    return x.to(target)


def identity(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"]  # storage is immutable, so sharing it is safe


# -- joining and splitting -------------------------------------------------------------


def concat(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.cat(inputs["tensors"], attrs["axis"])


def pack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.stack(inputs["tensors"], attrs["axis"])


def unpack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.unbind(inputs["value"], attrs["axis"])


def split_v(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.split(inputs["x"], list(attrs["size_splits"]), attrs["axis"])


# -- slicing, padding, tiling, reversing ------------------------------------------------


def slice_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"][tuple(slice(b, b + s) for b, s in zip(attrs["begin"], attrs["size"], strict=True))]


def strided_slice(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """TensorFlow.js's semantics, masks included, through torch's basic indexing (which clamps and wraps as numpy's).

    Torch slices take no negative steps: such an axis is sliced with the positive step over the same elements,
    and the result flipped along it. Takes the op's canonical attrs and raw TensorFlow.js ones alike.
    """
    x = inputs["x"]
    begin, end, strides = attrs["begin"], attrs["end"], attrs["strides"]
    begin_mask, end_mask, shrink_mask = attrs["begin_mask"], attrs["end_mask"], attrs["shrink_axis_mask"]
    ellipsis_mask, new_axis_mask = attrs["ellipsis_mask"], attrs["new_axis_mask"]
    named = sum(1 for i in range(len(begin)) if not (ellipsis_mask | new_axis_mask) >> i & 1)
    index: list[Any] = []
    flips: list[int] = []
    axis = out_axis = 0  # the axis of x and of the result that entry i refers to
    for i, (b, e, s) in enumerate(zip(begin, end, strides, strict=True)):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
            axis += x.ndim - named
            out_axis += x.ndim - named
        elif new_axis_mask & bit:
            index.append(None)
            out_axis += 1
        elif shrink_mask & bit:
            index.append(b)
            axis += 1
        else:
            piece = slice(None if begin_mask & bit else b, None if end_mask & bit else e, s)
            if s < 0:
                first, stop, step = piece.indices(x.shape[axis])
                count = len(range(first, stop, step))
                piece = slice(first + (count - 1) * step, first + 1, -step) if count else slice(0, 0)
                if count > 1:
                    flips.append(out_axis)
            index.append(piece)
            axis += 1
            out_axis += 1
    out = x[tuple(index)]
    return out.flip(flips) if flips else out


def pad_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    # torch.constant_pad_nd, not F.pad: its value is a Scalar, exact for int64 (F.pad's is a float).
    widths = [w for pair in reversed(attrs["paddings"]) for w in pair]  # last axis first
    x = inputs["x"]
    return torch.constant_pad_nd(x, widths, _held(attrs["constant_value"], x.dtype))


def mirror_pad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Axis by axis, the mirrored borders joined to each side (torch's own modes lack "symmetric" and ints)."""
    out = inputs["x"]
    offset = 1 if attrs["mode"] == "reflect" else 0  # reflect leaves out the edge element
    for axis, (before, after) in enumerate(attrs["paddings"]):
        if before == after == 0:
            continue
        d = out.shape[axis]
        parts = [out]
        if before:
            parts.insert(0, out.narrow(axis, offset, before).flip(axis))
        if after:
            parts.append(out.narrow(axis, d - offset - after, after).flip(axis))
        out = torch.cat(parts, axis)
    return out


def tile(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"].repeat(attrs["reps"])


def reverse(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"].flip(attrs["dims"])


# -- gathering and scattering -----------------------------------------------------------
# Out-of-range indices raise (a KernelError through the engine), as on numpy. Finding them needs their values on
# the host: one small read-back per call (a sync on CUDA), the least that raising allows; a device-side assert
# would leave the CUDA context unusable.


def _check_range(kernel: str, indices: Any, size: int) -> None:
    if not indices.numel():
        return
    low, high = torch.aminmax(indices)
    if bool((low < 0) | (high >= size)):  # the one host sync
        bad = indices[(indices < 0) | (indices >= size)][0]
        raise IndexError(f"{kernel}: index {bad.item()} is out of range [0, {size})")


def _positions(kernel: str, indices: Any, shape: tuple[int, ...]) -> Any:
    """Row-major positions in ``shape[:depth]`` of the index tuples along the last axis of ``indices``."""
    depth = indices.shape[-1]
    count = math.prod(indices.shape[:-1])
    if depth == 0:
        return torch.zeros(count, dtype=torch.int64, device=indices.device)
    tuples = indices.reshape(count, depth)
    if count:
        low, high = torch.aminmax(tuples, dim=0)
        lows, highs = torch.stack((low, high)).tolist()  # the one host sync
        if any(lo < 0 or hi >= d for lo, hi, d in zip(lows, highs, shape[:depth], strict=True)):
            limits = torch.tensor(shape[:depth], dtype=tuples.dtype, device=tuples.device)
            row = tuples[((tuples < 0) | (tuples >= limits)).any(dim=1)][0]
            raise IndexError(f"{kernel}: index {row.tolist()} is out of range for shape {tuple(shape)}")
    if depth == 1:
        return tuples.reshape(count)
    positions = tuples[:, 0].to(torch.int64)  # int64: the positions may pass int32's range
    for axis in range(1, depth):  # a loop over the index depth, not over elements
        positions = positions * shape[axis] + tuples[:, axis]
    return positions


@reads_to_host  # checks its indices on the host
def gather_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, indices = inputs["x"], inputs["indices"]
    axis, b = attrs["axis"], attrs["batch_dims"]
    _check_range("GatherV2", indices, x.shape[axis])
    if b == 0:
        taken = x.index_select(axis, indices.reshape(-1))
        return taken.reshape(x.shape[:axis] + indices.shape + x.shape[axis + 1 :])
    # batch, outer, [gathered], inner axes of x; batch, rest axes of indices
    batch, outer, inner = x.shape[:b], x.shape[b:axis], x.shape[axis + 1 :]
    n, rows, cols, rest = math.prod(batch), math.prod(outer), math.prod(inner), math.prod(indices.shape[b:])
    xs = x.reshape(n, rows, x.shape[axis], cols)
    ids = indices.reshape(n, 1, rest, 1).to(torch.int64).expand(n, rows, rest, cols)  # torch.gather takes int64
    return torch.gather(xs, 2, ids).reshape(batch + outer + indices.shape[b:] + inner)


@reads_to_host  # checks its indices on the host
def gather_nd(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    params, indices = inputs["params"], inputs["indices"]
    depth = indices.shape[-1]
    positions = _positions("GatherNd", indices, params.shape)
    rows = params.reshape(math.prod(params.shape[:depth]), *params.shape[depth:])
    return rows.index_select(0, positions).reshape(indices.shape[:-1] + params.shape[depth:])


@reads_to_host  # checks its indices on the host
def scatter_nd(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    indices, updates, shape = inputs["indices"], inputs["updates"], attrs["shape"]
    depth = indices.shape[-1]
    positions = _positions("ScatterNd", indices, shape)
    rest = shape[depth:]
    out = torch.zeros((math.prod(shape[:depth]), *rest), dtype=updates.dtype, device=backend.torch_device)
    out.index_add_(0, positions, updates.reshape(len(positions), *rest))  # duplicates add up
    return out.reshape(shape)


def unsorted_segment_sum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, ids, n = inputs["x"], inputs["segment_ids"], attrs["num_segments"]
    rest = x.shape[ids.ndim :]
    values = x.reshape(ids.numel(), *rest)
    # Ids out of range are dropped, without reading them back: shifted by one and clamped, they land in row 0
    # or row n + 1 of the sums, which are cut off.
    rows = (ids.reshape(-1) + 1).clamp_(0, n + 1)
    out = torch.zeros((n + 2, *rest), dtype=x.dtype, device=backend.torch_device)
    out.index_add_(0, rows, values)
    return out[1 : n + 1]


def one_hot(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Indices outside ``[0, depth)`` match no position: their rows are all ``off_value``."""
    device = backend.torch_device
    hot = inputs["indices"].unsqueeze(-1) == torch.arange(attrs["depth"], device=device)
    dtype = DTYPES[attrs["dtype"]]
    out = torch.full(hot.shape, _held(attrs["off_value"], dtype), dtype=dtype, device=device)
    return out.masked_fill_(hot, _held(attrs["on_value"], dtype))


def top_k(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Largest first, ties by lower index, NaN above every number: a stable descending sort.

    Not torch.topk: the order it gives to ties (and which of them it keeps at the k-th place) is unspecified.
    """
    k = attrs["k"]
    values, indices = torch.sort(inputs["x"], dim=-1, descending=True, stable=True)
    return values[..., :k], indices[..., :k].to(torch.int32)


# -- creation ----------------------------------------------------------------------------


def fill(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dtype = DTYPES[attrs["dtype"]]
    return torch.full(attrs["shape"], _held(attrs["value"], dtype), dtype=dtype, device=backend.torch_device)


zeros_like = unary(torch.zeros_like)  # on the device of x, the backend's
ones_like = unary(torch.ones_like)


def range_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``start + i * step`` while short of ``stop``; float dtypes compute in float64 and round once.

    Integer dtypes compute in their own dtype, wrapping as numpy does, so that the results are exact up to the
    dtype's limits (torch.arange's own count would overflow there).
    """
    start, stop, step, dtype = attrs["start"], attrs["stop"], attrs["step"], DTYPES[attrs["dtype"]]
    if dtype.is_floating_point:
        count, work = max(math.ceil((stop - start) / step), 0), torch.float64
    else:
        count, work = max(-((start - stop) // step), 0), dtype
    values = torch.arange(count, dtype=work, device=backend.torch_device).mul_(step).add_(start)
    return values.to(dtype)
