"""Conformance cases: nn (softmax, 2-D convolutions and pooling, NHWC).

Expected values are small hand-worked examples, or come from the
definitions below: plain float64 loops over every output pixel and filter
tap, with the padding of each "same" case worked out by hand in its
comment (TensorFlow's rule: out = ceil(in / stride), the padding split with
the extra row or column at the end).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.ops._nn import avg_pool_grad, conv2d_backprop_filter, conv2d_backprop_input, max_pool_grad
from tensorplug.testing._case import Case, f32, f64, i32, i64

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]
VALID: Pads = ((0, 0), (0, 0))

_rng = np.random.default_rng(2024)


def _sum_rtol(y: np.ndarray) -> float:
    """How close to 1 a sum of softmax outputs must be: a few units of the dtype's last place."""
    return 1e-12 if y.dtype == np.float64 else 1e-6


def normal(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape)


def distinct(*shape: int) -> np.ndarray:
    """Values far apart (no ties within a finite-difference step), in random order."""
    values = np.arange(math.prod(shape), dtype=np.float64) * 0.37 - 2.0
    return _rng.permutation(values).reshape(shape)


# -- definitions ----------------------------------------------------------------------


def _out_size(size: int, pads: Pair, window: int, stride: int, dilation: int = 1) -> int:
    return (size + pads[0] + pads[1] - (window - 1) * dilation - 1) // stride + 1


def _taps(
    shape: tuple[int, ...], window: Pair, strides: Pair, pads: Pads, dilations: Pair = (1, 1)
) -> list[tuple[int, int, int, int, int, int]]:
    """Every (out_row, out_col, tap_row, tap_col, in_row, in_col) whose input pixel lies inside the input."""
    height, width = shape[1], shape[2]
    out_h = _out_size(height, pads[0], window[0], strides[0], dilations[0])
    out_w = _out_size(width, pads[1], window[1], strides[1], dilations[1])
    found = []
    for i in range(out_h):
        for j in range(out_w):
            for p in range(window[0]):
                for q in range(window[1]):
                    r = i * strides[0] + p * dilations[0] - pads[0][0]
                    c = j * strides[1] + q * dilations[1] - pads[1][0]
                    if 0 <= r < height and 0 <= c < width:
                        found.append((i, j, p, q, r, c))
    return found


def _pooled_shape(shape: tuple[int, ...], window: Pair, strides: Pair, pads: Pads) -> tuple[int, int, int, int]:
    out_h = _out_size(shape[1], pads[0], window[0], strides[0])
    out_w = _out_size(shape[2], pads[1], window[1], strides[1])
    return shape[0], out_h, out_w, shape[3]


def conv2d_def(x: Any, w: Any, strides: Pair, pads: Pads, dilations: Pair = (1, 1)) -> np.ndarray:
    """out[b, i, j, m] = sum over taps (p, q) and channels k of x[b, i*s + p*d - pad, ...] * w[p, q, k, m]."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    out_h = _out_size(x.shape[1], pads[0], w.shape[0], strides[0], dilations[0])
    out_w = _out_size(x.shape[2], pads[1], w.shape[1], strides[1], dilations[1])
    out = np.zeros((x.shape[0], out_h, out_w, w.shape[3]))
    for b in range(x.shape[0]):
        for i, j, p, q, r, c in _taps(x.shape, w.shape[:2], strides, pads, dilations):
            for k in range(w.shape[2]):
                for m in range(w.shape[3]):
                    out[b, i, j, m] += x[b, r, c, k] * w[p, q, k, m]
    return out


def conv2d_backprop_input_def(
    dy: Any, w: Any, shape: tuple[int, ...], strides: Pair, pads: Pads, dilations: Pair = (1, 1)
) -> np.ndarray:
    """dx[b, r, c, k] = sum of dy[b, i, j, m] * w[p, q, k, m] over the windows (i, j) whose tap (p, q) is (r, c)."""
    dy, w = np.asarray(dy, np.float64), np.asarray(w, np.float64)
    dx = np.zeros(shape)
    for b in range(shape[0]):
        for i, j, p, q, r, c in _taps(shape, w.shape[:2], strides, pads, dilations):
            for k in range(w.shape[2]):
                for m in range(w.shape[3]):
                    dx[b, r, c, k] += dy[b, i, j, m] * w[p, q, k, m]
    return dx


def conv2d_backprop_filter_def(
    x: Any, dy: Any, shape: tuple[int, ...], strides: Pair, pads: Pads, dilations: Pair = (1, 1)
) -> np.ndarray:
    """dw[p, q, k, m] = sum of x[b, r, c, k] * dy[b, i, j, m] over the windows (i, j) whose tap (p, q) is (r, c)."""
    x, dy = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    dw = np.zeros(shape)
    for b in range(x.shape[0]):
        for i, j, p, q, r, c in _taps(x.shape, (shape[0], shape[1]), strides, pads, dilations):
            for k in range(shape[2]):
                for m in range(shape[3]):
                    dw[p, q, k, m] += x[b, r, c, k] * dy[b, i, j, m]
    return dw


def _pool_windows(x: np.ndarray, window: Pair, strides: Pair, pads: Pads) -> dict[tuple[int, int], list[Pair]]:
    """The input pixels (row, col) of each output pixel's window, in row-major tap order."""
    windows: dict[tuple[int, int], list[Pair]] = {}
    for i, j, _, _, r, c in _taps(x.shape, window, strides, pads):
        windows.setdefault((i, j), []).append((r, c))
    return windows


