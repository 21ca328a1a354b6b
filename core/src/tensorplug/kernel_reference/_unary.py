"""Elementwise unary kernels (input x)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorplug.kernel_reference._entries import (
    ALL,
    BOOL,
    ELEMENTWISE_SHAPE,
    FLOAT,
    NUMERIC,
    Attr,
    Grad,
    KernelEntry,
    Kink,
    Note,
    Output,
    Samples,
    _x,
    function,
    rule,
)

NAN, INF = math.nan, math.inf
# TensorFlow.js's selu constants (Klambauer et al., 2017).
SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def _unary(
    name: str,
    summary: str,
    dtypes: tuple[str, ...],
    *notes: Note,
    op: str,
    attrs: tuple[Attr, ...] = (),
    out: str = "like:x",
    gradient: str = "yes",
    dtype_rule: str = "",
    numpy: Callable[..., Any] | None = None,
    samples: Samples | None = None,
    grad: Grad | None = None,
    kinks: tuple[Kink, ...] = (),
    decomposition: str = "",
) -> KernelEntry:
    if not dtype_rule:
        if dtypes == FLOAT:
            dtype_rule = (
                "x is float32 or float64 (the op casts integer and bool tensors to float32 first); y has x's dtype"
            )
        elif out == "bool":
            dtype_rule = f"x is any of {', '.join(dtypes)}; y is bool"
        else:
            dtype_rule = f"x is any of {', '.join(dtypes)} (the op refuses bool); y has x's dtype"
    return KernelEntry(
        name=name,
        family="unary",
        summary=summary,
        ops=(op,),
        inputs=_x(dtypes),
        attrs=attrs,
        outputs=(Output(out, doc=ELEMENTWISE_SHAPE),),
        dtypes=dtype_rule,
        gradient=gradient,
        grad_inputs=("x",) if gradient != "none" else (),
        notes=notes,
        numpy=numpy,
        samples=samples,
        grad=grad,
        kinks=kinks,
        decomposition=decomposition,
    )


_NAN = Note("NaN in, NaN out; the cases' special values (±inf, ±0, the edges of the domain) are checked", ("special",))
_EMPTY = Note("an empty x gives an empty y; a 0-d x a 0-d y", ("empty", "scalar"))
_SUBNORMAL = Note(
    "a subnormal result is kept exactly; a backend declaring flush_to_zero may give zero instead", ("subnormal-result",)
)


_SAMPLES = Samples()


def _numeric(special: tuple[tuple[float, ...], tuple[float, ...]], grad_at: tuple[float, ...]) -> Samples:
    """Where a numeric kernel that keeps x's dtype is sampled: around its kinks and jumps, halves and whole numbers,
    and at ``grad_at`` (away from them) for the gradient check."""
    return Samples(special, (-7.5, -2.5, -1.5, -0.5, 0.0, 0.3, 1.5, 2.5, 6.0, 7.25), (-7, -1, 0, 2, 6, 9), grad_at)


def _floating(
    name: str,
    summary: str,
    *notes: Note,
    op: str,
    numpy: Callable[..., Any] | None = None,
    special: tuple[tuple[float, ...], tuple[float, ...]] = _SAMPLES.special,
    points: tuple[float, ...] = _SAMPLES.points,
    ints: tuple[int, ...] = _SAMPLES.ints,
    grad_at: tuple[float, ...] = _SAMPLES.grad,
    grad: Grad | None = None,
    kinks: tuple[Kink, ...] = (),
    decomposition: str = "",
) -> KernelEntry:
    """A floating-point kernel; given its ``numpy`` formula, the conformance suite builds its standard cases."""
    entry = _unary(
        name, summary, FLOAT, *notes, _NAN, _EMPTY, op=op, numpy=numpy, grad=grad, kinks=kinks,
        decomposition=decomposition,
    )  # fmt: skip
    if numpy is None:
        return entry
    return dataclasses.replace(entry, samples=Samples(special, points, ints, grad_at))


ENTRIES = [
    _unary("Abs", "|x|", NUMERIC, Note("abs(-0.0) is 0.0, abs(±inf) is inf", ("special",)), _EMPTY, op="tp.abs",
           grad=rule("mul(dy, sign(x))", saves="x"),
           kinks=(Kink((0.0,), (0.0,), "at 0 the gradient is 0 (dy times sign(x))"),),
           numpy=np.abs, samples=_numeric(((NAN, INF, -INF, -0.0), (NAN, INF, INF, 0.0)), (-1.3, 0.7, 2.1))),
    _floating("Acos", "inverse cosine, in [0, pi]", Note("NaN outside [-1, 1]", ("special",)), op="tp.acos",
              numpy=np.arccos,
              points=(-1.0, -0.5, 0.0, 0.25, 0.9, 1.0), ints=(-1, 0, 1), grad_at=(-0.6, 0.1, 0.7),
              special=((NAN, 1.5, -2.0, INF), (NAN, NAN, NAN, NAN)),
              grad=rule("div(neg(dy), sqrt(sub(1.0, square(x))))", saves="x")),
    _floating("Acosh", "inverse hyperbolic cosine", Note("NaN below 1", ("special",)), op="tp.acosh", numpy=np.arccosh,
              points=(1.0, 1.01, 1.5, 2.0, 10.0, 1e4), ints=(1, 2, 3), grad_at=(1.2, 2.0, 3.5),
              special=((NAN, 0.5, -1.0, INF), (NAN, NAN, NAN, INF)),
              grad=rule("div(dy, sqrt(sub(square(x), 1.0)))", saves="x")),
    _floating("Asin", "inverse sine, in [-pi/2, pi/2]", Note("NaN outside [-1, 1]", ("special",)), op="tp.asin",
              numpy=np.arcsin,
              points=(-1.0, -0.5, 0.0, 0.25, 0.9, 1.0), ints=(-1, 0, 1), grad_at=(-0.6, 0.1, 0.7),
              special=((NAN, 1.5, -2.0, INF), (NAN, NAN, NAN, NAN)),
              grad=rule("div(dy, sqrt(sub(1.0, square(x))))", saves="x")),
    _floating("Asinh", "inverse hyperbolic sine", op="tp.asinh",
              numpy=np.arcsinh, points=(-100.0, -0.5, 0.0, 1e-4, 1.0, 3.0),
              special=((NAN, INF, -INF), (NAN, INF, -INF)), grad=rule("div(dy, sqrt(add(square(x), 1.0)))", saves="x")),
    _floating("Atan", "inverse tangent, in (-pi/2, pi/2)", Note("atan(±inf) is ±pi/2", ("special",)), op="tp.atan",
              numpy=np.arctan,
              points=(-100.0, -1.0, 0.0, 0.25, 2.0, 1e8), grad_at=(-1.2, 0.3, 2.5),
              special=((NAN, INF, -INF), (NAN, math.pi / 2, -math.pi / 2)),
              grad=rule("div(dy, add(square(x), 1.0))", saves="x")),
    _floating("Atanh", "inverse hyperbolic tangent", Note("±inf at ±1, NaN outside [-1, 1]", ("special",)),
              op="tp.atanh", numpy=np.arctanh,
              points=(-0.99, -0.5, 0.0, 1e-4, 0.25, 0.9), ints=(0,), grad_at=(-0.6, 0.1, 0.7),
              special=((NAN, 1.0, -1.0, 2.0), (NAN, INF, -INF, NAN)),
              grad=rule("div(dy, sub(1.0, square(x)))", saves="x")),
    _floating("Cos", "cosine (radians)", Note("NaN at ±inf", ("special",)), op="tp.cos", numpy=np.cos,
              points=(-3.0, -1.0, 0.0, 0.5, 2.0, 10.0), grad_at=(-1.2, 0.3, 2.5),
              special=((NAN, INF, -INF), (NAN, NAN, NAN)), grad=rule("neg(mul(dy, sin(x)))", saves="x")),
    _floating("Cosh", "hyperbolic cosine", op="tp.cosh", numpy=np.cosh, points=(-5.0, -0.5, 0.0, 1e-4, 1.0, 20.0),
              special=((NAN, INF, -INF, -100.0), (NAN, INF, INF, INF)), grad=rule("mul(dy, sinh(x))", saves="x")),
    _floating("Elu", "x where x > 0, else expm1(x)",
              Note("computed with expm1 below 0, so tiny negative x keep their digits", ("near-zero",)), op="tp.elu",
              numpy=lambda x: np.where(x > 0, x, np.expm1(x)), grad_at=(-1.2, -0.3, 0.4, 1.5),
              special=((NAN, INF, -INF), (NAN, INF, -1.0)), grad=rule("grad_elu(dy, y)", saves="y"),
              decomposition="where(x > 0.0, x, expm1(x))"),
    _floating("Erf", "the error function",
              Note("accurate to float64 precision (relative error below 1e-15 in float64, subnormals included)",
                   ("float64-accuracy", "branches")), op="tp.erf", numpy=np.vectorize(math.erf, otypes=[float]),
              points=(-3.0, -0.5, 0.0, 0.1, 1.0, 4.5),
              special=((NAN, INF, -INF, 10.0, -0.0), (NAN, 1.0, -1.0, 1.0, -0.0)),
              grad=rule("mul(dy, mul(exp(neg(square(x))), TWO_OVER_SQRT_PI))", saves="x")),
    _floating("Exp", "e ** x", Note("exp(-inf) is 0, overflow gives inf", ("special",)), _SUBNORMAL, op="tp.exp",
              numpy=np.exp,
              points=(-3.0, -0.5, 0.0, 0.25, 1.0, 10.0),
              special=((NAN, INF, -INF, 100.0), (NAN, INF, 0.0, INF)), grad=rule("mul(dy, y)", saves="y")),
    _floating("Expm1", "e ** x - 1, accurate near 0", Note("accurate for tiny x", ("near-zero",)), op="tp.expm1",
              numpy=np.expm1,
              points=(-3.0, -1e-5, 0.0, 1e-7, 1.0, 5.0),
              special=((NAN, INF, -INF), (NAN, INF, -1.0)), grad=rule("mul(dy, exp(x))", saves="x")),
    _floating("HardSwish", "x * relu6(x + 3) / 6: 0 below -3, x above 3", op="tp.hard_swish",
              numpy=lambda x: x * np.clip(x + 3, 0, 6) / 6, points=(-5.0, -2.0, -0.5, 0.0, 1.0, 4.0),
              grad_at=(-4.0, -1.2, 0.3, 1.5, 4.0), special=((NAN, INF, -INF, -0.0), (NAN, INF, NAN, -0.0)),
              grad=rule("mul(dy, where(greater(x, -3.0), where(less_equal(x, 3.0), div(add(mul(x, 2.0), 3.0), 6.0), "
                        "1.0), 0.0))", saves="x"),
              kinks=(Kink((-3.0,), (0.0,), "at -3 the gradient is 0, the slope from the left"),
                     Kink((3.0,), (1.5,), "at 3 the gradient is 1.5 * dy, the slope from the left")),
              decomposition="x * relu6(x + 3.0) / 6.0"),
    _floating("Log", "natural logarithm", Note("log(0) is -inf, log of a negative is NaN", ("special",)),
              op="tp.log", numpy=np.log,
              points=(1e-3, 0.5, 1.0, 2.0, math.e, 1e6), ints=(1, 4, 9), grad_at=(0.4, 1.0, 3.5),
              special=((NAN, 0.0, -1.0, INF), (NAN, -INF, NAN, INF)), grad=rule("div(dy, x)", saves="x")),
    _floating("Log1p", "log(1 + x), accurate near 0", Note("-inf at -1, NaN below; accurate for tiny x",
                                                           ("special", "near-zero")), op="tp.log1p", numpy=np.log1p,
              points=(-0.5, -1e-6, 0.0, 1e-7, 1.0, 100.0), ints=(0, 1, 5), grad_at=(-0.4, 0.2, 3.0),
              special=((NAN, -1.0, -2.0, INF), (NAN, -INF, NAN, INF)), grad=rule("div(dy, add(x, 1.0))", saves="x")),
    _unary("Neg", "-x", NUMERIC, Note("NaN stays NaN, ±inf change sign", ("special",)),
           Note("subnormal inputs are negated exactly (a backend declaring flush_to_zero is not asked)",
                ("subnormal",)), _EMPTY,
           op="tp.neg (and -x)", grad=rule("neg(dy)"),
           numpy=lambda x: -x, samples=_numeric(((NAN, INF, -INF, 0.0), (NAN, -INF, INF, -0.0)), (-1.3, 0.7, 2.1))),
    _floating("Reciprocal", "1 / x", Note("1/±0 is ±inf, 1/±inf is ±0", ("special",)), op="tp.reciprocal",
              numpy=lambda x: 1 / x,
              points=(-4.0, -0.5, 0.1, 1.0, 3.0, 1e3), ints=(-2, 1, 4), grad_at=(-1.5, 0.4, 2.0),
              special=((NAN, 0.0, -0.0, INF, -INF), (NAN, INF, -INF, 0.0, -0.0)),
              grad=rule("neg(mul(dy, square(y)))", saves="y"), decomposition="1.0 / x"),
    _unary("Relu", "max(x, 0)", NUMERIC, Note("relu(NaN) is NaN", ("special",)), _EMPTY, op="tp.relu",
           grad=rule("grad_relu(dy, x)", saves="x"),
           kinks=(Kink((0.0,), (0.0,), "at 0 the gradient is 0: dy passes where x > 0"),),
           numpy=lambda x: np.maximum(x, 0), samples=_numeric(((NAN, INF, -INF), (NAN, INF, 0.0)), (-1.3, 0.7, 2.1))),
    _unary("Relu6", "min(max(x, 0), 6)", NUMERIC, Note("relu6(NaN) is NaN, relu6(inf) is 6", ("special",)), _EMPTY,
           op="tp.relu6", grad=rule("grad_relu6(dy, x)", saves="x"),
           kinks=(Kink((0.0,), (0.0,), "at 0 the gradient is 0: dy passes where 0 < x <= 6"),
                  Kink((6.0,), (1.0,), "at 6 the gradient is dy")),
           numpy=lambda x: np.clip(x, 0, 6), samples=_numeric(((NAN, INF, -INF, 6.0),
                                                               (NAN, 6.0, 0.0, 6.0)), (-1.3, 0.7, 5.2, 7.1)),
           decomposition="clip_by_value(x, 0, 6)"),
    _floating("Rsqrt", "1 / sqrt(x)", Note("inf at 0, NaN below 0, 0 at inf", ("special",)), op="tp.rsqrt",
              numpy=lambda x: 1 / np.sqrt(x),
              points=(0.01, 0.25, 1.0, 2.0, 9.0, 1e4), ints=(1, 4, 9), grad_at=(0.3, 1.0, 4.0),
              special=((NAN, 0.0, -1.0, INF), (NAN, INF, NAN, 0.0)), grad=rule("grad_rsqrt(dy, y)", saves="y"),
              decomposition="1.0 / sqrt(x)"),
    _floating("Selu", "scale * x where x > 0, else scale * alpha * expm1(x)",
              Note("TensorFlow.js's constants: scale 1.0507009873554805, alpha 1.6732632423543772; expm1 below 0",
                   ("float64", "near-zero")), op="tp.selu",
              numpy=lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)), grad_at=(-1.2, -0.3, 0.4, 1.5),
              special=((NAN, INF, -INF), (NAN, INF, -SELU_SCALE * SELU_ALPHA)),
              grad=rule("grad_selu(dy, x)", saves="x"),
              kinks=(Kink((0.0,), (SELU_SCALE * SELU_ALPHA,), "at 0 the gradient is scale * alpha * dy, the slope "
                                "from the left: dy * scale passes where x > 0"),),
              decomposition="where(x > 0.0, x * SELU_SCALE, expm1(x) * SELU_SCALE_ALPHA)"),
    _floating("Sigmoid", "1 / (1 + e ** -x)",
              Note("no overflow or cancellation for large |x|: sigmoid(-800) is 0 (or e**x), sigmoid(800) is 1",
                   ("no-overflow", "large-negative")), op="tp.sigmoid",
              numpy=lambda x: 1 / (1 + np.exp(-x)), points=(-10.0, -0.5, 0.0, 0.25, 1.0, 30.0),
              special=((NAN, INF, -INF, 100.0, -100.0), (NAN, 1.0, 0.0, 1.0, 0.0)),
              grad=rule("mul(dy, mul(y, sub(1.0, y)))", saves="y")),
    _floating("Sin", "sine (radians)", Note("NaN at ±inf", ("special",)), op="tp.sin", numpy=np.sin,
              points=(-3.0, -1.0, 0.0, 0.5, 2.0, 10.0), grad_at=(-1.2, 0.3, 2.5),
              special=((NAN, INF, -INF), (NAN, NAN, NAN)), grad=rule("mul(dy, cos(x))", saves="x")),
    _floating("Sinh", "hyperbolic sine", op="tp.sinh", numpy=np.sinh, points=(-5.0, -0.5, 0.0, 1e-4, 1.0, 20.0),
              special=((NAN, INF, -INF, 100.0), (NAN, INF, -INF, INF)), grad=rule("mul(dy, cosh(x))", saves="x")),
    # softplus(±100): 100 + log1p(e**-100) is 100 in float32; log1p(e**-100) = 3.7e-44 is 0
    _floating("Softplus", "log(1 + e ** x)",
              Note("no overflow: softplus(x) is x for large x and e**x for very negative x", ("large-magnitude",)),
              op="tp.softplus", numpy=lambda x: np.logaddexp(0.0, x),
              special=((NAN, INF, -INF, 100.0, -100.0, 1e30), (NAN, INF, 0.0, 100.0, 0.0, 1e30)),
              grad=rule("mul(dy, sigmoid(x))", saves="x")),
    _floating("Softsign", "x / (1 + |x|)",
              Note("±inf give NaN, as x / (1 + |x|) does in TensorFlow and PyTorch", ("special",)),
              op="tp.softsign", numpy=lambda x: x / (1 + abs(x)), points=(-20.0, -0.5, 0.0, 1e-4, 1.0, 1e6),
              special=((NAN, INF, -INF, 1e30, -0.0), (NAN, NAN, NAN, 1.0, -0.0)),
              grad=rule("div(dy, square(add(abs(x), 1.0)))", saves="x"), decomposition="x / (abs(x) + 1.0)"),
    _floating("Sqrt", "square root", Note("NaN below 0; sqrt(-0.0) is ±0", ("special",)), op="tp.sqrt", numpy=np.sqrt,
              points=(0.0, 0.01, 0.5, 2.0, 9.0, 1e4), ints=(1, 4, 9), grad_at=(0.3, 1.0, 4.0),
              special=((NAN, -1.0, INF, -0.0), (NAN, NAN, INF, 0.0)), grad=rule("div(dy, mul(y, 2.0))", saves="y")),
    _unary("Square", "x * x", NUMERIC, Note("NaN stays NaN, overflow gives inf", ("special",)), _EMPTY,
           op="tp.square", grad=rule("mul(dy, mul(x, 2.0))", saves="x"),
           numpy=lambda x: x * x, samples=_numeric(((NAN, INF, -INF, 1e20), (NAN, INF, INF, INF)), (-1.3, 0.7, 2.1)),
           decomposition="x * x"),
    _floating("Tan", "tangent (radians)", Note("NaN at ±inf", ("special",)), op="tp.tan", numpy=np.tan,
              points=(-1.5, -0.5, 0.0, 0.25, 1.0, 3.0), grad_at=(-1.2, 0.3, 1.0),
              special=((NAN, INF, -INF), (NAN, NAN, NAN)), grad=rule("mul(dy, add(square(y), 1.0))", saves="y")),
    _floating("Tanh", "hyperbolic tangent", Note("tanh(±inf) is ±1", ("special",)), op="tp.tanh",
              numpy=np.tanh, points=(-20.0, -0.5, 0.0, 1e-4, 1.0, 3.0),
              special=((NAN, INF, -INF), (NAN, 1.0, -1.0)), grad=rule("mul(dy, sub(1.0, square(y)))", saves="y")),
    _unary("LeakyRelu", "x where x >= 0, else alpha * x", FLOAT,
           Note("integer and bool x reach the kernel as float32", ("int32", "bool")), _NAN, _EMPTY,
           op="tp.leaky_relu", attrs=(Attr("alpha", "float", "the slope below 0 (any real, above 1 too)"),),
           grad=function("grad_leaky_relu", saves=("x",)),
           kinks=(Kink((0.0,), (0.2,), "at 0 the gradient is alpha * dy: dy passes where x > 0", args=(0.2,)),),
           decomposition="where(x >= 0.0, x, x * alpha)"),
    _unary("Step", "1 where x > 0, alpha elsewhere", NUMERIC,
           Note("alpha at 0 and -0.0; NaN stays NaN (also a NaN among many values)",
                ("default", "special", "special-default-alpha", "nan-among-many", "scalar-nan")),
           Note("for integer x, alpha is an int (the op refuses a fractional one)", ("int64-alpha",)),
           op="tp.step", gradient="zero",
           attrs=(Attr("alpha", "int | float", "the value at or below 0: a float for float x, an int for integer x"),),
           kinks=(Kink((0.0,), (0.0,), "zero everywhere, at the jump too"),)),
    _unary("ClipByValue", "x limited to [clip_value_min, clip_value_max]", NUMERIC,
           Note("bounds included; NaN stays NaN; min <= max (the op checks)", ("float32", "special", "equal-bounds")),
           Note("for integer x the bounds are ints, infinite or huge bounds clamped to the dtype's range by the op",
                ("int64-infinite-bound", "int32-bounds-beyond-range")), _EMPTY,
           op="tp.clip_by_value",
           attrs=(Attr("clip_value_min", "int | float", "a float for float x, an int (within x's range) for integer x"),
                  Attr("clip_value_max", "int | float", "as clip_value_min")),
           grad=function("grad_clip_by_value", saves=("x",)),
           kinks=(Kink((-1.0,), (1.0,), "at either bound the gradient is dy: the bounds are inside",
                       args=(-1.0, 1.0)),
                  Kink((1.0,), (1.0,), "at the upper bound too", args=(-1.0, 1.0)))),
    _unary("Ceil", "the smallest whole number >= x", NUMERIC,
           Note("NaN and ±inf stay; ceil(-0.5) is 0; integer x are returned unchanged", ("special", "int32")),
           _EMPTY, op="tp.ceil", gradient="zero",
           kinks=(Kink((1.0,), (0.0,), "zero everywhere, at the jumps too"),),
           numpy=np.ceil, samples=_numeric(((NAN, INF, -INF, -0.5, 1e30),
                                            (NAN, INF, -INF, -0.0, 1e30)), (-1.3, 0.7, 2.2))),
    _unary("Floor", "the largest whole number <= x", NUMERIC,
           Note("NaN and ±inf stay; integer x are returned unchanged", ("special", "int32")), _EMPTY,
           op="tp.floor", gradient="zero",
           kinks=(Kink((1.0,), (0.0,), "zero everywhere, at the jumps too"),),
           numpy=np.floor, samples=_numeric(((NAN, INF, -INF, -0.5, 1e30),
                                             (NAN, INF, -INF, -1.0, 1e30)), (-1.3, 0.7, 2.2))),
    _unary("Round", "the nearest whole number", NUMERIC,
           Note("halves round to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2", ("special",)), _EMPTY,
           op="tp.round", gradient="zero",
           kinks=(Kink((0.5,), (0.0,), "zero everywhere, at the jumps too"),),
           numpy=np.round, samples=_numeric(((NAN, INF, -INF, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5),
                                             (NAN, INF, -INF, 0.0, 2.0, 2.0, -0.0, -2.0, -2.0)), (-1.3, 0.7, 2.2))),
    _unary("Sign", "-1, 0 or 1 by the sign of x", NUMERIC,
           Note("sign(NaN) is 0 (TensorFlow.js); sign(±0) is 0; tiny values are ±1", ("special",)), _EMPTY,
           op="tp.sign", gradient="zero",
           kinks=(Kink((0.0,), (0.0,), "zero everywhere, at the jump too"),),
           numpy=np.sign, samples=_numeric(((NAN, INF, -INF, 0.0, -0.0, 1e-30),
                                            (0.0, 1.0, -1.0, 0.0, 0.0, 1.0)), (-1.3, 0.7, 2.1))),
    _unary("IsNan", "x is NaN", ALL, Note("always False for integer and bool x", ("int32", "bool")), _EMPTY,
           op="tp.isnan", out="bool", gradient="none"),
    _unary("IsInf", "x is +inf or -inf", ALL, Note("always False for integer and bool x", ("int32", "bool")), _EMPTY,
           op="tp.isinf", out="bool", gradient="none"),
    _unary("IsFinite", "x is neither NaN nor ±inf", ALL, Note("always True for integer and bool x", ("int32", "bool")),
           _EMPTY, op="tp.isfinite", out="bool", gradient="none"),
    _unary("LogicalNot", "not x", BOOL, Note("the op refuses non-bool x", ("float32", "int32")), _EMPTY,
           op="tp.logical_not", out="bool", gradient="none", dtype_rule="x is bool; y is bool"),
]  # fmt: skip
