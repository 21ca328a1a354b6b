"""Elementwise kernels: unary and binary, each as the ONNX operators that give the kernel reference's values.

Where ONNX (or ONNX Runtime) differs from the reference, the converter composes operators that agree with it:
NaN kept where the reference keeps it (Sign, Step, ClipByValue, Maximum...), Python's floor division and
modulo for integers (division by zero gives 0, never a crash), expm1 and log1p accurate near 0, softplus
without overflow. Kernels ONNX Runtime implements for float32 only are refused for float64.
"""

from __future__ import annotations

import numpy as np
import onnx.defs

from tensorplug import kernel_names as K
from tensorplug.kernel_reference import REFERENCE
from tensorplug_onnx import OPSET
from tensorplug_onnx._graph import Converter, Graph, Refused, StepView

FLOATS = ("float32", "float64")
NUMERIC = ("float32", "float64", "int32", "int64")
FLOAT32_ONLY = "ONNX Runtime implements {op} for float32 only; cast the input to float32 in the function to export it"


# -- building blocks ---------------------------------------------------------------------------------------------


def expm1(g: Graph, x: str, dtype: str) -> str:
    """e**x - 1, accurate near 0: a Taylor polynomial for |x| < 1/2 (where exp(x) - 1 loses digits), exp(x) - 1
    elsewhere; ±inf and NaN as expm1 gives them."""
    terms = 10 if dtype == "float32" else 18
    poly = g.const(1.0 / _factorial(terms), dtype)
    for n in range(terms - 1, 0, -1):  # Horner: x (1 + x/2 (1 + x/3 (...)))
        poly = g.op("Add", g.const(1.0 / _factorial(n), dtype), g.op("Mul", x, poly))
    poly = g.op("Mul", x, poly)
    direct = g.op("Sub", g.op("Exp", x), g.const(1.0, dtype))
    small = g.op("Less", g.op("Abs", x), g.const(0.5, dtype))
    return str(g.op("Where", small, poly, direct))


def _factorial(n: int) -> float:
    value = 1.0
    for i in range(2, n + 1):
        value *= i
    return value


def log1p(g: Graph, x: str, dtype: str) -> str:
    """log(1 + x), accurate near 0 (log(u) * x / (u - 1) with u = 1 + x, exact where u == 1); -inf at -1, NaN
    below, inf at inf."""
    one = g.const(1.0, dtype)
    u = g.op("Add", one, x)
    ratio = g.op("Div", g.op("Mul", g.op("Log", u), x), g.op("Sub", u, one))
    exact = g.op("Or", g.op("Equal", u, one), g.op("IsInf", u))
    return str(g.op("Where", exact, g.op("Where", g.op("Equal", u, one), x, g.op("Log", u)), ratio))


def keep_nan(g: Graph, x: str, value: str) -> str:
    """``value``, with x's NaN where x is NaN."""
    return str(g.op("Where", g.op("IsNaN", x), x, value))


# -- unary -------------------------------------------------------------------------------------------------------


def _plain(op_type: str, dtypes: tuple[str, ...] = NUMERIC) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        if s.dtype("x") == "float64" and dtypes == ("float32",):
            raise Refused(FLOAT32_ONLY.format(op=op_type))
        s.only(dtypes, "x", f"ONNX's {op_type} takes {', '.join(dtypes)}")
        return str(g.op(op_type, s.x("x")))

    return convert


def _rounding(op_type: str) -> Converter:
    def convert(g: Graph, s: StepView) -> str:  # integers are whole already
        return str(g.op(op_type if s.dtype("x") in FLOATS else "Identity", s.x("x")))

    return convert