def max_pool_def(x: Any, window: Pair, strides: Pair, pads: Pads) -> np.ndarray:
    """The maximum of the input pixels of each window (NaN if one of them is NaN)."""
    x = np.asarray(x, np.float64)
    out = np.zeros(_pooled_shape(x.shape, window, strides, pads))
    for (i, j), pixels in _pool_windows(x, window, strides, pads).items():
        for b in range(x.shape[0]):
            for k in range(x.shape[3]):
                values = [x[b, r, c, k] for r, c in pixels]
                out[b, i, j, k] = math.nan if any(math.isnan(v) for v in values) else max(values)
    return out


def avg_pool_def(x: Any, window: Pair, strides: Pair, pads: Pads) -> np.ndarray:
    """The mean of the input pixels of each window (padding is not counted)."""
    x = np.asarray(x, np.float64)
    out = np.zeros(_pooled_shape(x.shape, window, strides, pads))
    for (i, j), pixels in _pool_windows(x, window, strides, pads).items():
        for b in range(x.shape[0]):
            for k in range(x.shape[3]):
                out[b, i, j, k] = sum(x[b, r, c, k] for r, c in pixels) / len(pixels)
    return out


def max_pool_grad_def(dy: Any, x: Any, window: Pair, strides: Pair, pads: Pads) -> np.ndarray:
    """Each window's dy added to the first of its input pixels holding the window's maximum."""
    dy, x = np.asarray(dy, np.float64), np.asarray(x, np.float64)
    dx = np.zeros(x.shape)
    for (i, j), pixels in _pool_windows(x, window, strides, pads).items():
        for b in range(x.shape[0]):
            for k in range(x.shape[3]):
                best = pixels[0]
                for r, c in pixels[1:]:
                    if x[b, r, c, k] > x[b, best[0], best[1], k]:
                        best = (r, c)
                dx[b, best[0], best[1], k] += dy[b, i, j, k]
    return dx


def avg_pool_grad_def(dy: Any, x_shape: tuple[int, ...], window: Pair, strides: Pair, pads: Pads) -> np.ndarray:
    """Each window's dy shared equally among its input pixels."""
    dy = np.asarray(dy, np.float64)
    dx = np.zeros(x_shape)
    for (i, j), pixels in _pool_windows(np.zeros(x_shape), window, strides, pads).items():
        for r, c in pixels:
            dx[:, r, c, :] += dy[:, i, j, :] / len(pixels)
    return dx


