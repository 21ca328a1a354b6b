"""Reductions, linear algebra, shape and indexing, creation and neural-network kernels as ONNX operators.

Shapes are the trace's: attrs (a reshape's shape, a slice's bounds) are written as constants. Where ONNX
differs from the kernel reference, the converter composes operators that agree with it: NaN propagates
through Max, Min and the pooling, ArgMax and ArgMin pick the first NaN, OneHot gives off_value for a negative
index, UnsortedSegmentSum drops ids out of range, Range computes ``start + i * step`` in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug_onnx._elementwise import FLOAT32_ONLY, FLOATS
from tensorplug_onnx._graph import INT64_MIN, ONNX_TYPES, Converter, Graph, Refused, StepView

# -- reductions --------------------------------------------------------------------------------------------------


def _reduce(op_type: str, nan_propagates: bool = False) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        x, axes, keep, dtype = s.x("x"), s.attrs["axis"], int(s.attrs["keep_dims"]), s.dtype("x")
        if not axes:
            return str(g.op("Identity", x))
        if op_type in ("ReduceSum", "ReduceProd") and dtype == "int32":  # int32 wraps: in int64, cut back
            wide = g.op(op_type, g.cast(x, "int64"), g.ints(axes), keepdims=keep)
            return g.cast(wide, "int32")
        if op_type == "ReduceMean":  # the sum over the count: NaN over no elements (ONNX Runtime gives 0)
            sizes = g.op("Gather", g.op("Shape", x), g.ints(axes))
            count = g.cast(g.op("ReduceProd", sizes, g.ints([0]), keepdims=0), dtype)
            return str(g.op("Div", g.op("ReduceSum", x, g.ints(axes), keepdims=keep), count))
        value = g.op(op_type, x, g.ints(axes), keepdims=keep)
        if nan_propagates and s.dtype("x") in FLOATS:  # any NaN in the reduced elements gives NaN
            nans = g.op("ReduceMax", g.cast(g.op("IsNaN", x), "int32"), g.ints(axes), keepdims=keep)
            nan = g.const(np.nan, s.dtype("x"))
            return str(g.op("Where", g.cast(nans, "bool"), nan, value))
        return str(value)

    return convert


def _all_any(want_all: bool) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        x, axes, keep = s.x("x"), s.attrs["axis"], int(s.attrs["keep_dims"])
        if not axes:
            return str(g.op("Identity", x))
        counted = g.op("Not", x) if want_all else x  # All: no False; Any: some True (over no elements too)
        count = g.op("ReduceSum", g.cast(counted, "int64"), g.ints(axes), keepdims=keep)
        zero = g.const(0, "int64")
        return str(g.op("Equal", count, zero) if want_all else g.op("Greater", count, zero))

    return convert


def _arg(op_type: str) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        x, axis = s.x("x"), s.attrs["axis"]
        index = g.op(op_type, x, axis=axis, keepdims=0)
        if s.dtype("x") in FLOATS:  # NaN wins: the index of the first NaN
            nan = g.cast(g.op("IsNaN", x), "int32")
            first_nan = g.op("ArgMax", nan, axis=axis, keepdims=0)
            any_nan = g.cast(g.op("ReduceMax", nan, g.ints([axis]), keepdims=0), "bool")
            index = g.op("Where", any_nan, first_nan, index)
        return g.cast(index, "int32")

    return convert


def _cumsum(g: Graph, s: StepView) -> str:
    axis = g.const(s.attrs["axis"], "int64")
    return str(g.op("CumSum", s.x("x"), axis, exclusive=int(s.attrs["exclusive"]), reverse=int(s.attrs["reverse"])))


def _cumprod(g: Graph, s: StepView) -> str:
    """ONNX has no cumulative product: the running product of the axis's slices, one Mul each (size static)."""
    x, axis, dtype = s.x("x"), s.attrs["axis"], s.dtype("x")
    n = s.dim("x", axis)
    if n == 0:
        return str(g.op("Identity", x))
    if n > 1024:
        raise Refused(f"the axis has {n} elements; the export multiplies slice by slice, up to 1024")
    parts = g.op("Split", x, g.ints([1] * n), axis=axis, outputs=n) if n > 1 else [x]
    order = list(reversed(parts)) if s.attrs["reverse"] else list(parts)
    shape = list(s.shape("x"))
    shape[axis] = 1
    running = g.const(np.ones(shape), dtype)  # (the shape of a slice: fixed sizes only)
    results = []
    for part in order:
        if s.attrs["exclusive"]:
            results.append(running)
            running = g.op("Mul", running, part)
        else:
            running = g.op("Mul", running, part)
            results.append(running)
    if s.attrs["reverse"]:
        results.reverse()
    return str(g.op("Concat", *results, axis=axis) if len(results) > 1 else g.op("Identity", results[0]))


