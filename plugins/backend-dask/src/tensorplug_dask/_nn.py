"""Neural-network kernels (NHWC): Softmax in dask ops; convolution and pooling per batch chunk.

Softmax is dask's max and sum along ``dim`` (tree reductions: ``dim`` may
span many chunks) around numpy's elementwise exp and division, run quietly
as numpy's kernel is (inf logits give NaN, without a warning).

Convolution and pooling are per-chunk maps of the numpy backend's kernels:
every axis a window slides over is rechunked to one chunk (height and width;
for convolution the channels too, which it contracts, and the filter whole),
the batch axis keeps its chunks, and numpy's kernel runs on each batch chunk
(for pooling, on each batch-and-channel chunk: channels pool independently).
On a lazy backend a call only adds those tasks; numpy's kernel runs when the
values are computed. Output shapes come from the attrs, as numpy's kernels
compute them. Conv2DBackpropFilter sums the filter gradients of the batch
chunks (a dask tree reduction), so with several batch chunks its float
values may differ from numpy's in the last bits.
"""

# (dask.array has no type annotations)

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from tensorplug_dask._factories import Chunk, Kernel, as_dask, numpy_kernel, per_chunk

# -- Softmax --------------------------------------------------------------------------------------------------------


def softmax(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``; empty logits give an empty result."""
    x, dim = as_dask(inputs["logits"]), attrs["dim"]
    if x.size == 0:
        return x  # nothing to compute: an empty array of the same shape and dtype
    peak = da.max(x, axis=dim, keepdims=True)
    e = da.core.elemwise(_shifted_exp, x, peak, dtype=x.dtype)
    total = da.sum(e, axis=dim, keepdims=True, dtype=x.dtype)
    return da.core.elemwise(_divide, e, total, dtype=x.dtype)


def _shifted_exp(x: np.ndarray, peak: np.ndarray) -> Any:
    with np.errstate(all="ignore"):
        return np.exp(x - peak)


def _divide(a: np.ndarray, b: np.ndarray) -> Any:
    with np.errstate(all="ignore"):
        return a / b


# -- per-batch-chunk maps of numpy's kernels ------------------------------------------------------------------------

_WHOLE = -1  # rechunk: one chunk along the axis


def _out_size(size: int, pad: tuple[int, int], window: int, stride: int, dilation: int = 1) -> int:
    """The number of window positions along one axis, as numpy's kernels slide them."""
    return (size + pad[0] + pad[1] - (window - 1) * dilation - 1) // stride + 1


def _out_hw(shape: tuple[int, ...], window: tuple[int, int], attrs: dict[str, Any]) -> tuple[int, int]:
    dilations = attrs.get("dilations", (1, 1))
    (top_bottom, left_right), (sh, sw) = attrs["pad"], attrs["strides"]
    oh = _out_size(shape[1], top_bottom, window[0], sh, dilations[0])
    ow = _out_size(shape[2], left_right, window[1], sw, dilations[1])
    return oh, ow


def _meta(ndim: int, dtype: Any) -> np.ndarray:
    """An empty array of the result's kind, so that dask never calls a kernel on made-up blocks."""
    return np.empty((0,) * ndim, dtype=dtype)


class _BatchShapeChunk(Chunk):
    """numpy's Conv2DBackpropInput on one batch chunk: ``input_shape`` takes the chunk's batch size."""

    def __call__(self, *blocks: Any) -> Any:
        shape = self.attrs["input_shape"]
        attrs = {**self.attrs, "input_shape": (blocks[0].shape[0], *shape[1:])}
        return np.asarray(self.fn(dict(zip(self.input_names, blocks, strict=True)), attrs, None))


class _PartialSumChunk(Chunk):
    """numpy's Conv2DBackpropFilter on one batch chunk, with a leading axis of 1: the partial sums to add."""

    def __call__(self, *blocks: Any) -> Any:
        return super().__call__(*blocks)[None]


class _ShapeOnlyChunk(Chunk):
    """numpy's AvgPoolGrad on one chunk of dy; the input, whose shape only matters, is a zero-stride stand-in.

    The input's data never enters the graph: the block of input that matches a dy block has dy's batch and
    channel sizes and the whole height and width.
    """

    def __init__(self, name: str, attrs: dict[str, Any], height_width: tuple[int, int]):
        super().__init__(name, numpy_kernel(name), ("dy", "input"), attrs)
        self.height_width = height_width

    def __call__(self, *blocks: Any) -> Any:
        (dy,) = blocks
        stand_in = np.broadcast_to(np.zeros((), dy.dtype), (dy.shape[0], *self.height_width, dy.shape[3]))
        return np.asarray(self.fn({"dy": dy, "input": stand_in}, self.attrs, None))

    def __dask_tokenize__(self) -> Any:
        return (super().__dask_tokenize__(), self.height_width)


@per_chunk
def conv2d(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's Conv2D on each batch chunk of x (height, width and channels whole), with the whole filter."""
    x, w = as_dask(inputs["x"]), as_dask(inputs["filter"])
    x = x.rechunk({1: _WHOLE, 2: _WHOLE, 3: _WHOLE})
    w = w.rechunk(_WHOLE)
    oh, ow = _out_hw(x.shape, w.shape[:2], attrs)
    chunk = Chunk("Conv2D", numpy_kernel("Conv2D"), ("x", "filter"), attrs)
    return da.blockwise(
        chunk, ("n", "oh", "ow", "out"),
        x, ("n", "h", "w", "in"),
        w, ("fh", "fw", "in", "out"),
        new_axes={"oh": oh, "ow": ow}, dtype=x.dtype, meta=_meta(4, x.dtype), concatenate=True,
    )  # fmt: skip


@per_chunk
def conv2d_backprop_input(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's Conv2DBackpropInput on each batch chunk of dy (its other axes whole), with the whole filter."""
    dy, w = as_dask(inputs["dy"]), as_dask(inputs["filter"])
    dy = dy.rechunk({1: _WHOLE, 2: _WHOLE, 3: _WHOLE})
    w = w.rechunk(_WHOLE)
    _, h, wd, _ = attrs["input_shape"]
    chunk = _BatchShapeChunk("Conv2DBackpropInput", numpy_kernel("Conv2DBackpropInput"), ("dy", "filter"), attrs)
    return da.blockwise(
        chunk, ("n", "h", "w", "in"),
        dy, ("n", "oh", "ow", "out"),
        w, ("fh", "fw", "in", "out"),
        new_axes={"h": h, "w": wd}, dtype=dy.dtype, meta=_meta(4, dy.dtype), concatenate=True,
    )  # fmt: skip


@per_chunk
def conv2d_backprop_filter(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's Conv2DBackpropFilter on each batch chunk of x and dy, the chunks' results summed."""
    x, dy = as_dask(inputs["x"]), as_dask(inputs["dy"])
    x = x.rechunk({1: _WHOLE, 2: _WHOLE, 3: _WHOLE})
    dy = dy.rechunk({0: x.chunks[0], 1: _WHOLE, 2: _WHOLE, 3: _WHOLE})
    fh, fw, _, _ = attrs["filter_shape"]
    chunk = _PartialSumChunk("Conv2DBackpropFilter", numpy_kernel("Conv2DBackpropFilter"), ("x", "dy"), attrs)
    partial = da.blockwise(
        chunk, ("n", "fh", "fw", "in", "out"),
        x, ("n", "h", "w", "in"),
        dy, ("n", "oh", "ow", "out"),
        new_axes={"fh": fh, "fw": fw}, adjust_chunks={"n": 1}, dtype=x.dtype, meta=_meta(5, x.dtype), concatenate=True,
    )  # fmt: skip
    return da.sum(partial, axis=0, dtype=x.dtype)


def _pool(name: str) -> Kernel:
    """The pooling kernel ``name`` (MaxPool, AvgPool): numpy's on each batch-and-channel chunk of x."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x = as_dask(inputs["x"]).rechunk({1: _WHOLE, 2: _WHOLE})
        oh, ow = _out_hw(x.shape, attrs["filter_size"], attrs)
        chunk = Chunk(name, numpy_kernel(name), ("x",), attrs)
        return da.blockwise(
            chunk, ("n", "oh", "ow", "c"),
            x, ("n", "h", "w", "c"),
            new_axes={"oh": oh, "ow": ow}, dtype=x.dtype, meta=_meta(4, x.dtype), concatenate=True,
        )  # fmt: skip

    kernel.__name__ = name.lower()
    kernel.__doc__ = f"numpy's {name} on each batch-and-channel chunk of x (height and width whole)."
    return per_chunk(kernel)


max_pool = _pool("MaxPool")
avg_pool = _pool("AvgPool")


@per_chunk
def max_pool_grad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's MaxPoolGrad on each batch-and-channel chunk of dy, input and output (height and width whole)."""
    x = as_dask(inputs["input"])
    chunks = {0: x.chunks[0], 1: _WHOLE, 2: _WHOLE, 3: x.chunks[3]}
    x = x.rechunk(chunks)
    dy, y = as_dask(inputs["dy"]).rechunk(chunks), as_dask(inputs["output"]).rechunk(chunks)
    chunk = Chunk("MaxPoolGrad", numpy_kernel("MaxPoolGrad"), ("dy", "input", "output"), attrs)
    return da.blockwise(
        chunk, ("n", "h", "w", "c"),
        dy, ("n", "oh", "ow", "c"),
        x, ("n", "h", "w", "c"),
        y, ("n", "oh", "ow", "c"),
        dtype=dy.dtype, meta=_meta(4, dy.dtype), concatenate=True,
    )  # fmt: skip


@per_chunk
def avg_pool_grad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """numpy's AvgPoolGrad on each batch-and-channel chunk of dy (height and width whole); input's shape only."""
    dy = as_dask(inputs["dy"]).rechunk({1: _WHOLE, 2: _WHOLE})
    _, h, w, _ = inputs["input"].shape
    chunk = _ShapeOnlyChunk("AvgPoolGrad", attrs, (h, w))
    return da.blockwise(
        chunk, ("n", "h", "w", "c"),
        dy, ("n", "oh", "ow", "c"),
        new_axes={"h": h, "w": w}, dtype=dy.dtype, meta=_meta(4, dy.dtype), concatenate=True,
    )  # fmt: skip
