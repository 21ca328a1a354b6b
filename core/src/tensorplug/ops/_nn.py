"""Neural-network ops: softmax and its stable composites, 2-D convolutions and pooling (NHWC).

Convolution and pooling ops normalise their geometry before dispatch, so
every kernel gets canonical attrs: ``strides``, ``dilations`` and
``filter_size`` as pairs of positive ints, and ``pad`` as explicit
``((top, bottom), (left, right))`` pads worked out from "valid", "same", an
int or explicit pads, as TensorFlow.js's ``computeConv2DInfo`` does.

The kernels' own ops (``conv2d_backprop_input``, ``conv2d_backprop_filter``,
``max_pool_grad``, ``avg_pool_grad``) are here for the gradients and the
conformance cases; they are not re-exported as ``tp.*``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime._engine import dispatch
from tensorplug._runtime._errors import DTypeError, InvalidArgumentError, ShapeError
from tensorplug._runtime._registry import BUILTIN, GradientSpec
from tensorplug._runtime._state import no_grad, state
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._args import check_float, to_float
from tensorplug.ops._binary import mul, sub, where
from tensorplug.ops._convert import as_tensor
from tensorplug.ops._promote import promote_operands
from tensorplug.ops._record import record_gradient
from tensorplug.ops._reduction import max as max_
from tensorplug.ops._reduction import sum as sum_
from tensorplug.ops._shape import reshape
from tensorplug.ops._shapes import normalize_axes, normalize_axis, normalize_shape
from tensorplug.ops._unary import exp, identity, isfinite, log

__all__ = ["softmax", "log_sum_exp", "log_softmax", "conv2d", "conv2d_transpose", "max_pool", "avg_pool"]

Pair = tuple[int, int]
_MAX_INT32 = 2**31 - 1  # strides, dilations and windows past this overflow the backends' C ints
Pads = tuple[Pair, Pair]


def softmax(logits: Any, axis: int = -1) -> Tensor:
    """exp(logits) normalised to sum to 1 along ``axis``."""
    logits = as_tensor(logits)
    check_float("softmax", logits)
    dim = normalize_axis("softmax", axis, logits.ndim)
    return dispatch(K.SOFTMAX, {"logits": logits}, {"dim": dim})


def log_sum_exp(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """log(sum(exp(x), axis)), computed stably by subtracting the maximum first."""
    x = as_tensor(x)
    check_float("log_sum_exp", x)
    axes = normalize_axes("log_sum_exp", axis, x.ndim)
    if any(x.shape[a] == 0 for a in axes):  # the log of an empty sum: -inf, with nothing to shift by
        return log(sum_(exp(x), axes, keepdims))
    with no_grad():  # the shift is a constant: its gradient cancels exactly
        shift = max_(x, axes, keepdims=True)
        shift = where(isfinite(shift), shift, 0.0)  # an infinite maximum would give inf - inf: shift by 0 there
    shifted = sub(x, shift)
    result = log(sum_(exp(shifted), axes, keepdims=True)) + shift
    if keepdims:
        return result
    return reshape(result, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def log_softmax(logits: Any, axis: int = -1) -> Tensor:
    """log(softmax(logits)), computed stably as (x - max) - log(sum(exp(x - max)))."""
    logits = as_tensor(logits)
    check_float("log_softmax", logits)
    dim = normalize_axis("log_softmax", axis, logits.ndim)
    if logits.shape[dim] == 0:  # no logits along the axis: an empty result, nothing to normalise
        return identity(logits)
    if state.tape is None:  # nothing records here: the ops alone
        return _log_softmax(logits, dim)
    with no_grad():  # one record instead of the ops': the gradient below is that of their composition
        value = _log_softmax(logits, dim)
    return record_gradient(_LOG_SOFTMAX, {"logits": logits}, value, {"dim": dim})


def _log_softmax(logits: Tensor, dim: int) -> Tensor:
    shift = max_(logits, dim, keepdims=True)  # log_softmax does not change when every logit shifts
    shifted = sub(logits, shift)
    return sub(shifted, log(sum_(exp(shifted), dim, keepdims=True)))


def _log_softmax_gradient(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """dy - softmax(logits) * sum(dy) along the axis, with softmax(logits) as exp of the saved log-probabilities:
    written with ops, so differentiable again."""
    (log_probs,) = saved
    return (sub(dy, mul(exp(log_probs), sum_(dy, attrs["dim"], keepdims=True))),)


_LOG_SOFTMAX = GradientSpec(
    "LogSoftmax", _log_softmax_gradient, inputs_to_save=(), outputs_to_save=(0,), source=BUILTIN, replay=True
)
"""log_softmax as one record on the tape (as softmax cross-entropy is), not the six of its ops: a training step
records, and its backward pass walks, five records fewer. Its gradient depends on what it saves and the axis
alone, so backprop replays it from the gradient programs as it does a kernel's."""