REDUCTION: dict[str, Converter] = {
    K.SUM: _reduce("ReduceSum"),
    K.PROD: _reduce("ReduceProd"),
    K.MEAN: _reduce("ReduceMean"),
    K.MAX: _reduce("ReduceMax", nan_propagates=True),
    K.MIN: _reduce("ReduceMin", nan_propagates=True),
    K.ALL: _all_any(want_all=True),
    K.ANY: _all_any(want_all=False),
    K.ARG_MAX: _arg("ArgMax"),
    K.ARG_MIN: _arg("ArgMin"),
    K.CUMSUM: _cumsum,
    K.CUMPROD: _cumprod,
}


# -- linear algebra ----------------------------------------------------------------------------------------------


def _swap_last(g: Graph, x: str, rank: int) -> str:
    perm = [*range(rank - 2), rank - 1, rank - 2]
    return str(g.op("Transpose", x, perm=perm))


def _matmul(g: Graph, s: StepView) -> str:
    a, b = s.x("a"), s.x("b")
    if s.attrs["transpose_a"]:
        a = _swap_last(g, a, s.rank("a"))
    if s.attrs["transpose_b"]:
        b = _swap_last(g, b, s.rank("b"))
    return str(g.op("MatMul", a, b))


def _einsum(g: Graph, s: StepView) -> str:
    """ONNX's Einsum does not broadcast a size-1 axis against the same label elsewhere: expand it first."""
    equation = s.attrs["equation"]
    terms = equation.split("->")[0].split(",")
    traced = s.traced_shapes("tensors")
    sizes: dict[str, int] = {}
    for term, (shape, _) in zip(terms, traced, strict=True):
        for label, n in zip(term, shape, strict=True):
            sizes[label] = max(sizes.get(label, 1), n) if n != 0 else 0
    dynamic = {term[axis] for term, (_, axes) in zip(terms, traced, strict=True) for axis in axes}
    operands = []
    for value, term, (shape, axes) in zip(s.xs("tensors"), terms, traced, strict=True):
        full = [sizes[label] for label in term]
        if list(shape) == full:
            operands.append(value)
            continue
        for axis, label in enumerate(term):
            if axis in axes:
                full[axis] = 1  # Expand keeps the operand's own (dynamic) size there
            elif label in dynamic and shape[axis] != full[axis]:
                s.shapes("tensors")  # stretching it to a dynamic size: refused, naming the axis
        operands.append(g.op("Expand", value, g.ints(full)))
    return str(g.op("Einsum", *operands, equation=equation))


LINALG: dict[str, Converter] = {
    K.BATCH_MAT_MUL: _matmul,
    K.EINSUM: _einsum,
}


# -- shape and indexing ------------------------------------------------------------------------------------------


def _reverse(g: Graph, x: str, axes: list[int]) -> str:
    k = len(axes)
    return str(g.op("Slice", x, g.ints([-1] * k), g.ints([INT64_MIN] * k), g.ints(axes), g.ints([-1] * k)))


def _slice(g: Graph, s: StepView) -> str:
    x, begin, size = s.x("x"), s.attrs["begin"], s.attrs["size"]
    if not begin:
        return str(g.op("Identity", x))
    ends = [b + n for b, n in zip(begin, size, strict=True)]
    return str(g.op("Slice", x, g.ints(begin), g.ints(ends), g.ints(range(len(begin)))))


