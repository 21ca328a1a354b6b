"""Gradient functions of the neural-network kernels (named by their kernel reference entries).

The convolution kernels are linear in each input, so each one's gradient is
another of the three (as in TensorFlow.js): second derivatives come for
free. Pooling gradients go through the MaxPoolGrad and AvgPoolGrad kernels,
whose own gradients pool ``ddx`` the way the forward kernel did.
"""

from __future__ import annotations

from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import cast, equal, max, mul, ones_like, reshape, sub, sum, tensor, zeros_like
from tensorplug.ops._nn import (
    avg_pool,
    avg_pool_grad,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    max_pool,
    max_pool_grad,
)

# -- softmax -------------------------------------------------------------------


def grad_softmax(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """dx = y * (dy - sum(dy * y, dim)), from the saved output y."""
    (y,) = saved
    return (mul(y, sub(dy, sum(mul(dy, y), attrs["dim"], keepdims=True))),)


# -- convolution ---------------------------------------------------------------


def _conv_attrs(attrs: dict[str, Any]) -> tuple[Any, Any, Any]:
    return attrs["strides"], attrs["pad"], attrs["dilations"]


def grad_conv2d(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    x, w = saved
    geometry = _conv_attrs(attrs)
    return (
        lambda: conv2d_backprop_input(dy, w, x.shape, *geometry),
        lambda: conv2d_backprop_filter(x, dy, w.shape, *geometry),
    )


def grad_conv2d_backprop_input(ddx: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """Conv2DBackpropInput(dy, w) is the transpose of conv2d(., w): its own transpose is conv2d again."""
    dy, w = saved
    geometry = _conv_attrs(attrs)
    return (
        lambda: conv2d(ddx, w, *geometry),
        lambda: conv2d_backprop_filter(ddx, dy, w.shape, *geometry),
    )


def grad_conv2d_backprop_filter(dw: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """Conv2DBackpropFilter(x, dy) is the transpose of conv2d(x, .): it pairs dy with conv2d(x, dw)."""
    x, dy = saved
    geometry = _conv_attrs(attrs)
    return (
        lambda: conv2d_backprop_input(dy, dw, x.shape, *geometry),
        lambda: conv2d(x, dw, *geometry),
    )


# -- pooling -------------------------------------------------------------------


def _pool_attrs(attrs: dict[str, Any]) -> tuple[Any, Any, Any]:
    return attrs["filter_size"], attrs["strides"], attrs["pad"]


def grad_max_pool(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    x, y = saved
    return (max_pool_grad(dy, x, y, *_pool_attrs(attrs)),)


def grad_avg_pool(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    (x,) = saved
    return (avg_pool_grad(dy, x, *_pool_attrs(attrs)),)


def _windows(x: Tensor, attrs: dict[str, Any]) -> Tensor:
    """The pooling windows of ``x`` as [n, oh, ow, fh * fw, c], zero where a window covers padding.

    A convolution with a one-hot filter gathers them (and is differentiable).
    """
    (fh, fw), channels = attrs["filter_size"], x.shape[3]
    taps = fh * fw
    one_hot = [
        [[[float(o == (i * fw + j) * channels + c) for o in range(taps * channels)] for c in range(channels)]
         for j in range(fw)]
        for i in range(fh)
    ]  # fmt: skip
    gathered = conv2d(x, tensor(one_hot, x.dtype), attrs["strides"], attrs["pad"])
    return reshape(gathered, (*gathered.shape[:3], taps, channels))


def grad_max_pool_grad(ddx: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any, Any]:
    """MaxPoolGrad is linear in dy: its transpose picks, in each window, ``ddx`` at the first maximum of x.

    The routing does not change under small moves of input or output, so their gradients are zero.
    """
    x, y = saved

    def d_dy() -> Tensor:
        if x.shape[3] == 0:
            return zeros_like(y)
        taps = attrs["filter_size"][0] * attrs["filter_size"][1]
        pooled = max_pool(x, *_pool_attrs(attrs))
        maxima = mul(
            cast(equal(_windows(x, attrs), reshape(pooled, (*pooled.shape[:3], 1, pooled.shape[3]))), x.dtype),
            _windows(ones_like(x), attrs),  # padding never wins
        )
        # rank the maxima of a window by tap, first highest, and keep the first
        rank = mul(maxima, tensor([[float(taps - t)] for t in range(taps)], x.dtype))
        first = mul(cast(equal(rank, max(rank, 3, keepdims=True)), x.dtype), maxima)
        return sum(mul(_windows(ddx, attrs), first), 3)

    return d_dy, lambda: zeros_like(x), lambda: zeros_like(y)


def grad_avg_pool_grad(ddx: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """AvgPoolGrad is the transpose of avg_pool (linear): its own transpose is avg_pool; input gives only a shape."""
    (x,) = saved
    return lambda: avg_pool(ddx, *_pool_attrs(attrs)), lambda: zeros_like(x)