# -- convolution ---------------------------------------------------------------


def conv2d(
    x: Any, filter: Any, strides: Any = 1, pad: Any = "valid", dilations: Any = 1, data_format: str = "NHWC"
) -> Tensor:
    """2-D convolution (cross-correlation, as in TensorFlow) of NHWC ``x`` with a [fh, fw, in, out] ``filter``.

    ``x`` is [batch, height, width, in] (or [height, width, in]); ``strides``
    and ``dilations`` are an int or a (height, width) pair; ``pad`` is
    "valid", "same", an int, or explicit ``[[top, bottom], [left, right]]``.

    >>> import tensorplug as tp
    >>> tp.conv2d(tp.ones((1, 5, 5, 3)), tp.ones((3, 3, 3, 8)), strides=2, pad="same").shape
    (1, 3, 3, 8)
    """
    x, filter = _float_operands("conv2d", x, filter)
    if data_format != "NHWC":
        raise InvalidArgumentError(
            f"conv2d: only data_format='NHWC' is supported, got {data_format!r}; "
            "move the channels last with tp.transpose(x, (0, 2, 3, 1))"
        )
    x4 = _nhwc("conv2d", "x", x)
    _check_filter("conv2d", filter, x4.shape[3], "the channels of x", describe(x))
    attrs, _ = _conv_geometry("conv2d", x4.shape, filter.shape[:2], strides, pad, dilations)
    out = dispatch(K.CONV2D, {"x": x4, "filter": filter}, {**attrs, "data_format": "NHWC"})
    return out if x.ndim == 4 else reshape(out, out.shape[1:])


def conv2d_transpose(x: Any, filter: Any, output_shape: Any, strides: Any = 1, pad: Any = "valid") -> Tensor:
    """The transpose of conv2d (its gradient with respect to its input), as TensorFlow.js's ``conv2dTranspose``.

    ``filter`` is [fh, fw, out, in] for ``x`` of [batch, height, width, in]
    (or [height, width, in]); ``output_shape`` is the shape of the result,
    [batch, height, width, out] (or [height, width, out]): a conv2d of it
    with the same ``filter``, ``strides`` and ``pad`` has the shape of ``x``.

    >>> import tensorplug as tp
    >>> tp.conv2d_transpose(tp.ones((1, 3, 3, 8)), tp.ones((3, 3, 4, 8)), (1, 6, 6, 4), 2, "same").shape
    (1, 6, 6, 4)
    """
    x, filter = _float_operands("conv2d_transpose", x, filter)
    x4 = _nhwc("conv2d_transpose", "x", x)
    shape = normalize_shape("conv2d_transpose", output_shape)
    if len(shape) != x.ndim:
        raise ShapeError(f"conv2d_transpose: output_shape {shape} must have {x.ndim} dimensions like x ({describe(x)})")
    out = _backprop_input("conv2d_transpose", x4, filter, shape if x.ndim == 4 else (1, *shape), strides, pad, 1)
    return out if x.ndim == 4 else reshape(out, out.shape[1:])