def _strided_slice(g: Graph, s: StepView) -> str:
    x, a = s.x("x"), s.attrs
    slices: list[tuple[int, int, int, int]] = []  # (start, end, axis of x, step)
    shrink: list[int] = []
    new_axes: list[int] = []
    axis = position = 0  # axis of x; axis of the result
    for i, (b, e, st) in enumerate(zip(a["begin"], a["end"], a["strides"], strict=True)):
        if a["new_axis_mask"] >> i & 1:
            new_axes.append(position)
            position += 1
            continue
        if a["shrink_axis_mask"] >> i & 1:
            slices.append((b, b + 1, axis, 1))
            shrink.append(axis)
        else:
            through_zero = st < 0 and a["end_mask"] >> i & 1
            slices.append((b, INT64_MIN if through_zero else e, axis, st))
            position += 1
        axis += 1
    starts, ends, axes, steps = (list(column) for column in zip(*slices, strict=True)) if slices else ([], [], [], [])
    value = x
    if axes:
        value = g.op("Slice", x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps))
    if shrink:
        value = g.op("Squeeze", value, g.ints(shrink))
    if new_axes:
        value = g.op("Unsqueeze", value, g.ints(new_axes))
    return str(value if value != x else g.op("Identity", x))


def _pad(g: Graph, s: StepView) -> str:
    x, paddings = s.x("x"), s.attrs["paddings"]
    if not paddings:
        return str(g.op("Identity", x))
    pads = [p[0] for p in paddings] + [p[1] for p in paddings]
    return str(g.op("Pad", x, g.ints(pads), g.const(s.attrs["constant_value"], s.dtype("x")), mode="constant"))


def _mirror_pad(g: Graph, s: StepView) -> str:
    x, paddings = s.x("x"), s.attrs["paddings"]
    if not paddings:
        return str(g.op("Identity", x))
    if s.attrs["mode"] == "reflect":
        pads = [p[0] for p in paddings] + [p[1] for p in paddings]
        return str(g.op("Pad", x, g.ints(pads), mode="reflect"))
    value = x  # symmetric: each axis joined with its mirrored ends (the edge repeated)
    for axis, (before, after) in enumerate(paddings):
        if before == after == 0:
            continue
        parts = []
        if before:
            head = g.op("Slice", value, g.ints([0]), g.ints([before]), g.ints([axis]))
            parts.append(_reverse(g, head, [axis]))
        parts.append(value)
        if after:
            n = s.dim("x", axis)
            tail = g.op("Slice", value, g.ints([n - after]), g.ints([n]), g.ints([axis]))
            parts.append(_reverse(g, tail, [axis]))
        value = g.op("Concat", *parts, axis=axis)
    return str(value if value != x else g.op("Identity", x))


def _pack(g: Graph, s: StepView) -> str:
    axis = g.ints([s.attrs["axis"]])
    parts = [g.op("Unsqueeze", t, axis) for t in s.xs("tensors")]
    return str(g.op("Concat", *parts, axis=s.attrs["axis"]))


def _unpack(g: Graph, s: StepView) -> list[str]:
    num, axis = s.attrs["num"], s.attrs["axis"]
    if num == 0:
        return []
    parts = g.op("Split", s.x("value"), g.ints([1] * num), axis=axis, outputs=num) if num > 1 else [s.x("value")]
    return [str(g.op("Squeeze", p, g.ints([axis]))) for p in parts]


def _split(g: Graph, s: StepView) -> list[str]:
    sizes, axis = s.attrs["size_splits"], s.attrs["axis"]
    if len(sizes) == 1:
        return [str(g.op("Identity", s.x("x")))]
    return list(g.op("Split", s.x("x"), g.ints(sizes), axis=axis, outputs=len(sizes)))


