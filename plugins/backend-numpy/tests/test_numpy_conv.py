"""The numpy backend's convolution and max-pooling kernels against loops written out pixel by pixel (float64).

The kernels choose among ways to compute one result: im2col copied tap by
tap (few channels) or in one copy (more), the input gradient of a stride-1
convolution as a convolution of the padded dy, or window contributions added
back tap by tap (other strides), max pooling's gradient tap by tap in
row-major order. Every choice must give what the loops give.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.ops._nn import conv2d_backprop_filter, conv2d_backprop_input, max_pool_grad

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]

# (channels in, channels out, filter, strides, dilations, ((top, bottom), (left, right)))
GEOMETRIES = [
    (1, 4, (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1))),  # few channels, "same"
    (9, 5, (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1))),  # more channels
    (9, 3, (3, 2), (1, 1), (2, 1), ((2, 3), (0, 1))),  # dilated, asymmetric pads
    (2, 3, (3, 3), (2, 2), (1, 1), ((0, 1), (1, 0))),  # strided
    (10, 2, (2, 3), (2, 1), (1, 2), ((0, 0), (0, 0))),
    (3, 2, (2, 2), (1, 1), (1, 1), ((3, 0), (0, 2))),  # pads wider than the window
]


def padded_shape(x: np.ndarray, pad: Pads) -> tuple[int, int, int, int]:
    (top, bottom), (left, right) = pad
    return x.shape[0], x.shape[1] + top + bottom, x.shape[2] + left + right, x.shape[3]


def positions(
    x_shape: tuple[int, ...], window: tuple[int, ...], strides: Pair, dilations: Pair
) -> Iterator[tuple[int, ...]]:
    """Each (output row, output column, tap row, tap column, input row, input column) of a padded input."""
    _, h, w, _ = x_shape
    oh = (h - (window[0] - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (w - (window[1] - 1) * dilations[1] - 1) // strides[1] + 1
    for y, x, i, j in itertools.product(range(oh), range(ow), range(window[0]), range(window[1])):
        yield y, x, i, j, y * strides[0] + i * dilations[0], x * strides[1] + j * dilations[1]


def looped(
    x: np.ndarray, w: np.ndarray, dy: np.ndarray, strides: Pair, dilations: Pair, pad: Pads
) -> tuple[np.ndarray, ...]:
    """Conv2D, its input gradient and its filter gradient, by loops in float64."""
    (top, _), (left, _) = pad
    xp = np.zeros(padded_shape(x, pad))
    xp[:, top : top + x.shape[1], left : left + x.shape[2]] = x
    y = np.zeros(dy.shape)
    dxp, dw = np.zeros(xp.shape), np.zeros(w.shape)
    for oy, ox, i, j, iy, ix in positions(xp.shape, w.shape[:2], strides, dilations):
        y[:, oy, ox] += xp[:, iy, ix] @ w[i, j]
        dxp[:, iy, ix] += dy[:, oy, ox] @ w[i, j].T
        dw[i, j] += xp[:, iy, ix].T @ dy[:, oy, ox]
    return y, dxp[:, top : top + x.shape[1], left : left + x.shape[2]], dw


@pytest.mark.parametrize(("cin", "cout", "window", "strides", "dilations", "pad"), GEOMETRIES)
def test_conv_kernels_give_what_loops_give(
    cin: int, cout: int, window: Pair, strides: Pair, dilations: Pair, pad: Pads
) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 7, 6, cin)).astype(np.float32)
    w = rng.standard_normal((*window, cin, cout)).astype(np.float32)
    y = tp.conv2d(x, w, strides, [list(pad[0]), list(pad[1])], dilations).numpy()
    dy = rng.standard_normal(y.shape).astype(np.float32)
    expected_y, expected_dx, expected_dw = looped(x, w, dy, strides, dilations, pad)
    explicit = [list(pad[0]), list(pad[1])]
    dx = conv2d_backprop_input(dy, w, x.shape, strides, explicit, dilations).numpy()
    dw = conv2d_backprop_filter(x, dy, w.shape, strides, explicit, dilations).numpy()
    for got, expected in ((y, expected_y), (dx, expected_dx), (dw, expected_dw)):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def looped_pool_grad(x: np.ndarray, dy: np.ndarray, window: Pair, strides: Pair, pad: Pads) -> np.ndarray:
    """Each window's dy to its first maximum (row-major; the first NaN where there is one), by loops."""
    (top, _), (left, _) = pad
    xp = np.full(padded_shape(x, pad), -np.inf)
    xp[:, top : top + x.shape[1], left : left + x.shape[2]] = x
    dxp = np.zeros(xp.shape)
    oh, ow = dy.shape[1:3]
    for n, oy, ox, c in itertools.product(range(x.shape[0]), range(oh), range(ow), range(x.shape[3])):
        rows, cols = oy * strides[0], ox * strides[1]
        values = xp[n, rows : rows + window[0], cols : cols + window[1], c].ravel()
        first = int(np.argmax(values))  # the first maximum, or the first NaN
        dxp[n, rows + first // window[1], cols + first % window[1], c] += dy[n, oy, ox, c]
    return dxp[:, top : top + x.shape[1], left : left + x.shape[2]]


@pytest.mark.parametrize(
    ("window", "strides", "pad"),
    [((2, 2), (2, 2), ((0, 0), (0, 0))), ((3, 3), (1, 1), ((1, 1), (1, 1))), ((3, 2), (2, 1), ((0, 1), (1, 0)))],
)
def test_max_pool_gradient_goes_to_the_first_maximum_as_loops_say(window: Pair, strides: Pair, pad: Pads) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(-2, 3, (2, 6, 5, 3)).astype(np.float32)  # many ties
    x[0, 1, 1, 0] = x[1, 4, 2, 2] = x[1, 4, 3, 2] = np.nan
    explicit = [list(pad[0]), list(pad[1])]
    y = tp.max_pool(x, window, strides, explicit)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = max_pool_grad(dy, x, y, window, strides, explicit).numpy()
    np.testing.assert_allclose(dx, looped_pool_grad(x, dy, window, strides, pad), rtol=1e-6, atol=1e-6)
    forward = np.zeros(y.shape)
    for n, oy, ox, c in itertools.product(*map(range, y.shape)):
        rows, cols = oy * strides[0] - pad[0][0], ox * strides[1] - pad[1][0]
        values = x[n, max(rows, 0) : rows + window[0], max(cols, 0) : cols + window[1], c]
        forward[n, oy, ox, c] = np.nan if np.isnan(values).any() else values.max()
    np.testing.assert_array_equal(y.numpy(), forward)
