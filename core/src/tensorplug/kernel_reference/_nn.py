"""Neural network kernels (NHWC)."""

from __future__ import annotations

from tensorplug.kernel_reference._entries import FLOAT, NUMERIC, Attr, Input, KernelEntry, Note, Output, function

_STRIDES = Attr("strides", "tuple[int, int]", "(height, width), positive", form="positive-pair")
_DILATIONS = Attr("dilations", "tuple[int, int]", "(height, width), positive", form="positive-pair")
_PAD = Attr("pad", "tuple[tuple[int, int], tuple[int, int]]", "explicit ((top, bottom), (left, right)) pads: the op "
            "resolves 'valid', 'same' (the extra pixel at the end, as TensorFlow), an int and TensorFlow.js's "
            "4-pair form", form="pads")  # fmt: skip
_WINDOW = Attr("filter_size", "tuple[int, int]", "the window (height, width), positive", form="positive-pair")
_NHWC = "NHWC: [batch, height, width, channels]"

ENTRIES = [
    KernelEntry(
        name="Softmax", family="nn", summary="exp(logits) normalised to sum to 1 along dim", ops=("tp.softmax",),
        inputs=(Input("logits", FLOAT),), attrs=(Attr("dim", "int", "one axis, non-negative", form="axis"),),
        outputs=(Output("like:logits", doc="the shape of logits"),),
        dtypes="logits are float32 or float64 (the op refuses other dtypes); y has their dtype",
        gradient="yes", grad_inputs=("logits",),
        notes=(Note("stable for large logits (shift by the maximum first)", ("large-is-stable",)),
               Note("a -inf logit gets 0; a NaN makes its row NaN", ("minus-inf", "nan")),
               Note("empty logits give an empty result", ("empty",))),
        grad=function("grad_softmax", outputs=(0,)),
    ),
    KernelEntry(
        name="Conv2D", family="nn", summary="2-D cross-correlation of x with filter (no flip, as TensorFlow)",
        ops=("tp.conv2d",),
        inputs=(Input("x", FLOAT, doc=_NHWC), Input("filter", FLOAT, doc="[fh, fw, in, out]")),
        attrs=(_STRIDES, _PAD, _DILATIONS, Attr("data_format", "str", "always 'NHWC'", form="nhwc")),
        outputs=(Output("like:x", doc="[batch, out_h, out_w, out], out_h = (h + top + bottom - ((fh - 1) * "
                        "dilation + 1)) // stride + 1"),),
        dtypes="x and filter are one float dtype (the op promotes them and refuses integers); y has it",
        gradient="yes", grad_inputs=("x", "filter"),
        notes=(Note("x is always 4-D (the op adds and removes a batch of one for 3-D inputs)", ("unbatched-same",)),
               Note("'same' padding puts the odd pixel at the end", ("same-stride2",)),
               Note("dilations space the filter taps", ("explicit-dilated",)),
               Note("an empty batch or no output channels give an empty result", ("empty-batch",
                                                                                 "no-out-channels"))),
        grad=function("grad_conv2d", saves=("x", "filter")),
    ),
    KernelEntry(
        name="Conv2DBackpropInput", family="nn", summary="the gradient of Conv2D for its input (conv2d_transpose)",
        ops=("tp.conv2d_transpose", "the gradient of tp.conv2d"),
        inputs=(Input("dy", FLOAT, doc="[batch, out_h, out_w, out]"), Input("filter", FLOAT, doc="[fh, fw, in, out]")),
        attrs=(Attr("input_shape", "tuple[int, ...]", "the 4-D NHWC shape of the result", form="nonnegative"),
               _STRIDES, _PAD, _DILATIONS),
        outputs=(Output("like:dy", doc="input_shape"),),
        dtypes="dy and filter are one float dtype; y has it", gradient="yes", grad_inputs=("dy", "filter"),
        notes=(Note("input pixels no window covers get 0", ("transpose-uncovered-edge",)),
               Note("an empty batch gives an empty result", ("empty-batch",))),
        grad=function("grad_conv2d_backprop_input", saves=("dy", "filter")),
    ),
    KernelEntry(
        name="Conv2DBackpropFilter", family="nn", summary="the gradient of Conv2D for its filter",
        ops=("the gradient of tp.conv2d",),
        inputs=(Input("x", FLOAT, doc=_NHWC), Input("dy", FLOAT, doc="[batch, out_h, out_w, out]")),
        attrs=(Attr("filter_shape", "tuple[int, ...]", "[fh, fw, in, out]: the result's shape", form="nonnegative"),
               _STRIDES, _PAD, _DILATIONS),
        outputs=(Output("like:x", doc="filter_shape"),),
        dtypes="x and dy are one float dtype; y has it", gradient="yes", grad_inputs=("x", "dy"),
        notes=(Note("an empty batch gives zeros", ("empty-batch",)),),
        grad=function("grad_conv2d_backprop_filter", saves=("x", "dy")),
    ),
    KernelEntry(
        name="MaxPool", family="nn", summary="the maximum of each window", ops=("tp.max_pool",),
        inputs=(Input("x", NUMERIC, doc=_NHWC),), attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:x", doc="[batch, out_h, out_w, channels]"),),
        dtypes="x is numeric (the op refuses bool); y has x's dtype", gradient="yes", grad_inputs=("x",),
        notes=(Note("padding never wins (the NumPy kernel pads with -inf, or the dtype's minimum for integers); pads "
                    "are smaller than the window (the op checks)", ("same-negative", "explicit-pad")),
               Note("NaN propagates", ("nan",)),
               Note("gradient: each window's dy goes to the first maximum (row-major) of the window, through "
                    "MaxPoolGrad", ())),
        grad=function("grad_max_pool", saves=("x",), outputs=(0,)),
    ),
    KernelEntry(
        name="MaxPoolGrad", family="nn", summary="the gradient of MaxPool: each window's dy to its first maximum",
        ops=("the gradient of tp.max_pool",),
        inputs=(Input("dy", FLOAT), Input("input", FLOAT, doc="MaxPool's x"), Input("output", FLOAT,
                                                                                   doc="MaxPool's y")),
        attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:dy", doc="the shape of input"),),
        dtypes="dy, input and output are one float dtype; y has it", gradient="yes", grad_inputs=("dy",),
        notes=(Note("ties: the first maximum of the window in row-major order takes all of its dy; overlapping "
                    "windows add up", ("tie-goes-to-first", "same-overlapping")),
               Note("gradient: linear in dy; zero for input and output", ("ties-grad-dy",))),
        grad=function("grad_max_pool_grad", saves=("input", "output")),
    ),
    KernelEntry(
        name="AvgPool", family="nn", summary="the mean of each window over its elements inside x",
        ops=("tp.avg_pool",),
        inputs=(Input("x", FLOAT, doc=_NHWC),), attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:x", doc="[batch, out_h, out_w, channels]"),),
        dtypes="x is float32 or float64 (the op casts integers to float32); y has x's dtype",
        gradient="yes", grad_inputs=("x",),
        notes=(Note("padding is not counted: a window's mean is over the elements inside x",
                    ("padding-not-counted", "same")),
               Note("NaN and inf propagate", ("nan-inf",))),
        grad=function("grad_avg_pool", saves=("x",)),
    ),
    KernelEntry(
        name="AvgPoolGrad", family="nn", summary="the gradient of AvgPool: each window's dy shared over its "
        "elements inside the input", ops=("the gradient of tp.avg_pool",),
        inputs=(Input("dy", FLOAT), Input("input", FLOAT, doc="AvgPool's x: only its shape matters")),
        attrs=(_WINDOW, _STRIDES, _PAD),
        outputs=(Output("like:dy", doc="the shape of input"),),
        dtypes="dy and input are one float dtype; y has it", gradient="yes", grad_inputs=("dy",),
        notes=(Note("padding not counted, overlapping windows add up", ("hand", "same-overlapping")),
               Note("gradient: linear in dy; zero for input", ())),
        grad=function("grad_avg_pool_grad", saves=("input",)),
    ),
]  # fmt: skip