def _gather(g: Graph, s: StepView) -> str:
    x, indices, axis, batch = s.x("x"), s.x("indices"), s.attrs["axis"], s.attrs["batch_dims"]
    if batch == 0:
        return str(g.op("Gather", x, indices, axis=axis))
    rank, index_rank = s.rank("x"), s.rank("indices")
    moved = x
    if axis != batch:  # bring axis next to the batch axes, gather pairwise, put the skipped axes back in front
        perm = [*range(batch), axis, *range(batch, axis), *range(axis + 1, rank)]
        moved = g.op("Transpose", x, perm=perm)
    picked = g.op("GatherND", moved, g.op("Unsqueeze", g.cast(indices, "int64"), g.ints([-1])), batch_dims=batch)
    if axis == batch:
        return str(picked)
    # picked: batch + indices[batch:] + x[batch:axis] + x[axis+1:]; wanted: batch + x[batch:axis] + indices[batch:]
    k, m = index_rank - batch, axis - batch
    perm = [*range(batch), *range(batch + k, batch + k + m), *range(batch, batch + k)]
    perm += list(range(batch + k + m, rank - 1 + k))
    return str(g.op("Transpose", picked, perm=perm))


def _gather_nd(g: Graph, s: StepView) -> str:
    params, indices = s.x("params"), s.x("indices")
    if s.dim("indices", -1) == 0:  # an index depth of 0 takes all of params, for each index
        lead = s.rank("indices") - 1
        reshaped = g.op("Reshape", params, g.ints([1] * lead + list(s.shape("params"))), allowzero=1)
        return str(g.op("Expand", reshaped, g.ints(s.out_shape())))
    return str(g.op("GatherND", params, g.cast(indices, "int64")))


def _zeros(g: Graph, shape: tuple[int, ...] | str, dtype: str) -> str:
    value = np.zeros(1, dtype=np.dtype(dtype))
    from onnx import numpy_helper

    shape_value = shape if isinstance(shape, str) else g.ints(shape)
    return str(g.op("ConstantOfShape", shape_value, value=numpy_helper.from_array(value)))


def _scatter_nd(g: Graph, s: StepView) -> str:
    zeros = _zeros(g, tuple(s.attrs["shape"]), s.dtype("updates"))
    return str(g.op("ScatterND", zeros, g.cast(s.x("indices"), "int64"), s.x("updates"), reduction="add"))


def _segment_sum(g: Graph, s: StepView) -> str:
    x, ids, n, dtype = s.x("x"), s.x("segment_ids"), s.attrs["num_segments"], s.dtype("x")
    if n == 0:
        return _zeros(g, s.out_shape(), dtype)
    id_type, id_rank, rank = s.dtype("segment_ids"), s.rank("segment_ids"), s.rank("x")
    valid = g.op(
        "And",
        g.op("GreaterOrEqual", ids, g.const(0, id_type)),
        g.op("Less", ids, g.const(n, id_type)),
    )
    safe_ids = g.op("Where", valid, ids, g.const(0, id_type))  # ids out of range add 0 to segment 0
    mask = g.op("Unsqueeze", valid, g.ints(range(id_rank, rank))) if rank > id_rank else valid
    kept = g.op("Where", mask, x, g.const(0, dtype))
    zeros = _zeros(g, s.out_shape(), dtype)
    index = g.op("Unsqueeze", g.cast(safe_ids, "int64"), g.ints([-1]))
    return str(g.op("ScatterND", zeros, index, kept, reduction="add"))


def _select(g: Graph, s: StepView) -> str:
    c, t, e = s.x("condition"), s.x("t"), s.x("e")
    if s.dtype("t") == "bool":  # ONNX Runtime has no bool Where
        return str(g.op("Or", g.op("And", c, t), g.op("And", g.op("Not", c), e)))
    return str(g.op("Where", c, t, e))


def _one_hot(g: Graph, s: StepView) -> str:
    indices, depth, dtype = s.x("indices"), s.attrs["depth"], s.attrs["dtype"]
    positions = g.const(np.arange(depth), s.dtype("indices"))
    hot = g.op("Equal", g.op("Unsqueeze", indices, g.ints([-1])), positions)  # a negative index is off everywhere
    on, off = g.const(s.attrs["on_value"], dtype), g.const(s.attrs["off_value"], dtype)
    if dtype == "bool":
        return str(g.op("Or", g.op("And", hot, on), g.op("And", g.op("Not", hot), off)))
    return str(g.op("Where", hot, on, off))