def conv2d_backprop_input(
    dy: Any, filter: Any, input_shape: Any, strides: Any = 1, pad: Any = "valid", dilations: Any = 1
) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input of ``input_shape``, given the output gradient ``dy``."""
    dy, filter = _float_operands("conv2d_backprop_input", dy, filter)
    shape = normalize_shape("conv2d_backprop_input", input_shape)
    return _backprop_input("conv2d_backprop_input", dy, filter, shape, strides, pad, dilations)


def conv2d_backprop_filter(
    x: Any, dy: Any, filter_shape: Any, strides: Any = 1, pad: Any = "valid", dilations: Any = 1
) -> Tensor:
    """The gradient of ``conv2d`` with respect to its filter of ``filter_shape``, given ``x`` and ``dy``."""
    op = "conv2d_backprop_filter"
    x, dy = _float_operands(op, x, dy)
    x = _nhwc(op, "x", x, batched=True)
    dy = _nhwc(op, "dy", dy, batched=True)
    shape = normalize_shape(op, filter_shape)
    if len(shape) != 4 or shape[2] != x.shape[3] or shape[3] != dy.shape[3]:
        raise ShapeError(
            f"{op}: filter_shape {shape} must be [fh, fw, in, out] with in = {x.shape[3]} (the channels of x, "
            f"{describe(x)}) and out = {dy.shape[3]} (the channels of dy, {describe(dy)})"
        )
    attrs, out_hw = _conv_geometry(op, x.shape, shape[:2], strides, pad, dilations)
    _check_dy(op, dy, (x.shape[0], *out_hw, shape[3]), f"a convolution of {describe(x)}")
    return dispatch(K.CONV2D_BACKPROP_FILTER, {"x": x, "dy": dy}, {"filter_shape": shape, **attrs})


def _backprop_input(
    op: str, dy: Tensor, filter: Tensor, shape: tuple[int, ...], strides: Any, pad: Any, dilations: Any
) -> Tensor:
    name = "x" if op == "conv2d_transpose" else "dy"
    dy = _nhwc(op, name, dy, batched=True)
    if len(shape) != 4:
        raise ShapeError(f"{op}: the input shape {shape} must be [batch, height, width, channels]")
    _check_filter(op, filter, shape[3], "the channels of the result", f"shape {shape}")
    if dy.shape[3] != filter.shape[3]:
        raise ShapeError(
            f"{op}: the filter's out-channels ({describe(filter)}, dimension 3) must match the channels of "
            f"{name} ({describe(dy)})"
        )
    attrs, out_hw = _conv_geometry(op, shape, filter.shape[:2], strides, pad, dilations)
    _check_dy(op, dy, (shape[0], *out_hw, filter.shape[3]), f"a convolution of shape {shape}", name)
    return dispatch(K.CONV2D_BACKPROP_INPUT, {"dy": dy, "filter": filter}, {"input_shape": shape, **attrs})


# -- pooling -------------------------------------------------------------------


def max_pool(x: Any, filter_size: Any, strides: Any = None, pad: Any = "valid") -> Tensor:
    """The maximum of each ``filter_size`` window of NHWC ``x`` (or HWC); the dtype is kept.

    ``filter_size`` and ``strides`` (the filter size by default) are an int
    or a (height, width) pair; ``pad`` is as for :func:`conv2d`, explicit
    pads smaller than the window. Padding never wins; NaN propagates.

    >>> import tensorplug as tp
    >>> tp.max_pool(tp.tensor([[[[1.0], [2.0]], [[4.0], [3.0]]]]), 2).tolist()
    [[[[4.0]]]]
    """
    x = _numeric("max_pool", x)
    x4 = _nhwc("max_pool", "x", x)
    attrs, _ = _pool_geometry("max_pool", x4.shape, filter_size, strides, pad)
    out = dispatch(K.MAX_POOL, {"x": x4}, attrs)
    return out if x.ndim == 4 else reshape(out, out.shape[1:])


def avg_pool(x: Any, filter_size: Any, strides: Any = None, pad: Any = "valid") -> Tensor:
    """The mean of each ``filter_size`` window of NHWC ``x`` (or HWC), over the window's elements inside the input.

    Arguments are as for :func:`max_pool`; padding is not counted, and
    integer inputs give float32 (as :func:`mean`).

    >>> import tensorplug as tp
    >>> tp.avg_pool(tp.tensor([[[[1.0], [2.0]], [[4.0], [3.0]]]]), 2).tolist()
    [[[[2.5]]]]
    """
    x = to_float(_numeric("avg_pool", x))
    x4 = _nhwc("avg_pool", "x", x)
    attrs, _ = _pool_geometry("avg_pool", x4.shape, filter_size, strides, pad)
    out = dispatch(K.AVG_POOL, {"x": x4}, attrs)
    return out if x.ndim == 4 else reshape(out, out.shape[1:])


def max_pool_grad(
    dy: Any, input: Any, output: Any, filter_size: Any, strides: Any = None, pad: Any = "valid"
) -> Tensor:
    """The gradient of ``max_pool`` for ``input``: each window's ``dy`` goes to the first maximum of the window."""
    op = "max_pool_grad"
    dy, input, output = as_tensor(dy), as_tensor(input), as_tensor(output)
    check_float(op, dy)
    if input.dtype != dy.dtype or output.dtype != dy.dtype:
        raise DTypeError(
            f"{op}: dy, input and output must have one dtype, got {describe(dy)}, {describe(input)} and "
            f"{describe(output)}"
        )
    input = _nhwc(op, "input", input, batched=True)
    attrs, out_hw = _pool_geometry(op, input.shape, filter_size, strides, pad)
    pooled = (input.shape[0], *out_hw, input.shape[3])
    _check_dy(op, dy, pooled, f"pooling {describe(input)}")
    if output.shape != pooled:
        raise ShapeError(f"{op}: output {describe(output)} must have the pooled shape {pooled}")
    return dispatch(K.MAX_POOL_GRAD, {"dy": dy, "input": input, "output": output}, attrs)


