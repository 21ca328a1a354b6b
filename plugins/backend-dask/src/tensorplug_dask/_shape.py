"""Shape, indexing, dtype and creation kernels of the dask backend.

Most are dask.array's own chunk-aware functions (reshape, transpose,
concatenate, basic indexing, pad, tile, flip, where, full, arange), whose
values are numpy's. The others map the numpy backend's kernel over blocks
(``@per_chunk``), after rechunking only the axes that kernel needs whole.
Index checks happen where the values are, inside the tasks: computing a
result raises numpy's error then (the op itself returns a lazy tensor).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import dask.array as da
import numpy as np

from tensorplug import kernel_names as K
from tensorplug.kernel_factories import strided_slice_key
from tensorplug_dask._factories import Chunk, as_dask, chunkwise, numpy_kernel, per_chunk

# -- helpers ---------------------------------------------------------------------------------------------------


def _chunks(backend: Any, shape: tuple[int, ...], dtype: Any, kernel: str) -> tuple[tuple[int, ...], ...]:
    """The chunks the backend gives a new array of ``shape`` (its ``chunks`` option), normalized; refused (naming
    ``kernel``) past the backend's ``max_chunks``."""
    if backend is None:
        chunks: tuple[tuple[int, ...], ...] = da.core.normalize_chunks("auto", shape, dtype=np.dtype(dtype))
        return chunks
    return backend.new_chunks(kernel, shape, dtype)  # type: ignore[no-any-return]


def _meta(ndim: int, dtype: Any) -> np.ndarray:
    """An empty block of ``ndim`` dimensions: given to blockwise, so that it never calls a kernel to guess one."""
    return np.empty((0,) * ndim, dtype=dtype)


class _Outputs(Chunk):
    """A multi-output numpy kernel on one block of each input: the tuple of its output blocks."""

    def __call__(self, *blocks: Any) -> Any:
        result = self.fn(dict(zip(self.input_names, blocks, strict=True)), self.attrs, None)
        return tuple(np.asarray(r) for r in result)

    def __dask_tokenize__(self) -> Any:
        return ("outputs", *super().__dask_tokenize__())


def _whole(name: str, inputs: dict[str, Any], input_names: Sequence[str], attrs: dict[str, Any],
           shape: tuple[int, ...], dtype: Any) -> Any:  # fmt: skip
    """numpy's kernel ``name`` in one task on whole inputs (each rechunked to one block): one output block."""
    arrays = [as_dask(inputs[n]).rechunk(-1) for n in input_names]
    args: list[Any] = []
    for i, a in enumerate(arrays):  # distinct labels per input: every input axis is contracted (one block each)
        args += [a, tuple(f"in{i}_{axis}" for axis in range(a.ndim))]
    out = tuple(f"out{axis}" for axis in range(len(shape)))
    chunk = Chunk(name, numpy_kernel(name), input_names, attrs)
    return da.blockwise(chunk, out, *args, new_axes=dict(zip(out, shape, strict=True)), concatenate=True,
                        dtype=dtype, meta=_meta(len(shape), dtype))  # fmt: skip


# -- index checks inside the graph ----------------------------------------------------------------------------------

_NONE = np.iinfo(np.int64).max  # the position a block with no bad index reports


def _first_bad(block: np.ndarray, size: int, shape: tuple[int, ...], block_info: Any = None) -> np.ndarray:
    """(row-major position in the whole index array, value) of the block's first index outside [0, size)."""
    found = np.array([_NONE, 0], dtype=np.int64)
    bad = (block < 0) | (block >= size)
    if bad.any():
        local = np.unravel_index(int(np.argmax(bad.reshape(-1))), block.shape)
        starts = [start for start, _ in block_info[0]["array-location"]]
        where = tuple(int(i) + s for i, s in zip(local, starts, strict=True))
        found[0] = np.ravel_multi_index(where, shape) if shape else 0
        found[1] = block[local]
    return found.reshape((1,) * block.ndim + (2,))


def _raise_first_bad(found: np.ndarray, kernel: str, size: int) -> np.ndarray:
    """Raise numpy's IndexError for the first bad index of the whole array (the one numpy's kernel names)."""
    rows = found.reshape(-1, 2)
    first = rows[np.argmin(rows[:, 0])]
    if first[0] != _NONE:
        raise IndexError(f"{kernel}: index {first[1]} is out of range [0, {size})")
    return np.ones((), dtype=bool)


def _gate(block: np.ndarray, ok: np.ndarray) -> np.ndarray:
    return block