def _like(value: int) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        from onnx import numpy_helper

        fill = numpy_helper.from_array(np.full(1, value, dtype=np.dtype(s.dtype("x"))))
        return str(g.op("ConstantOfShape", g.op("Shape", s.x("x")), value=fill))

    return convert


def _fill(g: Graph, s: StepView) -> str:
    from onnx import numpy_helper

    value = numpy_helper.from_array(np.full(1, s.attrs["value"], dtype=np.dtype(s.attrs["dtype"])))
    return str(g.op("ConstantOfShape", g.ints(s.attrs["shape"]), value=value))


def _range(g: Graph, s: StepView) -> str:
    a, dtype = s.attrs, s.attrs["dtype"]
    if dtype not in FLOATS:
        return str(g.op("Range", g.const(a["start"], dtype), g.const(a["stop"], dtype), g.const(a["step"], dtype)))
    count = s.out_shape()[0]  # start + i * step in float64, rounded once (ONNX's Range adds step repeatedly)
    steps = g.cast(g.op("Range", g.const(0, "int64"), g.const(count, "int64"), g.const(1, "int64")), "float64")
    value = g.op("Add", g.const(a["start"], "float64"), g.op("Mul", g.const(a["step"], "float64"), steps))
    return value if dtype == "float64" else g.cast(value, dtype)


def _reshape(g: Graph, s: StepView) -> str:
    """The target shape, with -1 at the axis that grows with a dynamic axis (the size the rest leaves)."""
    shape = list(s.attrs["shape"])
    dynamic = g.request.dynamic.get(s.step.outputs[0], {})
    if not dynamic:
        return str(g.op("Reshape", s.x("x"), g.ints(shape), allowzero=1))
    if len(dynamic) > 1 or 0 in shape:
        axes = ", ".join(f"{axis} ({symbol})" for axis, symbol in dynamic.items())
        raise Refused(
            f"its result {tuple(shape)} has {'a size 0 besides ' if 0 in shape else ''}the dynamic axes {axes}: "
            "ONNX's Reshape infers one size only (-1); keep one dynamic axis in the result"
        )
    (axis,) = dynamic
    shape[axis] = -1
    return str(g.op("Reshape", s.x("x"), g.ints(shape)))


def _top_k(g: Graph, s: StepView) -> list[str]:
    x, k = s.x("x"), s.attrs["k"]  # ties to the lower index, as the kernel (ONNX Runtime ranks NaN first too)
    values, indices = g.op("TopK", x, g.ints([k]), axis=-1, largest=1, sorted=1, outputs=2)
    return [str(values), g.cast(indices, "int32")]


def _cast(g: Graph, s: StepView) -> str:
    return g.cast(s.x("x"), s.attrs["dtype"])


SHAPE: dict[str, Converter] = {
    K.RESHAPE: _reshape,
    K.TRANSPOSE: lambda g, s: g.op("Transpose", s.x("x"), perm=list(s.attrs["perm"])),
    K.BROADCAST_TO: lambda g, s: g.op("Expand", s.x("x"), g.ints(s.attrs["shape"])),
    K.CONCAT: lambda g, s: g.op("Concat", *s.xs("tensors"), axis=s.attrs["axis"]),
    K.PACK: _pack,
    K.UNPACK: _unpack,
    K.SLICE: _slice,
    K.STRIDED_SLICE: _strided_slice,
    K.PAD_V2: _pad,
    K.MIRROR_PAD: _mirror_pad,
    K.TILE: lambda g, s: g.op("Tile", s.x("x"), g.ints(s.attrs["reps"])),
    K.REVERSE: lambda g, s: (
        _reverse(g, s.x("x"), list(s.attrs["dims"])) if s.attrs["dims"] else g.op("Identity", s.x("x"))
    ),
    K.GATHER_V2: _gather,
    K.GATHER_ND: _gather_nd,
    K.SCATTER_ND: _scatter_nd,
    K.UNSORTED_SEGMENT_SUM: _segment_sum,
    K.SPLIT_V: _split,
    K.SELECT: _select,
    K.ONE_HOT: _one_hot,
    K.CAST: _cast,
    K.IDENTITY: lambda g, s: g.op("Identity", s.x("x")),
    K.ZEROS_LIKE: _like(0),
    K.ONES_LIKE: _like(1),
    K.FILL: _fill,
    K.RANGE: _range,
    K.TOP_K: _top_k,
}