def avg_pool_grad(dy: Any, input: Any, filter_size: Any, strides: Any = None, pad: Any = "valid") -> Tensor:
    """The gradient of ``avg_pool`` for ``input`` (whose shape alone matters), given the output gradient ``dy``."""
    op = "avg_pool_grad"
    dy, input = as_tensor(dy), as_tensor(input)
    check_float(op, dy)
    if input.dtype != dy.dtype:
        raise DTypeError(f"{op}: dy and input must have one dtype, got {describe(dy)} and {describe(input)}")
    input = _nhwc(op, "input", input, batched=True)
    attrs, out_hw = _pool_geometry(op, input.shape, filter_size, strides, pad)
    _check_dy(op, dy, (input.shape[0], *out_hw, input.shape[3]), f"pooling {describe(input)}")
    return dispatch(K.AVG_POOL_GRAD, {"dy": dy, "input": input}, attrs)


# -- argument checks and window geometry -----------------------------------------


def _float_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Two float tensors of one dtype (float32 meeting float64 gives float64)."""
    a, b = as_tensor(a), as_tensor(b)
    check_float(op, a)
    check_float(op, b)
    return promote_operands(op, a, b)


def _numeric(op: str, x: Any) -> Tensor:
    t = as_tensor(x)
    if t.dtype == "bool":
        raise DTypeError(f"{op}: expects a numeric tensor, got {describe(t)}")
    return t


def _nhwc(op: str, name: str, x: Tensor, batched: bool = False) -> Tensor:
    """``x`` as a 4-D NHWC tensor: a 3-D HWC ``x`` gets a batch of one unless ``batched`` is required."""
    if x.ndim == 3 and not batched:
        return reshape(x, (1, *x.shape))
    if x.ndim != 4:
        wanted = "4-D [batch, height, width, channels]" + ("" if batched else " (or 3-D [height, width, channels])")
        raise ShapeError(f"{op}: {name} must be {wanted}, got {describe(x)}")
    return x


def _check_filter(op: str, filter: Tensor, channels: int, what: str, where: str) -> None:
    if filter.ndim != 4:
        raise ShapeError(f"{op}: filter must be 4-D [height, width, in, out], got {describe(filter)}")
    if filter.shape[0] < 1 or filter.shape[1] < 1:
        raise ShapeError(f"{op}: the filter's height and width must be at least 1, got {describe(filter)}")
    if filter.shape[2] != channels:
        raise ShapeError(
            f"{op}: the filter's in-channels ({describe(filter)}, dimension 2) must match {what} ({channels}, {where})"
        )


def _check_dy(op: str, dy: Tensor, shape: tuple[int, ...], source: str, name: str = "dy") -> None:
    if dy.shape != shape:
        raise ShapeError(f"{op}: {name} {describe(dy)} must have the shape {shape} of the output of {source}")


def _pair(op: str, name: str, value: Any) -> Pair:
    """An int or a (height, width) pair of positive ints, as a pair."""
    items = [value, value] if isinstance(value, int | np.integer) else value
    try:
        pair = tuple(operator.index(v) for v in items)
    except TypeError:
        pair = ()
    if len(pair) != 2 or any(isinstance(v, bool) or not 1 <= v <= _MAX_INT32 for v in items):
        raise InvalidArgumentError(
            f"{op}: {name} must be a positive int or a (height, width) pair of them, got {value!r}"
        )
    return pair[0], pair[1]


def _explicit_pads(op: str, pad: Any, in_hw: Pair, window: Pair, strides: Pair) -> Pads:
    """``pad`` as ((top, bottom), (left, right)); "same" splits the padding as TensorFlow does (more at the end)."""
    if isinstance(pad, str):
        if pad == "valid":
            return (0, 0), (0, 0)
        if pad == "same":
            pads = []
            for size, w, s in zip(in_hw, window, strides, strict=True):
                total = max(0, (-(-size // s) - 1) * s + w - size)
                pads.append((total // 2, total - total // 2))
            return pads[0], pads[1]
    elif isinstance(pad, int | np.integer) and not isinstance(pad, bool):
        if pad >= 0:
            return (int(pad), int(pad)), (int(pad), int(pad))
    else:
        try:
            pairs = [tuple(operator.index(v) for v in pair) for pair in pad]
        except TypeError:
            pairs = []
        if len(pairs) == 4 and pairs[0] == pairs[3] == (0, 0):  # TensorFlow.js's explicit NHWC form
            pairs = pairs[1:3]
        if len(pairs) == 2 and all(len(p) == 2 and min(p) >= 0 for p in pairs):
            return (pairs[0][0], pairs[0][1]), (pairs[1][0], pairs[1][1])
    raise InvalidArgumentError(
        f"{op}: pad must be 'valid', 'same', a non-negative int, or explicit [[top, bottom], [left, right]] "
        f"pads (or TensorFlow.js's [[0, 0], [top, bottom], [left, right], [0, 0]]); got {pad!r}"
    )


def _window_geometry(
    op: str, shape: tuple[int, ...], window: Pair, strides: Pair, dilations: Pair, pad: Any
) -> tuple[Pads, Pair]:
    """The explicit pads and the output (height, width) of sliding ``window`` over NHWC ``shape``."""
    in_hw = (shape[1], shape[2])
    effective = ((window[0] - 1) * dilations[0] + 1, (window[1] - 1) * dilations[1] + 1)
    pads = _explicit_pads(op, pad, in_hw, effective, strides)
    out = []
    for size, (lo, hi), e, s in zip(in_hw, pads, effective, strides, strict=True):
        if size + lo + hi < e:
            dilated = f" (dilated to {effective[0]}x{effective[1]})" if dilations != (1, 1) else ""
            raise ShapeError(
                f"{op}: a {window[0]}x{window[1]} window{dilated} does not fit in the {in_hw[0]}x{in_hw[1]} "
                f"input (NHWC shape {shape}) padded by {pads}; use pad='same' or a smaller window"
            )
        out.append((size + lo + hi - e) // s + 1)
    return pads, (out[0], out[1])


def _conv_geometry(
    op: str, shape: tuple[int, ...], filter_hw: tuple[int, ...], strides: Any, pad: Any, dilations: Any
) -> tuple[dict[str, Any], Pair]:
    """The canonical attrs of a convolution over NHWC ``shape``, and its output (height, width)."""
    strides, dilations = _pair(op, "strides", strides), _pair(op, "dilations", dilations)
    pads, out_hw = _window_geometry(op, shape, (filter_hw[0], filter_hw[1]), strides, dilations, pad)
    return {"strides": strides, "pad": pads, "dilations": dilations}, out_hw


def _pool_geometry(
    op: str, shape: tuple[int, ...], filter_size: Any, strides: Any, pad: Any
) -> tuple[dict[str, Any], Pair]:
    """The canonical attrs of a pooling over NHWC ``shape``, and its output (height, width)."""
    window = _pair(op, "filter_size", filter_size)
    strides = window if strides is None else _pair(op, "strides", strides)
    pads, out_hw = _window_geometry(op, shape, window, strides, (1, 1), pad)
    for (lo, hi), w in zip(pads, window, strict=True):
        if lo >= w or hi >= w:
            raise ShapeError(
                f"{op}: padding {pads} must be smaller than the {window[0]}x{window[1]} window, "
                "so that every window overlaps the input"
            )
    return {"filter_size": window, "strides": strides, "pad": pads}, out_hw