def _range_checked(kernel: str, indices: Any, size: int) -> Any:
    """``indices`` whose every block waits for a check of all of them: computing it raises numpy's IndexError
    (naming the first index outside [0, size) in row-major order) when there is one.

    One small task per index block finds its first bad index; one task over those results raises.
    """
    ndim = indices.ndim
    found = indices.map_blocks(
        _first_bad, size, tuple(indices.shape), chunks=(*((1,) * n for n in indices.numblocks), (2,)),
        new_axis=ndim, dtype=np.int64, meta=_meta(ndim + 1, np.int64),
    )  # fmt: skip
    ok = found.rechunk(-1).map_blocks(
        _raise_first_bad, kernel, size, drop_axis=list(range(ndim + 1)), chunks=(), dtype=bool, meta=_meta(0, bool)
    )
    index = tuple(f"i{axis}" for axis in range(ndim))
    return da.blockwise(_gate, index, indices, index, ok, (), dtype=indices.dtype, meta=_meta(ndim, indices.dtype))


# -- shape and dtype ------------------------------------------------------------------------------------------------


def reshape(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """dask's reshape, which rechunks where the new shape cuts across chunks."""
    return _reshape(as_dask(inputs["x"]), tuple(attrs["shape"]))


def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` in ``shape`` (row-major), whatever the shapes.

    dask reshapes only by merging or evenly splitting axes; any other reshape ((2, 3) to (3, 2)) is two of those:
    to 1-D, then to the shape. An empty x is made one block (free), which dask reshapes in one task.
    """
    if x.size == 0:
        return da.reshape(x.rechunk(-1), shape)
    try:
        return da.reshape(x, shape)
    except NotImplementedError:  # decided by shapes and chunks alone, before any task is added
        return da.reshape(da.reshape(x, (x.size,)), shape)


def transpose(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return da.transpose(as_dask(inputs["x"]), tuple(attrs["perm"]))


def broadcast_to(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """x broadcast to ``shape``, the axes it creates or stretches chunked as the backend chunks that shape.

    dask's ``broadcast_to`` would make each such axis one chunk (the gradient of a mean, a 0-d dy broadcast to
    a 1,000,000-row shape, would be one block that every consumer chunked by rows splits again), and its tasks
    never fuse with their consumers. Here each output block is ``np.broadcast_to`` of x's block (a read-only
    view) in a blockwise task over an empty template, which dask fuses into the elementwise kernel that reads it.
    """
    x = as_dask(inputs["x"])
    shape = tuple(attrs["shape"])
    lead = len(shape) - x.ndim
    stretched = [i for i, n in enumerate(shape) if i < lead or (x.shape[i - lead] == 1 and n != 1)]
    if not stretched:
        return da.broadcast_to(x, shape)
    wanted = _chunks(backend, shape, x.dtype, K.BROADCAST_TO)
    chunks = tuple(wanted[i] if i in stretched else x.chunks[i - lead] for i in range(len(shape)))
    template = da.empty(shape, dtype=x.dtype, chunks=chunks)
    return da.core.elemwise(_broadcast_block, template, x, dtype=x.dtype)


def _broadcast_block(template: np.ndarray, block: np.ndarray) -> np.ndarray:
    return np.broadcast_to(block, template.shape)


# numpy's Cast on each chunk: NaN and inf to ints quietly, as numpy's kernel gives them (astype would warn).
cast = chunkwise("Cast")


def identity(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"]  # storage is immutable (a dask graph), so sharing it is safe


def select(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """dask's where (np.where on each block of the broadcast inputs: numpy's Select gives the same values)."""
    return da.where(as_dask(inputs["condition"]), as_dask(inputs["t"]), as_dask(inputs["e"]))


# -- joining and splitting ------------------------------------------------------------------------------------------


def concat(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return da.concatenate([as_dask(t) for t in inputs["tensors"]], axis=attrs["axis"])


def pack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return da.stack([as_dask(t) for t in inputs["tensors"]], axis=attrs["axis"])


def unpack(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    value, before = as_dask(inputs["value"]), (slice(None),) * attrs["axis"]
    return tuple(value[(*before, i)] for i in range(attrs["num"]))


def split_v(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, before = as_dask(inputs["x"]), (slice(None),) * attrs["axis"]
    bounds = [0, *np.cumsum(attrs["size_splits"], dtype=np.int64).tolist()]
    return tuple(x[(*before, slice(start, end))] for start, end in itertools.pairwise(bounds))


# -- slicing, padding, tiling, reversing ----------------------------------------------------------------------------


def slice_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    index = tuple(slice(b, b + s) for b, s in zip(attrs["begin"], attrs["size"], strict=True))
    return as_dask(inputs["x"])[index]


def strided_slice(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """The index numpy's kernel uses (masks included), as dask's basic indexing: negative steps too."""
    return as_dask(inputs["x"])[strided_slice_key(attrs)]


def pad_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Blocks of the constant joined before and after each axis (dask's pad refuses to pad an empty array)."""
    x = as_dask(inputs["x"])
    value = attrs["constant_value"]
    for axis, (before, after) in enumerate(attrs["paddings"]):
        parts = []
        for width in (before, after):
            shape = (*x.shape[:axis], width, *x.shape[axis + 1 :])
            chunks = (*x.chunks[:axis], _chunks(backend, shape, x.dtype, K.PAD_V2)[axis], *x.chunks[axis + 1 :])
            parts.append(da.full(shape, value, dtype=x.dtype, chunks=chunks) if width else None)
        if parts[0] is not None or parts[1] is not None:
            x = da.concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)
    return x


def mirror_pad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """dask's pad, whose 'reflect' and 'symmetric' modes are numpy's (the op keeps widths within the axis).

    dask's pad fails on an empty x: that one is numpy's kernel on its single (empty) block.
    """
    x = as_dask(inputs["x"])
    if x.size == 0:
        shape = tuple(n + before + after for n, (before, after) in zip(x.shape, attrs["paddings"], strict=True))
        return _whole("MirrorPad", {"x": x}, ("x",), attrs, shape, x.dtype)
    return da.pad(x, attrs["paddings"] or 0, mode=attrs["mode"])


def tile(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return da.tile(as_dask(inputs["x"]), tuple(attrs["reps"]))


def reverse(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return da.flip(as_dask(inputs["x"]), tuple(attrs["dims"]))


# -- gathering and scattering -----------------------------------------------------------------------------------


def gather_v2(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """dask's take with the (flattened) index array; batch_dims > 0: numpy's kernel on each batch block.

    Lazy: an index outside [0, x.shape[axis]) raises numpy's IndexError when the result is computed.
    """
    x, indices = as_dask(inputs["x"]), as_dask(inputs["indices"])
    axis, b = attrs["axis"], attrs["batch_dims"]
    indices = _range_checked("GatherV2", indices, x.shape[axis])
    if b == 0:
        with warnings.catch_warnings():  # take pairs every chunk of x along axis with every index chunk: by design
            warnings.filterwarnings("ignore", "Increasing number of chunks", da.PerformanceWarning)
            taken = da.take(x, _reshape(indices, (indices.size,)), axis=axis)
        return _reshape(taken, (*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :]))
    return _batch_gather(x, indices, attrs)


def _batch_gather(x: Any, indices: Any, attrs: dict[str, Any]) -> Any:
    """numpy's GatherV2 on each pair of blocks: x whole along axis, batch axes aligned, others as chunked."""
    axis, b = attrs["axis"], attrs["batch_dims"]
    batch = tuple(f"b{i}" for i in range(b))
    x_axes = tuple(f"x{i}" for i in range(b, x.ndim))  # x{axis} is the gathered axis: whole, contracted
    rest = tuple(f"r{i}" for i in range(b, indices.ndim))
    out = batch + x_axes[: axis - b] + rest + x_axes[axis - b + 1 :]
    chunk = Chunk("GatherV2", numpy_kernel("GatherV2"), ("x", "indices"), attrs)
    whole = x.rechunk({axis: -1})
    return da.blockwise(chunk, out, whole, batch + x_axes, indices, batch + rest, concatenate=True,
                        dtype=x.dtype, meta=_meta(len(out), x.dtype))  # fmt: skip


@per_chunk
def gather_nd(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's GatherNd in one task on whole params and indices: an out-of-range index raises numpy's
    IndexError when the result is computed."""
    params, indices = inputs["params"], inputs["indices"]
    shape = tuple(indices.shape[:-1]) + tuple(params.shape[indices.shape[-1] :])
    return _whole("GatherNd", inputs, ("params", "indices"), attrs, shape, params.dtype)


@per_chunk
def scatter_nd(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's ScatterNd in one task on whole indices and updates (one output block): an out-of-range index
    raises numpy's IndexError when the result is computed."""
    updates = inputs["updates"]
    return _whole("ScatterNd", inputs, ("indices", "updates"), attrs, tuple(attrs["shape"]), updates.dtype)


def _leading(chunk: Chunk, lead: int, x: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``chunk``'s result with ``lead`` axes of size 1 in front: one entry per block along the leading axes."""
    result: np.ndarray = chunk(x, ids)
    return result.reshape((1,) * lead + result.shape)


def _quiet_sum(x: np.ndarray, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> np.ndarray:
    with np.errstate(all="ignore"):  # inf + -inf gives NaN quietly, as numpy's kernel
        result: np.ndarray = np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
    return result


@per_chunk
def unsorted_segment_sum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's kernel on each block of rows (x and segment_ids aligned), then the blocks' sums added up.

    Each block gives its segments' sums, (num_segments, *rest); a dask reduction adds them over the blocks
    of the leading axes (float sums may round differently from numpy's single pass). Ids outside
    [0, num_segments) are dropped.
    """
    x, ids = as_dask(inputs["x"]), as_dask(inputs["segment_ids"])
    n, lead = attrs["num_segments"], ids.ndim
    lead_axes = tuple(f"l{i}" for i in range(lead))
    rest_axes = tuple(f"r{i}" for i in range(lead, x.ndim))
    out = (*lead_axes, "s", *rest_axes)
    chunk = Chunk("UnsortedSegmentSum", numpy_kernel("UnsortedSegmentSum"), ("x", "segment_ids"), attrs)
    sums = da.blockwise(partial(_leading, chunk, lead), out, x, lead_axes + rest_axes, ids, lead_axes,
                        new_axes={"s": n}, adjust_chunks=dict.fromkeys(lead_axes, 1), dtype=x.dtype,
                        meta=_meta(len(out), x.dtype))  # fmt: skip
    if lead == 0:
        return sums
    return da.reduction(sums, _quiet_sum, _quiet_sum, combine=_quiet_sum, axis=tuple(range(lead)), dtype=x.dtype,
                        concatenate=True, meta=_meta(1 + len(rest_axes), x.dtype))  # fmt: skip


def one_hot(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """indices[..., None] == arange(depth), then where: numpy's values (its on/off conversion included)."""
    indices, depth, dtype = as_dask(inputs["indices"]), attrs["depth"], np.dtype(attrs["dtype"])
    on_value, off_value = attrs["on_value"], attrs["off_value"]
    # numpy's kernel converts where(hot, on, off) to dtype: each value converts as it does there
    on = np.asarray(np.where(True, on_value, off_value)).astype(dtype)
    off = np.asarray(np.where(False, on_value, off_value)).astype(dtype)
    shape = (*indices.shape, depth)
    positions = da.arange(depth, chunks=(_chunks(backend, shape, dtype, K.ONE_HOT)[-1],))
    return da.where(indices[..., None] == positions, on, off)


@per_chunk
def top_k(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's TopK on each block of rows, the last axis rechunked whole: (values, int32 indices)."""
    x = as_dask(inputs["x"]).rechunk({-1: -1})
    chunk = _Outputs("TopK", numpy_kernel("TopK"), ("x",), attrs)
    values, indices = da.apply_gufunc(chunk, "(n)->(k),(k)", x, output_dtypes=(x.dtype, np.int32),
                                      output_sizes={"k": attrs["k"]}, vectorize=False)  # fmt: skip
    return values, indices


# -- creation -------------------------------------------------------------------------------------------------------


def fill(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    shape, dtype = tuple(attrs["shape"]), np.dtype(attrs["dtype"])
    return da.full(shape, attrs["value"], dtype=dtype, chunks=_chunks(backend, shape, dtype, K.FILL))


def zeros_like(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return da.zeros_like(as_dask(inputs["x"]))  # x's shape, dtype and chunks; none of x's graph


def ones_like(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return da.ones_like(as_dask(inputs["x"]))


def range_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``start + i * step`` on a chunked arange, computed as numpy's kernel does (float64 for floats, one rounding)."""
    start, stop, step, dtype = attrs["start"], attrs["stop"], attrs["step"], np.dtype(attrs["dtype"])
    if dtype.kind == "f":
        count = max(math.ceil((stop - start) / step), 0)
        steps = da.arange(count, dtype=np.float64, chunks=_chunks(backend, (count,), np.float64, K.RANGE))
        return (start + step * steps).astype(dtype)
    count = max(-((start - stop) // step), 0)
    steps = da.arange(count, dtype=dtype, chunks=_chunks(backend, (count,), dtype, K.RANGE))
    return (start + step * steps).astype(dtype, copy=False)
