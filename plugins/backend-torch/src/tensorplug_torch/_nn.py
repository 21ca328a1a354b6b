"""Torch kernels: nn family (NHWC at the interface, torch's NCHW inside).

Tensors cross into torch's NCHW layout by a permuted view, never a copy: an
NHWC tensor seen as NCHW has channels-last strides, which torch's
convolution and pooling kernels take as they are and keep in their results,
so permuting a result back gives a contiguous NHWC tensor.

The ops hand over explicit ((top, bottom), (left, right)) pads, which may be
asymmetric ("same" puts the extra row or column at the end); torch pads
symmetrically, so the symmetric part goes to torch's ``padding`` and only the
excess is padded explicitly (pooling also needs ``padding`` at most half the
window). The backward kernels work on the explicitly padded input and crop.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
import torch.nn.grad

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]


def softmax(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return torch.softmax(inputs["logits"], attrs["dim"])


# -- convolution -----------------------------------------------------------------


def conv2d(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, w = inputs["x"], inputs["filter"]
    if x.numel() == 0 or w.numel() == 0:  # sums over nothing (torch refuses some of these shapes)
        out_hw = _out_hw(x.shape, attrs["pad"], w.shape[:2], attrs["strides"], attrs["dilations"])
        return x.new_zeros((x.shape[0], *out_hw, w.shape[3]))
    padding, extra = _split_pads(attrs["pad"])
    y = F.conv2d(_pad(_nchw(x), extra), _oihw(w), stride=attrs["strides"], padding=padding, dilation=attrs["dilations"])
    return _nhwc(y)


def conv2d_backprop_input(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dy, w = inputs["dy"], inputs["filter"]
    n, h, width, c = attrs["input_shape"]
    if dy.numel() == 0 or w.numel() == 0 or n * h * width * c == 0:
        return dy.new_zeros((n, h, width, c))
    (top, bottom), (left, right) = attrs["pad"]
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    # the rows and columns past the last window (a stride's remainder) get no gradient: output_padding adds them
    rest = (h + top + bottom - (w.shape[0] - 1) * dh - 1) % sh, (width + left + right - (w.shape[1] - 1) * dw - 1) % sw
    padding, extra = _split_pads(attrs["pad"])
    dx = F.conv_transpose2d(
        _nchw(dy), _oihw(w), stride=(sh, sw), padding=padding, output_padding=rest, dilation=(dh, dw)
    )
    return _nhwc(_crop(dx, extra, h, width))


def conv2d_backprop_filter(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, dy = inputs["x"], inputs["dy"]
    fh, fw, cin, cout = attrs["filter_shape"]
    if x.numel() == 0 or dy.numel() == 0:
        return x.new_zeros((fh, fw, cin, cout))
    padding, extra = _split_pads(attrs["pad"])
    dw = torch.nn.grad.conv2d_weight(  # type: ignore[no-untyped-call]  # torch.nn.grad has no annotations
        _pad(_nchw(x), extra), (cout, cin, fh, fw), _nchw(dy), attrs["strides"], padding, attrs["dilations"]
    )
    return dw.permute(2, 3, 1, 0)


# -- pooling -----------------------------------------------------------------------


def max_pool(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Padding never wins (it is skipped, or the dtype's lowest value); NaN propagates (torch's pooling does)."""
    x, window = inputs["x"], attrs["filter_size"]
    if x.numel() == 0:  # torch pools no empty channels or rows; windows of padding alone hold its lowest value
        return x.new_full(_pooled_shape(x.shape, attrs), _lowest(x.dtype))
    if x.is_floating_point():
        padding, extra = _split_pads(attrs["pad"], window)
        xp = _pad(_nchw(x), extra, _lowest(x.dtype))
        return _nhwc(F.max_pool2d(xp, window, attrs["strides"], padding))
    # integers: CUDA pools floats only, and a float cannot hold every int64, so reduce a view of the windows
    ((top, bottom), (left, right)), (sh, sw) = attrs["pad"], attrs["strides"]
    xp = _pad(x, (0, 0, left, right, top, bottom), _lowest(x.dtype))
    return xp.unfold(1, window[0], sh).unfold(2, window[1], sw).amax((4, 5))  # [n, oh, ow, c, fh, fw] -> NHWC


def max_pool_grad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Each window's dy goes to the first maximum of the window (row-major), as TensorFlow.js.

    torch's max pooling keeps a window's maximum only when a later value is
    strictly greater, so its indices are the first maximum (on CPU and CUDA),
    the tie-breaking the numpy kernel gets from argmax. With several NaN in a
    window torch keeps the last NaN where numpy's argmax takes the first.
    """
    dy, x, window, strides = inputs["dy"], inputs["input"], attrs["filter_size"], attrs["strides"]
    if x.numel() == 0:
        return torch.zeros_like(x)
    padding, extra = _split_pads(attrs["pad"], window)
    xp = _pad(_nchw(x), extra, _lowest(x.dtype))
    _, indices = F.max_pool2d(xp, window, strides, padding, return_indices=True)
    # torch.ops.aten: the public functional API has no max-pooling backward; this is the one autograd runs
    dx = torch.ops.aten.max_pool2d_with_indices_backward(_nchw(dy), xp, window, strides, padding, 1, False, indices)
    return _nhwc(_crop(dx, extra, x.shape[1], x.shape[2]))


def avg_pool(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """The mean over each window's elements inside the input (padding is not counted)."""
    x, window, strides, pad = inputs["x"], attrs["filter_size"], attrs["strides"], attrs["pad"]
    if x.numel() == 0:  # torch pools no empty channels or rows; windows of padding alone average nothing
        return x.new_full(_pooled_shape(x.shape, attrs), float("nan"))
    padding, extra = _split_pads(pad, window)
    if not any(extra):  # torch's own pads are skipped by count_include_pad=False: one fused call
        return _nhwc(F.avg_pool2d(_nchw(x), window, strides, padding, count_include_pad=False))
    sums = F.avg_pool2d(_pad(_nchw(x), extra), window, strides, padding, divisor_override=1)
    return _nhwc(sums) / _counts(x, pad, window, strides)