def _elu(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    return str(g.op("Where", g.op("Greater", x, g.const(0, dtype)), x, expm1(g, x, dtype)))


def _selu(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    negative = g.op("Mul", g.const(scale * alpha, dtype), expm1(g, x, dtype))
    return str(g.op("Where", g.op("Greater", x, g.const(0, dtype)), g.op("Mul", g.const(scale, dtype), x), negative))


def _sigmoid(g: Graph, s: StepView) -> str:
    """1 / (1 + e**-x) for x >= 0, e**x / (1 + e**x) below: no overflow, and tiny results keep their digits."""
    x, dtype = s.x("x"), s.dtype("x")
    s.only(FLOATS, "x", "Sigmoid takes float32 or float64")
    e = g.op("Exp", g.op("Neg", g.op("Abs", x)))
    one = g.const(1, dtype)
    denominator = g.op("Add", one, e)
    positive = g.op("GreaterOrEqual", x, g.const(0, dtype))
    return str(g.op("Where", positive, g.op("Div", one, denominator), g.op("Div", e, denominator)))


def _softplus(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    zero = g.const(0, dtype)
    positive = g.op("Where", g.op("Greater", x, zero), x, zero)
    return str(g.op("Add", positive, log1p(g, g.op("Exp", g.op("Neg", g.op("Abs", x))), dtype)))


def _relu6(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    clipped = g.op("Clip", x, g.const(0, dtype), g.const(6, dtype))
    return keep_nan(g, x, clipped) if dtype in FLOATS else str(clipped)


def _leaky_relu(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    alpha = s.attrs["alpha"]
    if dtype == "float32" and float(alpha) == float(np.float32(alpha)):
        return str(g.op("LeakyRelu", x, alpha=float(alpha)))
    return str(g.op("Where", g.op("Less", x, g.const(0, dtype)), g.op("Mul", x, g.const(alpha, dtype)), x))


def _step(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    one, alpha = g.const(1, dtype), g.const(s.attrs["alpha"], dtype)
    below = g.op("Where", g.op("LessOrEqual", x, g.const(0, dtype)), alpha, x)  # NaN stays NaN
    return str(g.op("Where", g.op("Greater", x, g.const(0, dtype)), one, below))


def _clip(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    clipped = g.op("Clip", x, g.const(s.attrs["clip_value_min"], dtype), g.const(s.attrs["clip_value_max"], dtype))
    return keep_nan(g, x, clipped) if dtype in FLOATS else str(clipped)


def _sign(g: Graph, s: StepView) -> str:
    x, dtype = s.x("x"), s.dtype("x")
    if dtype in FLOATS:  # sign(NaN) is 0
        return str(g.op("Where", g.op("IsNaN", x), g.const(0, dtype), g.op("Sign", x)))
    return str(g.op("Sign", x))


def _is(op_type: str, integers: bool) -> Converter:
    """IsNan / IsInf / IsFinite: integers and bools are never NaN or inf."""

    def convert(g: Graph, s: StepView) -> str:
        x = s.x("x")
        if s.dtype("x") not in FLOATS:
            same = g.op("Equal", x, x)  # all True, in x's shape
            return str(same if integers else g.op("Not", same))
        if op_type == "IsFinite":
            return str(g.op("Not", g.op("Or", g.op("IsNaN", x), g.op("IsInf", x))))
        return str(g.op(op_type, x))

    return convert


def _composed(build: str) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        x, dtype = s.x("x"), s.dtype("x")
        s.only(FLOATS, "x", f"{build} takes float32 or float64")
        if build == "expm1":
            return expm1(g, x, dtype)
        if build == "log1p":
            return log1p(g, x, dtype)
        return str(g.op("Reciprocal", g.op("Sqrt", x)))  # rsqrt

    return convert


UNARY: dict[str, Converter] = {
    K.ABS: _plain("Abs"),
    K.ACOS: _plain("Acos", ("float32",)),
    K.ACOSH: _plain("Acosh", ("float32",)),
    K.ASIN: _plain("Asin", ("float32",)),
    K.ASINH: _plain("Asinh", ("float32",)),
    K.ATAN: _plain("Atan", ("float32",)),
    K.ATANH: _plain("Atanh", ("float32",)),
    K.COS: _plain("Cos", FLOATS),
    K.COSH: _plain("Cosh", ("float32",)),
    K.ELU: _elu,
    K.ERF: _plain("Erf", ("float32",)),
    K.EXP: _plain("Exp", FLOATS),
    K.EXPM1: _composed("expm1"),
    K.LOG: _plain("Log", FLOATS),
    K.LOG1P: _composed("log1p"),
    K.NEG: _plain("Neg"),
    K.RECIPROCAL: _plain("Reciprocal", FLOATS),
    K.RELU: _plain("Relu"),
    K.RELU6: _relu6,
    K.RSQRT: _composed("rsqrt"),
    K.SELU: _selu,
    K.SIGMOID: _sigmoid,
    K.SIN: _plain("Sin", FLOATS),
    K.SINH: _plain("Sinh", ("float32",)),
    K.SOFTPLUS: _softplus,
    K.SOFTSIGN: _plain("Softsign", FLOATS),
    K.SQRT: _plain("Sqrt", FLOATS),
    K.SQUARE: lambda g, s: g.op("Mul", s.x("x"), s.x("x")),
    K.TAN: _plain("Tan", ("float32",)),
    K.TANH: _plain("Tanh", FLOATS),
    K.LEAKY_RELU: _leaky_relu,
    K.STEP: _step,
    K.CLIP_BY_VALUE: _clip,
    K.CEIL: _rounding("Ceil"),
    K.FLOOR: _rounding("Floor"),
    K.ROUND: _rounding("Round"),  # ONNX rounds halves to even, as the reference
    K.SIGN: _sign,
    K.IS_NAN: _is("IsNaN", integers=False),
    K.IS_INF: _is("IsInf", integers=False),
    K.IS_FINITE: _is("IsFinite", integers=True),
    K.LOGICAL_NOT: lambda g, s: g.op("Not", s.x("x")),
}


def derived_unary() -> dict[str, Converter]:
    """A converter for each unary kernel of the catalogue that has no row in :data:`UNARY` and is named like an
    ONNX operator of the default domain (in the opset written, one input and one output): that operator, for
    float32. ONNX Runtime implements many such operators for float32 only; a row in UNARY can say more, or compose
    operators where the ONNX operator's values differ from the kernel's (the export conformance run compares
    them)."""
    derived = {}
    for entry in REFERENCE.values():
        simple = entry.family == "unary" and not entry.attrs and len(entry.inputs) == len(entry.outputs) == 1
        if not simple or entry.name in UNARY or not onnx.defs.has(entry.name):
            continue
        schema = onnx.defs.get_schema(entry.name, OPSET)
        if len(schema.inputs) == len(schema.outputs) == 1 and not schema.deprecated:
            derived[entry.name] = _plain(entry.name, ("float32",))
    return derived


# -- binary ------------------------------------------------------------------------------------------------------


def _arith(op_type: str, on_bool: str | None = None) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        a, b = s.x("a"), s.x("b")
        if s.dtype("a") == "bool":
            if on_bool is None:
                raise Refused(f"ONNX's {op_type} takes no bool")
            return str(g.op(on_bool, a, b))
        return str(g.op(op_type, a, b))

    return convert


def _extremum(op_type: str, on_bool: str) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        a, b, dtype = s.x("a"), s.x("b"), s.dtype("a")
        if dtype == "bool":
            return str(g.op(on_bool, a, b))
        value = g.op(op_type, a, b)
        if dtype in FLOATS:  # NaN if either is NaN (a + b is NaN then, in the broadcast shape)
            either = g.op("Or", g.op("IsNaN", a), g.op("IsNaN", b))
            return str(g.op("Where", either, g.op("Add", a, b), value))
        return str(value)

    return convert


def _squared_difference(g: Graph, s: StepView) -> str:
    d = g.op("Sub", s.x("a"), s.x("b"))
    return str(g.op("Mul", d, d))


def _atan2(g: Graph, s: StepView) -> str:
    """C's atan2 from atan: the angle of (|b|, |a|) in the first quadrant, reflected by the signs of b and a (the sign
    bit: -0.0 counts as negative), with atan2(±inf, ±inf) and atan2(±0, ±0) as C gives them."""
    a, b, dtype = s.x("a"), s.x("b"), s.dtype("a")
    if dtype != "float32":
        raise Refused(FLOAT32_ONLY.format(op="Atan"))
    zero, inf = g.const(0, dtype), g.const(np.inf, dtype)
    ay, ax = g.op("Abs", a), g.op("Abs", b)
    angle = g.op("Atan", g.op("Div", ay, ax))
    both_inf = g.op("And", g.op("Equal", ay, inf), g.op("Equal", ax, inf))
    both_zero = g.op("And", g.op("Equal", ay, zero), g.op("Equal", ax, zero))
    angle = g.op("Where", both_inf, g.const(np.pi / 4, dtype), g.op("Where", both_zero, zero, angle))

    def negative(v: str) -> str:  # the sign bit: v < 0, or v is -0.0 (1 / -0.0 is -inf)
        return str(g.op("Or", g.op("Less", v, zero), g.op("Less", g.op("Reciprocal", v), zero)))

    angle = g.op("Where", negative(b), g.op("Sub", g.const(np.pi, dtype), angle), angle)
    sign = g.op("Where", negative(a), g.const(-1, dtype), g.const(1, dtype))
    return str(g.op("Mul", angle, sign))  # (ONNX Runtime's Where turns a -0.0 it selects into 0.0: a product keeps it)


def _prelu(g: Graph, s: StepView) -> str:
    x, alpha = s.x("x"), s.x("alpha")
    return str(g.op("Where", g.op("Less", x, g.const(0, s.dtype("x"))), g.op("Mul", alpha, x), x))


def _int_divisor(g: Graph, b: str, dtype: str) -> tuple[str, str]:
    """(b == 0, b with 0 and -1 replaced by 1): integer division by 0 is 0 here, and INT_MIN / -1 traps in C."""
    zero = g.op("Equal", b, g.const(0, dtype))
    minus_one = g.op("Equal", b, g.const(-1, dtype))
    safe = g.op("Where", g.op("Or", zero, minus_one), g.const(1, dtype), b)
    return zero, safe


def _floor_div(g: Graph, s: StepView) -> str:
    a, b, dtype = s.x("a"), s.x("b"), s.dtype("a")
    if dtype in FLOATS:  # the floor of the true quotient, as TensorFlow.js
        return str(g.op("Floor", g.op("Div", a, b)))
    zero_b, safe = _int_divisor(g, b, dtype)
    quotient = g.op("Div", a, safe)  # truncates toward zero
    remainder = g.op("Sub", a, g.op("Mul", quotient, safe))
    zero = g.const(0, dtype)
    signs_differ = g.op("Xor", g.op("Less", remainder, zero), g.op("Less", safe, zero))
    inexact = g.op("And", g.op("Not", g.op("Equal", remainder, zero)), signs_differ)
    floored = g.op("Sub", quotient, g.cast(inexact, dtype))
    by_minus_one = g.op("Where", g.op("Equal", b, g.const(-1, dtype)), g.op("Neg", a), floored)  # wraps, as NumPy
    return str(g.op("Where", zero_b, zero, by_minus_one))


def _mod(g: Graph, s: StepView) -> str:
    a, b, dtype = s.x("a"), s.x("b"), s.dtype("a")
    zero = g.const(0, dtype)
    if dtype not in FLOATS:  # ONNX's integer Mod has Python's sign already
        zero_b, safe = _int_divisor(g, b, dtype)
        return str(g.op("Where", zero_b, zero, g.op("Mod", a, safe)))
    r = g.op("Mod", a, b, fmod=1)  # C's fmod: the sign of a
    differ = g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero))
    moved = g.op("Where", g.op("And", g.op("Not", g.op("Equal", r, zero)), differ), g.op("Add", r, b), r)
    signed_zero = g.op("Where", g.op("Less", b, zero), g.const(-0.0, dtype), zero)  # a zero takes b's sign
    return str(g.op("Where", g.op("Equal", r, zero), signed_zero, moved))


def _compare(op_type: str, negate: bool = False) -> Converter:
    def convert(g: Graph, s: StepView) -> str:
        a, b = s.x("a"), s.x("b")
        if s.dtype("a") == "bool" and op_type != "Equal":  # False < True, as 0 < 1
            a, b = g.cast(a, "int32"), g.cast(b, "int32")
        result = g.op(op_type, a, b)
        return str(g.op("Not", result) if negate else result)

    return convert


def _add_n(g: Graph, s: StepView) -> str:
    tensors = s.xs("tensors")
    add = "Or" if s.dtype("tensors") == "bool" else "Add"
    total = tensors[0]
    if len(tensors) == 1:
        return str(g.op("Identity", total))
    for t in tensors[1:]:  # left to right, as the kernel adds them
        total = g.op(add, total, t)
    return str(total)


BINARY: dict[str, Converter] = {
    K.ADD: _arith("Add", on_bool="Or"),
    K.SUB: _arith("Sub"),
    K.MULTIPLY: _arith("Mul", on_bool="And"),
    K.REAL_DIV: _arith("Div"),
    K.POW: _arith("Pow"),
    K.MAXIMUM: _extremum("Max", "Or"),
    K.MINIMUM: _extremum("Min", "And"),
    K.SQUARED_DIFFERENCE: _squared_difference,
    K.ATAN2: _atan2,
    K.PRELU: _prelu,
    K.FLOOR_DIV: _floor_div,
    K.MOD: _mod,
    K.EQUAL: _compare("Equal"),
    K.NOT_EQUAL: _compare("Equal", negate=True),
    K.LESS: _compare("Less"),
    K.LESS_EQUAL: _compare("LessOrEqual"),
    K.GREATER: _compare("Greater"),
    K.GREATER_EQUAL: _compare("GreaterOrEqual"),
    K.LOGICAL_AND: lambda g, s: g.op("And", s.x("a"), s.x("b")),
    K.LOGICAL_OR: lambda g, s: g.op("Or", s.x("a"), s.x("b")),
    K.LOGICAL_XOR: lambda g, s: g.op("Xor", s.x("a"), s.x("b")),
    K.ADD_N: _add_n,
}