def _softmax_def(x: Any, axis: int) -> np.ndarray:
    """exp(x_i) / sum_j exp(x_j) with Python's math, one line of ``axis`` at a time."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    out = np.zeros(x.shape)
    for index in np.ndindex(x.shape[:-1]):
        row = [math.exp(v) for v in x[index]]
        out[index] = [v / sum(row) for v in row]
    return np.moveaxis(out, -1, axis)


# -- softmax --------------------------------------------------------------------------

_logits_axis0 = normal(3, 2)
_logits_3d = normal(2, 3, 4)

SOFTMAX = [
    Case(K.SOFTMAX, tp.softmax, (f32([[1.0, 1.0], [0.0, math.log(3.0)]]),), f32([[0.5, 0.5], [0.25, 0.75]]),
         name="hand"),
    Case(K.SOFTMAX, lambda x: tp.softmax(x, 0), (f64(_logits_axis0),), f64(_softmax_def(_logits_axis0, 0)),
         name="axis0-float64", rtol=1e-12),
    Case(K.SOFTMAX, lambda x: tp.softmax(x, 1), (f32(_logits_3d),), f32(_softmax_def(_logits_3d, 1)), name="3d-axis1",
         rtol=1e-5),
    Case(K.SOFTMAX, tp.softmax, (f32([1000.0, 1000.0, -1000.0]),), f32([0.5, 0.5, 0.0]), name="large-is-stable"),
    Case(K.SOFTMAX, tp.softmax, (f32([-math.inf, 0.0]),), f32([0.0, 1.0]), name="minus-inf"),
    Case(K.SOFTMAX, tp.softmax, (f32([[math.nan, 1.0], [0.0, 0.0]]),), f32([[math.nan, math.nan], [0.5, 0.5]]),
         name="nan"),
    Case(K.SOFTMAX, tp.softmax, (f32(np.zeros((0, 3))),), f32(np.zeros((0, 3))), name="empty"),
    Case(K.SOFTMAX, tp.softmax, (normal(2, 4),), None, grad=True, name="grad",
         check=lambda y: np.testing.assert_allclose(y.sum(-1), 1.0, rtol=_sum_rtol(y))),
    Case(K.SOFTMAX, lambda x: tp.softmax(x, 0), (normal(3, 2),), None, grad=True, name="grad-axis0",
         check=lambda y: np.testing.assert_allclose(y.sum(0), 1.0, rtol=_sum_rtol(y))),
    Case(K.SOFTMAX, tp.softmax, (i32([1, 2]),), raises=tp.DTypeError, match="softmax: expects a float tensor",
         name="int"),
    Case(K.SOFTMAX, tp.softmax, (f32(1.0),), raises=tp.ShapeError, match="out of range for a tensor of rank 0",
         name="scalar"),
    Case(K.SOFTMAX, lambda x: tp.softmax(x, 2), (f32([[1.0]]),), raises=tp.ShapeError, match="axis 2 is out of range",
         name="bad-axis"),
]  # fmt: skip

# -- Conv2D ---------------------------------------------------------------------------

_x_grid = f32(np.arange(9.0).reshape(1, 3, 3, 1))
_x_valid, _w_valid = normal(2, 5, 6, 3), normal(3, 2, 3, 4)
# stride 2 "same": rows 6 -> 3 with pads (0, 1); cols 5 -> 3 with pads (1, 1)
_x_same, _w_same = normal(1, 6, 5, 2), normal(3, 3, 2, 3)
_x_dil, _w_dil = normal(1, 5, 6, 2), normal(2, 3, 2, 2)
_x_pad1, _w_pad1 = normal(2, 4, 5, 2), normal(3, 3, 2, 2)
_x_hwc, _w_hwc = normal(4, 4, 2), normal(2, 2, 2, 3)

CONV2D = [
    Case(K.CONV2D, tp.conv2d, (_x_grid, f32(np.ones((2, 2, 1, 1)))), f32([[[[8.0], [12.0]], [[20.0], [24.0]]]]),
         name="hand"),
    Case(K.CONV2D, tp.conv2d, (f64(_x_valid), f64(_w_valid)), f64(conv2d_def(_x_valid, _w_valid, (1, 1), VALID)),
         grad=True, name="valid"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, strides=2, pad="same"), (f64(_x_same), f64(_w_same)),
         f64(conv2d_def(_x_same, _w_same, (2, 2), ((0, 1), (1, 1)))), grad=True, name="same-stride2"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, pad=[[1, 0], [0, 2]], dilations=2), (f64(_x_dil), f64(_w_dil)),
         f64(conv2d_def(_x_dil, _w_dil, (1, 1), ((1, 0), (0, 2)), (2, 2))), grad=True, name="explicit-dilated"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, strides=(2, 1), pad=1), (f32(_x_pad1), f32(_w_pad1)),
         f32(conv2d_def(_x_pad1, _w_pad1, (2, 1), ((1, 1), (1, 1)))), rtol=1e-5, atol=1e-5, name="int-pad-float32"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, pad=[[0, 0], [1, 1], [2, 0], [0, 0]], dilations=(1, 2)),
         (f64(_x_dil), f64(_w_dil)), f64(conv2d_def(_x_dil, _w_dil, (1, 1), ((1, 1), (2, 0)), (1, 2))),
         name="tfjs-explicit-pad"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, pad="same"), (f64(_x_hwc), f64(_w_hwc)),
         f64(conv2d_def(_x_hwc[None], _w_hwc, (1, 1), ((0, 1), (0, 1)))[0]), name="unbatched-same"),
    Case(K.CONV2D, tp.conv2d, (_x_grid, f64(np.ones((2, 2, 1, 1)))), f64([[[[8.0], [12.0]], [[20.0], [24.0]]]]),
         name="promotes-to-float64"),
    Case(K.CONV2D, tp.conv2d, (f32(np.zeros((0, 4, 4, 2))), f32(np.ones((2, 2, 2, 3)))), f32(np.zeros((0, 3, 3, 3))),
         name="empty-batch"),
    Case(K.CONV2D, tp.conv2d, (f32(np.ones((1, 3, 3, 2))), f32(np.ones((2, 2, 2, 0)))), f32(np.zeros((1, 2, 2, 0))),
         name="no-out-channels"),
    Case(K.CONV2D, tp.conv2d, (i32(np.ones((1, 3, 3, 1))), f32(np.ones((2, 2, 1, 1)))), raises=tp.DTypeError,
         match="conv2d: expects a float tensor, got int32", name="int-input"),
    Case(K.CONV2D, tp.conv2d, (f32(np.ones((3, 3))), f32(np.ones((2, 2, 1, 1)))), raises=tp.ShapeError,
         match=r"conv2d: x must be 4-D \[batch, height, width, channels\]", name="rank"),
    Case(K.CONV2D, tp.conv2d, (f32(np.ones((1, 3, 3, 2))), f32(np.ones((2, 2, 3, 1)))), raises=tp.ShapeError,
         match="in-channels .* must match the channels of x", name="channel-mismatch"),
    Case(K.CONV2D, tp.conv2d, (f32(np.ones((1, 3, 3, 1))), f32(np.ones((2, 2, 1)))), raises=tp.ShapeError,
         match="filter must be 4-D", name="filter-rank"),
    Case(K.CONV2D, tp.conv2d, (f32(np.ones((1, 3, 3, 1))), f32(np.ones((4, 2, 1, 1)))), raises=tp.ShapeError,
         match="a 4x2 window does not fit in the 3x3 input", name="filter-too-large"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, dilations=2), (f32(np.ones((1, 3, 3, 1))), f32(np.ones((3, 3, 1, 1)))),
         raises=tp.ShapeError, match=r"dilated to 5x5\) does not fit", name="dilated-too-large"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, pad="full"), (f32(np.ones((1, 3, 3, 1))), f32(np.ones((2, 2, 1, 1)))),
         raises=tp.TensorplugError, match="pad must be 'valid', 'same'", name="bad-pad"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, pad=-1), (f32(np.ones((1, 3, 3, 1))), f32(np.ones((2, 2, 1, 1)))),
         raises=tp.TensorplugError, match="pad must be", name="negative-pad"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, strides=0), (f32(np.ones((1, 3, 3, 1))), f32(np.ones((2, 2, 1, 1)))),
         raises=tp.TensorplugError, match="strides must be a positive int", name="zero-stride"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, dilations=(1, 2, 3)),
         (f32(np.ones((1, 3, 3, 1))), f32(np.ones((2, 2, 1, 1)))), raises=tp.TensorplugError,
         match=r"dilations must be a positive int or a \(height, width\) pair", name="bad-dilations"),
    Case(K.CONV2D, lambda x, w: tp.conv2d(x, w, data_format="NCHW"),
         (f32(np.ones((1, 1, 3, 3))), f32(np.ones((2, 2, 1, 1)))), raises=tp.TensorplugError,
         match="only data_format='NHWC'", name="nchw"),
]  # fmt: skip

# -- Conv2DBackpropInput (conv2d_transpose) ---------------------------------------------

_dy_t, _w_t = normal(2, 3, 3, 4), normal(3, 3, 2, 4)  # into (2, 6, 6, 2), stride 2 "same": pads (0, 1) both ways
_dy_rem, _w_rem = normal(1, 3, 3, 2), normal(3, 3, 1, 2)  # into (1, 8, 8, 1), stride 2 "valid": row 8 untouched
_dy_bd, _w_bd = normal(1, 4, 4, 2), normal(2, 3, 3, 2)  # into (1, 5, 6, 3), pads ((1, 0), (0, 2)), dilation 2

CONV2D_BACKPROP_INPUT = [
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (1, 3, 3, 1)),
         (f32([[[[1.0], [2.0]], [[3.0], [4.0]]]]), f32(np.ones((2, 2, 1, 1)))),
         f32([[[[1.0], [3.0], [2.0]], [[4.0], [10.0], [6.0]], [[3.0], [7.0], [4.0]]]]), name="hand"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (2, 6, 6, 2), 2, "same"),
         (f64(_dy_t), f64(_w_t)), f64(conv2d_backprop_input_def(_dy_t, _w_t, (2, 6, 6, 2), (2, 2), ((0, 1), (0, 1)))),
         grad=True, name="transpose-same-stride2"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (1, 8, 8, 1), 2),
         (f32(_dy_rem), f32(_w_rem)), f32(conv2d_backprop_input_def(_dy_rem, _w_rem, (1, 8, 8, 1), (2, 2), VALID)),
         rtol=1e-5, atol=1e-5, name="transpose-uncovered-edge"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (3, 3, 1)),
         (f32([[[1.0], [2.0]], [[3.0], [4.0]]]), f32(np.ones((2, 2, 1, 1)))),
         f32([[[1.0], [3.0], [2.0]], [[4.0], [10.0], [6.0]], [[3.0], [7.0], [4.0]]]), name="transpose-unbatched"),
    Case(K.CONV2D_BACKPROP_INPUT,
         lambda dy, w: conv2d_backprop_input(dy, w, (1, 5, 6, 3), 1, [[1, 0], [0, 2]], 2), (f64(_dy_bd), f64(_w_bd)),
         f64(conv2d_backprop_input_def(_dy_bd, _w_bd, (1, 5, 6, 3), (1, 1), ((1, 0), (0, 2)), (2, 2))), grad=True,
         name="dilated-explicit"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (0, 3, 3, 2)),
         (f32(np.zeros((0, 2, 2, 1))), f32(np.ones((2, 2, 2, 1)))), f32(np.zeros((0, 3, 3, 2))), name="empty-batch"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (1, 4, 4, 1)),
         (f32(np.ones((1, 2, 2, 1))), f32(np.ones((2, 2, 1, 1)))), raises=tp.ShapeError,
         match=r"x float32\[1, 2, 2, 1\] must have the shape \(1, 3, 3, 1\)", name="output-shape-mismatch"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (1, 3, 3, 1)),
         (f32(np.ones((1, 2, 2, 2))), f32(np.ones((2, 2, 1, 1)))), raises=tp.ShapeError,
         match=r"out-channels \(float32\[2, 2, 1, 1\], dimension 3\) must match the channels of x",
         name="channel-mismatch"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (3, 3, 1)),
         (f32(np.ones((1, 2, 2, 1))), f32(np.ones((2, 2, 1, 1)))), raises=tp.ShapeError,
         match="output_shape .* must have 4 dimensions", name="output-shape-rank"),
    Case(K.CONV2D_BACKPROP_INPUT, lambda x, w: tp.conv2d_transpose(x, w, (1, 3, 3, 1)),
         (i64(np.ones((1, 2, 2, 1))), f32(np.ones((2, 2, 1, 1)))), raises=tp.DTypeError,
         match="conv2d_transpose: expects a float tensor", name="int-input"),
]  # fmt: skip

# -- Conv2DBackpropFilter ---------------------------------------------------------------

_x_bf, _dy_bf = normal(2, 4, 5, 3), normal(2, 2, 4, 2)  # filter (3, 2, 3, 2), "valid"
_x_bfs, _dy_bfs = normal(1, 5, 6, 2), normal(1, 3, 3, 3)  # filter (3, 3, 2, 3), stride 2 "same": pads (1, 1), (0, 1)
_x_bfd, _dy_bfd = normal(1, 5, 6, 2), normal(1, 4, 4, 2)  # filter (2, 3, 2, 2), pads ((1, 0), (0, 2)), dilation 2

CONV2D_BACKPROP_FILTER = [
    Case(K.CONV2D_BACKPROP_FILTER, lambda x, dy: conv2d_backprop_filter(x, dy, (2, 2, 1, 1)),
         (_x_grid, f32(np.ones((1, 2, 2, 1)))), f32([[[[8.0]], [[12.0]]], [[[20.0]], [[24.0]]]]), name="hand"),
    Case(K.CONV2D_BACKPROP_FILTER, lambda x, dy: conv2d_backprop_filter(x, dy, (3, 2, 3, 2)),
         (f64(_x_bf), f64(_dy_bf)), f64(conv2d_backprop_filter_def(_x_bf, _dy_bf, (3, 2, 3, 2), (1, 1), VALID)),
         grad=True, name="valid"),
    Case(K.CONV2D_BACKPROP_FILTER, lambda x, dy: conv2d_backprop_filter(x, dy, (3, 3, 2, 3), 2, "same"),
         (f64(_x_bfs), f64(_dy_bfs)),
         f64(conv2d_backprop_filter_def(_x_bfs, _dy_bfs, (3, 3, 2, 3), (2, 2), ((1, 1), (0, 1)))), grad=True,
         name="same-stride2"),
    Case(K.CONV2D_BACKPROP_FILTER, lambda x, dy: conv2d_backprop_filter(x, dy, (2, 3, 2, 2), 1, [[1, 0], [0, 2]], 2),
         (f32(_x_bfd), f32(_dy_bfd)),
         f32(conv2d_backprop_filter_def(_x_bfd, _dy_bfd, (2, 3, 2, 2), (1, 1), ((1, 0), (0, 2)), (2, 2))),
         rtol=1e-5, atol=1e-5, grad=True, name="dilated-explicit-float32"),
    Case(K.CONV2D_BACKPROP_FILTER, lambda x, dy: conv2d_backprop_filter(x, dy, (2, 2, 2, 3)),
         (f32(np.zeros((0, 3, 3, 2))), f32(np.zeros((0, 2, 2, 3)))), f32(np.zeros((2, 2, 2, 3))), name="empty-batch"),
    Case(K.CONV2D_BACKPROP_FILTER, lambda x, dy: conv2d_backprop_filter(x, dy, (2, 2, 1, 1)),
         (f32(np.ones((1, 3, 3, 1))), f32(np.ones((1, 3, 3, 1)))), raises=tp.ShapeError,
         match=r"dy float32\[1, 3, 3, 1\] must have the shape \(1, 2, 2, 1\)", name="dy-mismatch"),
    Case(K.CONV2D_BACKPROP_FILTER, lambda x, dy: conv2d_backprop_filter(x, dy, (2, 2, 2, 1)),
         (f32(np.ones((1, 3, 3, 1))), f32(np.ones((1, 2, 2, 1)))), raises=tp.ShapeError,
         match=r"filter_shape \(2, 2, 2, 1\) must be \[fh, fw, in, out\]", name="filter-shape-mismatch"),
]  # fmt: skip

# -- MaxPool and MaxPoolGrad -------------------------------------------------------------

_grid4 = [[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 7.0], [9.0, 6.0, 1.0, 2.0], [0.0, 3.0, 4.0, 5.0]]
_x_pool = f32(np.array(_grid4).reshape(1, 4, 4, 1))
_x_neg = -np.abs(distinct(2, 4, 5, 2)) - 0.5  # all negative: zero padding would win if it counted
_x_mp = distinct(1, 5, 6, 2)  # 2x3 windows, strides (1, 2), pads ((1, 0), (1, 1))
_x_mpi = np.array([[3, -7, 12], [5, 9, -2], [0, 4, 8]])

MAX_POOL = [
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2), (_x_pool,), f32([[[[5.0], [8.0]], [[9.0], [5.0]]]]), name="hand"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 3, 1, "same"), (f64(_x_neg),),
         f64(max_pool_def(_x_neg, (3, 3), (1, 1), ((1, 1), (1, 1)))), grad=True, name="same-negative"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, (2, 3), (1, 2), [[1, 0], [1, 1]]), (f64(_x_mp),),
         f64(max_pool_def(_x_mp, (2, 3), (1, 2), ((1, 0), (1, 1)))), grad=True, name="explicit-pad"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2, 1), (i32(_x_mpi.reshape(1, 3, 3, 1)),),
         i32([[[[9], [12]], [[9], [9]]]]), name="int32"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2, 2, "same"), (i64(_x_mpi.reshape(1, 3, 3, 1) - 2**40),),
         i64(np.array([[[[9], [12]], [[4], [8]]]]) - 2**40), name="int64-same"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2), (f32([[[[math.nan], [1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0],
                                                         [7.0]]]]),), f32([[[[math.nan], [7.0]]]]), name="nan"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2), (f32([[[[-math.inf], [1.0]], [[-2.0], [math.inf]]]]),),
         f32([[[[math.inf]]]]), name="inf"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2, 1), (f32(np.array(_grid4).reshape(4, 4, 1)),),
         f32(max_pool_def(np.array(_grid4).reshape(1, 4, 4, 1), (2, 2), (1, 1), VALID)[0]), name="unbatched"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2), (f32(np.zeros((0, 4, 4, 3))),), f32(np.zeros((0, 2, 2, 3))),
         name="empty-batch"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2), (np.ones((1, 2, 2, 1), dtype=np.bool_),), raises=tp.DTypeError,
         match="max_pool: expects a numeric tensor, got bool", name="bool"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2, 1, 2), (f32(np.ones((1, 3, 3, 1))),), raises=tp.ShapeError,
         match="must be smaller than the 2x2 window", name="pad-not-smaller-than-window"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 4), (f32(np.ones((1, 3, 3, 1))),), raises=tp.ShapeError,
         match="a 4x4 window does not fit", name="window-too-large"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 0), (f32(np.ones((1, 3, 3, 1))),), raises=tp.TensorplugError,
         match="filter_size must be a positive int", name="zero-filter-size"),
    Case(K.MAX_POOL, lambda x: tp.max_pool(x, 2), (f32(np.ones((3, 3))),), raises=tp.ShapeError,
         match="max_pool: x must be 4-D", name="rank"),
]  # fmt: skip

_x_mpg = distinct(1, 4, 5, 2)
_dy_mpg = normal(1, 4, 5, 2)  # 3x3 windows, stride 1, "same": pads (1, 1) both ways
_x_mpv, _dy_mpv = distinct(2, 4, 4, 1), normal(2, 2, 2, 1)
_x_ties = _rng.integers(0, 3, (1, 4, 5, 2)).astype(np.float64)  # many ties; 2x2 windows, stride 1
_y_ties, _dy_ties = max_pool_def(_x_ties, (2, 2), (1, 1), VALID), normal(1, 3, 4, 2)

MAX_POOL_GRAD = [
    Case(K.MAX_POOL_GRAD, lambda dy, x, y: max_pool_grad(dy, x, y, 2),
         (f32([[[[2.0]]]]), f32([[[[3.0], [3.0]], [[1.0], [3.0]]]]), f32([[[[3.0]]]])),
         f32([[[[2.0], [0.0]], [[0.0], [0.0]]]]), name="tie-goes-to-first"),
    Case(K.MAX_POOL_GRAD, lambda dy, x, y: max_pool_grad(dy, x, y, 3, 1, "same"),
         (f64(_dy_mpg), f64(_x_mpg), f64(max_pool_def(_x_mpg, (3, 3), (1, 1), ((1, 1), (1, 1))))),
         f64(max_pool_grad_def(_dy_mpg, _x_mpg, (3, 3), (1, 1), ((1, 1), (1, 1)))), grad=True, name="same-overlapping"),
    Case(K.MAX_POOL_GRAD, lambda dy, x, y: max_pool_grad(dy, x, y, 2),
         (f32(_dy_mpv), f32(_x_mpv), f32(max_pool_def(_x_mpv, (2, 2), (2, 2), VALID))),
         f32(max_pool_grad_def(_dy_mpv, _x_mpv, (2, 2), (2, 2), VALID)), name="valid-float32"),
    # with input and output held constant, the gradient for dy must route ties exactly as the kernel does
    Case(K.MAX_POOL_GRAD,
         lambda dy: max_pool_grad(dy, tp.tensor(_x_ties, dy.dtype), tp.tensor(_y_ties, dy.dtype), 2, 1),
         (f64(_dy_ties),), f64(max_pool_grad_def(_dy_ties, _x_ties, (2, 2), (1, 1), VALID)), grad=True,
         name="ties-grad-dy"),
    Case(K.MAX_POOL_GRAD, lambda dy, x, y: max_pool_grad(dy, x, y, 2),
         (f32(np.ones((1, 1, 1, 1))), f64(np.ones((1, 2, 2, 1))), f32(np.ones((1, 1, 1, 1)))), raises=tp.DTypeError,
         match="dy, input and output must have one dtype", name="dtype-mismatch"),
    Case(K.MAX_POOL_GRAD, lambda dy, x, y: max_pool_grad(dy, x, y, 2),
         (f32(np.ones((1, 1, 1, 1))), f32(np.ones((1, 2, 2, 1))), f32(np.ones((1, 2, 2, 1)))), raises=tp.ShapeError,
         match=r"output float32\[1, 2, 2, 1\] must have the pooled shape", name="output-mismatch"),
]  # fmt: skip

# -- AvgPool and AvgPoolGrad -------------------------------------------------------------

_x_ap = normal(2, 4, 5, 2)  # 3x3 windows, stride 1, "same": pads (1, 1) both ways
_x_ape = normal(1, 5, 6, 2)  # 2x3 windows, strides (1, 2), pads ((1, 0), (1, 1))

AVG_POOL = [
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 2), (_x_pool,), f32([[[[3.25], [4.25]], [[4.5], [3.0]]]]), name="hand"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 3, 1, "same"), (f32(np.ones((1, 3, 3, 1))),), f32(np.ones((1, 3, 3, 1))),
         name="padding-not-counted"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 3, 1, "same"), (f64(_x_ap),),
         f64(avg_pool_def(_x_ap, (3, 3), (1, 1), ((1, 1), (1, 1)))), grad=True, name="same"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, (2, 3), (1, 2), [[1, 0], [1, 1]]), (f32(_x_ape),),
         f32(avg_pool_def(_x_ape, (2, 3), (1, 2), ((1, 0), (1, 1)))), rtol=1e-5, atol=1e-6, grad=True,
         name="explicit-pad-float32"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 2, 1), (i32(_x_mpi.reshape(1, 3, 3, 1)),),
         f32([[[[2.5], [3.0]], [[4.5], [4.75]]]]), name="int32-gives-float32"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 2), (f32([[[[math.nan], [1.0], [2.0], [4.0]],
                                                         [[1.0], [1.0], [math.inf], [0.0]]]]),),
         f32([[[[math.nan], [math.inf]]]]), name="nan-inf"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 2), (f32(np.zeros((0, 4, 4, 3))),), f32(np.zeros((0, 2, 2, 3))),
         name="empty-batch"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 2), (np.ones((1, 2, 2, 1), dtype=np.bool_),), raises=tp.DTypeError,
         match="avg_pool: expects a numeric tensor, got bool", name="bool"),
    Case(K.AVG_POOL, lambda x: tp.avg_pool(x, 2, pad="SAME"), (f32(np.ones((1, 2, 2, 1))),),
         raises=tp.TensorplugError, match="pad must be 'valid', 'same'", name="bad-pad"),
]  # fmt: skip

_dy_apg = normal(2, 4, 5, 2)  # 3x3 windows, stride 1, "same" over (2, 4, 5, 2): pads (1, 1) both ways

AVG_POOL_GRAD = [
    Case(K.AVG_POOL_GRAD, lambda dy, x: avg_pool_grad(dy, x, 2), (f32([[[[1.0], [2.0]]]]), f32(np.ones((1, 2, 4, 1)))),
         f32([[[[0.25], [0.25], [0.5], [0.5]], [[0.25], [0.25], [0.5], [0.5]]]]), name="hand"),
    Case(K.AVG_POOL_GRAD, lambda dy, x: avg_pool_grad(dy, x, 3, 1, "same"), (f64(_dy_apg), f64(_x_ap)),
         f64(avg_pool_grad_def(_dy_apg, (2, 4, 5, 2), (3, 3), (1, 1), ((1, 1), (1, 1)))), grad=True,
         name="same-overlapping"),
    Case(K.AVG_POOL_GRAD, lambda dy, x: avg_pool_grad(dy, x, 2),
         (f32(np.ones((1, 2, 2, 1))), f32(np.ones((1, 2, 2, 1)))), raises=tp.ShapeError,
         match=r"dy float32\[1, 2, 2, 1\] must have the shape \(1, 1, 1, 1\)", name="dy-mismatch"),
    Case(K.AVG_POOL_GRAD, lambda dy, x: avg_pool_grad(dy, x, 2),
         (i32(np.ones((1, 1, 1, 1))), i32(np.ones((1, 2, 2, 1)))), raises=tp.DTypeError,
         match="avg_pool_grad: expects a float tensor", name="int"),
]  # fmt: skip

CASES: list[Case] = [
    *SOFTMAX,
    *CONV2D,
    *CONV2D_BACKPROP_INPUT,
    *CONV2D_BACKPROP_FILTER,
    *MAX_POOL,
    *MAX_POOL_GRAD,
    *AVG_POOL,
    *AVG_POOL_GRAD,
]