def avg_pool_grad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    dy, x, window, strides, pad = inputs["dy"], inputs["input"], attrs["filter_size"], attrs["strides"], attrs["pad"]
    n, h, width, c = x.shape
    if x.numel() == 0:
        return torch.zeros_like(x)
    padding, extra = _split_pads(pad, window)
    # torch.ops.aten: the public functional API has no average-pooling backward; this is the one autograd runs.
    # CUDA's kernel gives wrong values for channels-last operands (an NHWC tensor seen as NCHW is one; autograd
    # through F.avg_pool2d is wrong there too), so on CUDA it gets NCHW copies.
    cuda = dy.is_cuda
    if not any(extra):
        grad, image = _nchw(dy), _nchw(x)
        if cuda:
            grad, image = grad.contiguous(), image.contiguous()
        dx = torch.ops.aten.avg_pool2d_backward(grad, image, window, strides, padding, False, False, None)
        return _nhwc(dx)
    share = _nchw(dy / _counts(x, pad, window, strides))
    if cuda:
        share = share.contiguous()
    padded = dy.new_empty(1).expand(n, c, h + extra[2] + extra[3], width + extra[0] + extra[1])  # only its shape
    dx = torch.ops.aten.avg_pool2d_backward(share, padded, window, strides, padding, False, True, 1)
    return _nhwc(_crop(dx, extra, h, width))


# -- layout, padding and window geometry -------------------------------------------------


def _nchw(x: Any) -> Any:
    return x.permute(0, 3, 1, 2)


def _nhwc(x: Any) -> Any:
    return x.permute(0, 2, 3, 1)


def _oihw(w: Any) -> Any:
    """A [fh, fw, in, out] filter as torch's [out, in, fh, fw]."""
    return w.permute(3, 2, 0, 1)


def _split_pads(pad: Pads, window: Pair | None = None) -> tuple[Pair, tuple[int, int, int, int]]:
    """``pad`` as torch's symmetric ``padding`` and the excess for F.pad (left, right, top, bottom).

    Pooling passes its ``window``: torch pools only with ``padding`` at most
    half the window, so larger pads go wholly to the explicit excess.
    """
    (top, bottom), (left, right) = pad
    ph, pw = min(top, bottom), min(left, right)
    if window is not None and (2 * ph > window[0] or 2 * pw > window[1]):
        ph = pw = 0
    return (ph, pw), (left - pw, right - pw, top - ph, bottom - ph)


def _pad(x: Any, extra: tuple[int, ...], value: float = 0.0) -> Any:
    return F.pad(x, extra, value=value) if any(extra) else x


def _crop(x: Any, extra: tuple[int, int, int, int], height: int, width: int) -> Any:
    """The [height, width] input inside an NCHW ``x`` padded by ``extra``."""
    left, _, top, _ = extra
    return x[:, :, top : top + height, left : left + width]


def _lowest(dtype: torch.dtype) -> float:
    """The padding value of max pooling: one that never wins (exact in a float: -2**31 and -2**63)."""
    return float("-inf") if dtype.is_floating_point else float(torch.iinfo(dtype).min)


def _out_hw(shape: Any, pad: Pads, window: Any, strides: Pair, dilations: Pair) -> Pair:
    (top, bottom), (left, right) = pad
    oh = (shape[1] + top + bottom - (window[0] - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (shape[2] + left + right - (window[1] - 1) * dilations[1] - 1) // strides[1] + 1
    return oh, ow


def _pooled_shape(shape: Any, attrs: dict[str, Any]) -> tuple[int, int, int, int]:
    oh, ow = _out_hw(shape, attrs["pad"], attrs["filter_size"], attrs["strides"], (1, 1))
    return shape[0], oh, ow, shape[3]


def _counts(x: Any, pad: Pads, window: Pair, strides: Pair) -> Any:
    """How many elements of NHWC ``x`` each pooling window covers (padding excluded), as [oh, ow, 1]."""
    out_hw = _out_hw(x.shape, pad, window, strides, (1, 1))
    spans = []
    for size, (lo, _), w, s, out in zip(x.shape[1:3], pad, window, strides, out_hw, strict=True):
        start = torch.arange(out, dtype=x.dtype, device=x.device) * s - lo
        spans.append(torch.clamp(start + w, max=size) - torch.clamp(start, min=0))
    return spans[0][:, None, None] * spans[1][:, None]