# -- neural network (NHWC) ---------------------------------------------------------------------------------------

TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def _float32_only(s: StepView, name: str, op_type: str) -> None:
    if s.dtype(name) != "float32":
        raise Refused(FLOAT32_ONLY.format(op=op_type))


def _window_attrs(s: StepView) -> dict[str, Any]:
    (top, bottom), (left, right) = s.attrs["pad"]
    return {"strides": list(s.attrs["strides"]), "pads": [top, left, bottom, right]}


def _conv2d(g: Graph, s: StepView) -> str:
    _float32_only(s, "x", "Conv")
    x = g.op("Transpose", s.x("x"), perm=TO_NCHW)
    w = g.op("Transpose", s.x("filter"), perm=[3, 2, 0, 1])  # [fh, fw, in, out] -> [out, in, fh, fw]
    y = g.op("Conv", x, w, dilations=list(s.attrs["dilations"]), **_window_attrs(s))
    return str(g.op("Transpose", y, perm=TO_NHWC))


def _conv2d_transpose(g: Graph, s: StepView) -> str:
    _float32_only(s, "dy", "ConvTranspose")
    fh, fw = s.dim("filter", 0), s.dim("filter", 1)
    out_h, out_w = s.dim("dy", 1), s.dim("dy", 2)
    (top, bottom), (left, right) = s.attrs["pad"]
    (sh, sw), (dh, dw) = s.attrs["strides"], s.attrs["dilations"]
    height, width = s.attrs["input_shape"][1:3]
    extra_h = height - ((out_h - 1) * sh + (fh - 1) * dh + 1 - top - bottom)
    extra_w = width - ((out_w - 1) * sw + (fw - 1) * dw + 1 - left - right)
    if not (0 <= extra_h < max(sh, dh) and 0 <= extra_w < max(sw, dw)):
        raise Refused(f"ONNX's ConvTranspose cannot give the output shape {tuple(s.attrs['input_shape'])}")
    dy = g.op("Transpose", s.x("dy"), perm=TO_NCHW)
    w = g.op("Transpose", s.x("filter"), perm=[3, 2, 0, 1])  # [fh, fw, in, out] -> [out, in, fh, fw]
    y = g.op(
        "ConvTranspose",
        dy,
        w,
        dilations=[dh, dw],
        output_padding=[extra_h, extra_w],
        **_window_attrs(s),
    )
    return str(g.op("Transpose", y, perm=TO_NHWC))


def _pool(op_type: str) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        if op_type == "AveragePool":
            _float32_only(s, "x", op_type)
        else:
            s.only(FLOATS, "x", "ONNX's MaxPool takes float32 or float64, not integers")
        x = g.op("Transpose", s.x("x"), perm=TO_NCHW)
        extra: dict[str, Any] = {"count_include_pad": 0} if op_type == "AveragePool" else {}
        y = g.op(op_type, x, kernel_shape=list(s.attrs["filter_size"]), **_window_attrs(s), **extra)
        if op_type == "MaxPool":  # NaN propagates: a window holding one is NaN
            nans = g.op("MaxPool", g.cast(g.op("IsNaN", x), s.dtype("x")), kernel_shape=list(s.attrs["filter_size"]),
                        **_window_attrs(s))  # fmt: skip
            y = g.op("Where", g.cast(nans, "bool"), g.const(np.nan, s.dtype("x")), y)
        return str(g.op("Transpose", y, perm=TO_NHWC))

    return convert


NN: dict[str, Converter] = {
    K.SOFTMAX: lambda g, s: g.op("Softmax", s.x("logits"), axis=s.attrs["dim"]),
    K.CONV2D: _conv2d,
    K.CONV2D_BACKPROP_INPUT: _conv2d_transpose,
    K.MAX_POOL: _pool("MaxPool"),
    K.AVG_POOL: _pool("AveragePool"),
}

__all__ = ["LINALG", "NN", "ONNX_TYPES", "REDUCTION", "SHAPE"]
