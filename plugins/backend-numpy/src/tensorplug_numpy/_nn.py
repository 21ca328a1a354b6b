"""Neural-network kernels (NHWC layout).

Convolution and pooling see every window at once through a strided view of
the padded input, [batch, out_height, out_width, fh, fw, channels] (im2col
without the copy), and contract or reduce it; the backward kernels add
window contributions back with one strided slice per filter tap. The ops
hand over canonical attrs: pairs of ints and explicit ((top, bottom),
(left, right)) pads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorplug_numpy._factories import quiet


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
    windows = _windows(_pad(x, attrs["pad"]), w.shape[:2], attrs["strides"], attrs["dilations"])
    return np.tensordot(windows, w, axes=3)


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def conv2d_backprop_input(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dy, w = inputs["dy"], inputs["filter"]
    taps = np.tensordot(dy, w, axes=([3], [3]))  # [n, oh, ow, fh, fw, in]
    return _add_windows(taps, attrs["input_shape"], attrs["pad"], attrs["strides"], attrs["dilations"])


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def conv2d_backprop_filter(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, dy = inputs["x"], inputs["dy"]
    windows = _windows(_pad(x, attrs["pad"]), attrs["filter_shape"][:2], attrs["strides"], attrs["dilations"])
    return np.tensordot(windows, dy, axes=([0, 1, 2], [0, 1, 2]))


def max_pool(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    windows = _windows(_pad(x, attrs["pad"], _lowest(x.dtype)), attrs["filter_size"], attrs["strides"])
    return np.max(windows, axis=(3, 4))


@quiet  # inf and NaN inputs give inf and NaN, as the contract says
def max_pool_grad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Each window's dy goes to the first maximum of the window (row-major), as TensorFlow.js."""
    dy, x = inputs["dy"], inputs["input"]
    (fh, fw), c = attrs["filter_size"], x.shape[3]
    windows = _windows(_pad(x, attrs["pad"], _lowest(x.dtype)), (fh, fw), attrs["strides"])
    first = np.argmax(windows.reshape(*windows.shape[:3], fh * fw, c), axis=3)  # [n, oh, ow, c]
    hit = first[:, :, :, None, :] == np.arange(fh * fw)[:, None]
    taps = np.where(hit, dy[:, :, :, None, :], dy.dtype.type(0)).reshape(windows.shape)
    return _add_windows(taps, x.shape, attrs["pad"], attrs["strides"])


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
    if pad == ((0, 0), (0, 0)):
        return x
    return np.pad(x, ((0, 0), pad[0], pad[1], (0, 0)), constant_values=value)


def _windows(
    x: np.ndarray, window: tuple[int, int], strides: tuple[int, int], dilations: tuple[int, int] = (1, 1)
) -> np.ndarray:
    """A read-only strided view [n, oh, ow, fh, fw, c] of the padded ``x``: the window of each output pixel."""
    (n, h, w, c), (fh, fw), (sh, sw), (dh, dw) = x.shape, window, strides, dilations
    oh = (h - (fh - 1) * dh - 1) // sh + 1
    ow = (w - (fw - 1) * dw - 1) // sw + 1
    bn, bh, bw, bc = x.strides
    return as_strided(x, (n, oh, ow, fh, fw, c), (bn, bh * sh, bw * sw, bh * dh, bw * dw, bc), writeable=False)


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
