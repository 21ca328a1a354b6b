"""Neural-network kernels (NHWC layout).

Convolution sees every window through a strided view of the padded input,
[batch, out_height, out_width, fh, fw, channels], copies it into one
contiguous array (im2col) and contracts that with the filter in one matrix
product; its filter gradient is the transposed product. The input gradient
of a stride-1 convolution is itself a convolution (of dy, padded, with the
filter flipped); other strides add each window's contribution back with one
strided slice per filter tap. Pooling works tap by tap: one strided
[batch, out_height, out_width, channels] slice per filter tap, combined
elementwise. The ops hand over canonical attrs: pairs of ints and explicit
((top, bottom), (left, right)) pads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorplug_numpy._factories import quiet

FEW_CHANNELS = 8  # below this many channels, im2col copies tap by tap (measured: 2.5x faster for one channel)


@quiet  # inf logits give NaN, as the contract says
def softmax(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, dim = inputs["logits"], attrs["dim"]
    if x.size == 0:
        return np.empty_like(x)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def conv2d(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, w = inputs["x"], inputs["filter"]
    columns = _columns(_pad(x, attrs["pad"]), w.shape[:2], attrs["strides"], attrs["dilations"])
    return _contract(columns, w)


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def conv2d_backprop_input(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dy, w = inputs["dy"], inputs["filter"]
    shape, pad, strides, dilations = attrs["input_shape"], attrs["pad"], attrs["strides"], attrs["dilations"]
    full = _full_pad(shape, dy.shape, w.shape[:2], pad, strides, dilations)
    if full is not None:  # stride 1: a convolution of the padded dy with the filter flipped and transposed
        flipped = w[::-1, ::-1].transpose(0, 1, 3, 2)
        return _contract(_columns(_pad(dy, full), w.shape[:2], (1, 1), dilations), flipped)
    (fh, fw, cin, cout), (n, oh, ow, _) = w.shape, dy.shape
    taps = dy.reshape(-1, cout) @ w.reshape(-1, cout).T  # [n * oh * ow, fh * fw * in]
    return _add_windows(taps.reshape(n, oh, ow, fh, fw, cin), shape, pad, strides, dilations)


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def conv2d_backprop_filter(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, dy = inputs["x"], inputs["dy"]
    shape = attrs["filter_shape"]
    columns = _columns(_pad(x, attrs["pad"]), shape[:2], attrs["strides"], attrs["dilations"])
    rows = columns.reshape(-1, shape[0] * shape[1] * shape[2])
    return (rows.T @ dy.reshape(-1, shape[3])).reshape(shape)


def max_pool(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    return _maximum(_taps(_pad(x, attrs["pad"], _lowest(x.dtype)), attrs["filter_size"], attrs["strides"]))


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def max_pool_grad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Each window's dy goes to the first maximum of the window (row-major), as TensorFlow.js.

    The taps are visited in row-major order, and each takes dy where it
    holds the window's maximum and no earlier tap did (NaN where the window
    holds a NaN: its first NaN is then the maximum, as ``np.argmax`` has it).
    """
    dy, x = inputs["dy"], inputs["input"]
    (top, bottom), (left, right) = attrs["pad"]
    window, strides = attrs["filter_size"], attrs["strides"]
    taps = _taps(_pad(x, attrs["pad"], _lowest(x.dtype)), window, strides)
    peak = _maximum(taps)
    out = np.zeros((x.shape[0], x.shape[1] + top + bottom, x.shape[2] + left + right, x.shape[3]), dtype=dy.dtype)
    nan_windows = peak != peak
    any_nan = bool(nan_windows.any())
    zero = dy.dtype.type(0)
    open_: np.ndarray | None = None  # the windows whose maximum no tap has taken yet (None before the first tap)
    for tap, target in zip(taps, _taps(out, window, strides), strict=True):
        hit = tap == peak
        if any_nan:
            hit |= nan_windows & (tap != tap)
        if open_ is None:
            open_ = ~hit
        else:
            hit &= open_
            open_ ^= hit  # hit lies inside open_: this takes it out
        target += np.where(hit, dy, zero)  # a masked ufunc (where=hit) is several times slower
    return out[:, top : top + x.shape[1], left : left + x.shape[2]]


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def avg_pool(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    windows = _windows(_pad(x, attrs["pad"]), attrs["filter_size"], attrs["strides"])
    return np.sum(windows, axis=(3, 4)) / _counts(x.shape, x.dtype, attrs)


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def avg_pool_grad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dy, shape = inputs["dy"], inputs["input"].shape
    share = dy / _counts(shape, dy.dtype, attrs)
    (fh, fw), (n, oh, ow, c) = attrs["filter_size"], dy.shape
    taps = np.broadcast_to(share[:, :, :, None, None, :], (n, oh, ow, fh, fw, c))
    return _add_windows(taps, shape, attrs["pad"], attrs["strides"])


def _lowest(dtype: np.dtype[Any]) -> Any:
    """The padding value of max pooling: one that never wins."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _pad(x: np.ndarray, pad: tuple[tuple[int, int], tuple[int, int]], value: Any = 0) -> np.ndarray:
    """``x`` with ``pad`` rows and columns of ``value`` around it (``np.pad``'s result, at a fraction of its cost)."""
    ((top, bottom), (left, right)), (n, h, w, c) = pad, x.shape
    if top == bottom == left == right == 0:
        return x
    out = np.full((n, h + top + bottom, w + left + right, c), value, dtype=x.dtype)
    out[:, top : top + h, left : left + w] = x
    return out


def _windows(
    x: np.ndarray, window: tuple[int, int], strides: tuple[int, int], dilations: tuple[int, int] = (1, 1)
) -> np.ndarray:
    """A read-only strided view [n, oh, ow, fh, fw, c] of the padded ``x``: the window of each output pixel."""
    (n, h, w, c), (fh, fw), (sh, sw), (dh, dw) = x.shape, window, strides, dilations
    oh = (h - (fh - 1) * dh - 1) // sh + 1
    ow = (w - (fw - 1) * dw - 1) // sw + 1
    bn, bh, bw, bc = x.strides
    return as_strided(x, (n, oh, ow, fh, fw, c), (bn, bh * sh, bw * sw, bh * dh, bw * dw, bc), writeable=False)


def _columns(
    x: np.ndarray, window: tuple[int, int], strides: tuple[int, int], dilations: tuple[int, int]
) -> np.ndarray:
    """The windows of the padded ``x`` copied into a contiguous [n, oh, ow, fh, fw, c] array (im2col).

    Few channels make a short innermost run for one whole-array copy: then
    each filter tap is copied on its own, [n, oh, ow, c] at a time.
    """
    windows = _windows(x, window, strides, dilations)
    if x.shape[3] >= FEW_CHANNELS:
        return np.ascontiguousarray(windows)
    columns = np.empty(windows.shape, dtype=x.dtype)
    for i in range(window[0]):
        for j in range(window[1]):
            columns[:, :, :, i, j] = windows[:, :, :, i, j]
    return columns


def _contract(columns: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The [n, oh, ow, fh, fw, in] ``columns`` against a [fh, fw, in, out] filter: one matrix product, NHWC out."""
    n, oh, ow, fh, fw, cin = columns.shape
    out: np.ndarray = columns.reshape(n * oh * ow, fh * fw * cin) @ w.reshape(fh * fw * cin, w.shape[3])
    return out.reshape(n, oh, ow, w.shape[3])


def _maximum(taps: list[np.ndarray]) -> np.ndarray:
    """The elementwise maximum of the taps (NaN propagates)."""
    out = taps[0].copy()
    for tap in taps[1:]:
        np.maximum(out, tap, out=out)
    return out


def _full_pad(
    shape: tuple[int, ...],
    dy_shape: tuple[int, ...],
    window: tuple[int, int],
    pad: tuple[tuple[int, int], tuple[int, int]],
    strides: tuple[int, int],
    dilations: tuple[int, int],
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The pads of dy that make the input gradient of a stride-1 convolution a convolution of dy; None where it is
    not one (a stride above 1, or a pad wider than the dilated window)."""
    if strides != (1, 1):
        return None
    full = []
    for axis in range(2):
        span = (window[axis] - 1) * dilations[axis]
        before, after = span - pad[axis][0], span - pad[axis][1]
        if before < 0 or after < 0 or dy_shape[1 + axis] + before + after - span != shape[1 + axis]:
            return None
        full.append((before, after))
    return (full[0], full[1])


def _taps(x: np.ndarray, window: tuple[int, int], strides: tuple[int, int]) -> list[np.ndarray]:
    """For each filter tap (row-major), the [n, oh, ow, c] strided slice of the padded ``x`` it sees (a view:
    writeable where ``x`` is, and the output pixels of one tap never overlap)."""
    (_, h, w, _), (fh, fw), (sh, sw) = x.shape, window, strides
    oh, ow = max((h - fh) // sh + 1, 0), max((w - fw) // sw + 1, 0)
    rows = [slice(i, i + (oh - 1) * sh + 1, sh) if oh else slice(0, 0) for i in range(fh)]
    cols = [slice(j, j + (ow - 1) * sw + 1, sw) if ow else slice(0, 0) for j in range(fw)]
    return [x[:, r, c] for r in rows for c in cols]


def _add_windows(
    taps: np.ndarray,
    shape: tuple[int, ...],
    pad: tuple[tuple[int, int], tuple[int, int]],
    strides: tuple[int, int],
    dilations: tuple[int, int] = (1, 1),
) -> np.ndarray:
    """The transpose of ``_windows``: add the [n, oh, ow, fh, fw, c] ``taps`` back into an input of ``shape``."""
    n, h, w, c = shape
    (top, bottom), (left, right) = pad
    _, oh, ow, fh, fw, _ = taps.shape
    (sh, sw), (dh, dw) = strides, dilations
    out = np.zeros((n, h + top + bottom, w + left + right, c), dtype=taps.dtype)
    for i in range(fh):  # one strided slice per filter tap; the output pixels of a tap never overlap
        for j in range(fw):
            out[:, i * dh : i * dh + (oh - 1) * sh + 1 : sh, j * dw : j * dw + (ow - 1) * sw + 1 : sw] += taps[
                :, :, :, i, j
            ]
    return out[:, top : top + h, left : left + w]


def _counts(shape: tuple[int, ...], dtype: np.dtype[Any], attrs: dict[str, Any]) -> np.ndarray:
    """How many input elements each pooling window covers (padding excluded), as [1, oh, ow, 1]."""
    inside = np.ones((1, shape[1], shape[2], 1), dtype=dtype)
    counts: np.ndarray = np.sum(
        _windows(_pad(inside, attrs["pad"]), attrs["filter_size"], attrs["strides"]), axis=(3, 4)
    )
    return counts
