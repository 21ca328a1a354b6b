"""Elementwise binary kernels, broadcasting (inputs a, b)."""

from __future__ import annotations

from tensorplug.kernel_reference._entries import (
    ALL,
    BOOL,
    FLOAT,
    NUMERIC,
    Grad,
    Input,
    KernelEntry,
    Kink,
    Note,
    Output,
    function,
    rule,
)
from tensorplug.kernel_reference._unary import _SUBNORMAL

_BROADCAST = "a and b have one dtype (the op promotes them: an integer meeting a float takes the float's dtype, " \
             "Python scalars weak) and shapes that broadcast (NumPy's rules); y has the broadcast shape"  # fmt: skip
_AB_EMPTY = Note("empty operands give an empty result of the broadcast shape", ("empty",))


def _binary(
    name: str,
    summary: str,
    dtypes: tuple[str, ...],
    *notes: Note,
    op: str,
    out: str = "like:a",
    gradient: str = "yes",
    rule: str = "",
    grad: Grad | None = None,
    kinks: tuple[Kink, ...] = (),
    decomposition: str = "",
) -> KernelEntry:
    return KernelEntry(
        name=name,
        family="binary",
        summary=summary,
        ops=(op,),
        inputs=(Input("a", dtypes), Input("b", dtypes)),
        attrs=(),
        outputs=(Output(out, doc="the broadcast shape of a and b"),),
        dtypes=rule or f"a and b are one of {', '.join(dtypes)}; y is {'bool' if out == 'bool' else 'their dtype'}",
        gradient=gradient,
        grad_inputs=("a", "b") if gradient == "yes" else (),
        notes=(
            Note(_BROADCAST, ("broadcast",)) if "broadcast" in _BROADCAST_CASES.get(name, ()) else Note(_BROADCAST),
            *notes,
        ),
        grad=grad,
        kinks=kinks,
        decomposition=decomposition,
    )


# Kernels whose conformance table has a case named "broadcast" (the comparisons have "int32-broadcast").
_BROADCAST_CASES = {
    k: ("broadcast",) for k in ("Add", "Sub", "Multiply", "RealDiv", "Pow", "Maximum", "Minimum",
                                "SquaredDifference", "Atan2", "FloorDiv", "Mod", "LogicalAnd", "LogicalOr",
                                "LogicalXor")
}  # fmt: skip


def _compare(name: str, summary: str, op: str) -> KernelEntry:
    return _binary(
        name, summary, ALL,
        Note("any comparison with NaN is False, except NotEqual which is True", ("float32-nan",)),
        Note("±inf compare as numbers", ("float64-inf",)),
        Note("bool operands compare as False < True", ("bool",)), _AB_EMPTY,
        op=op, out="bool", gradient="none",
        rule="a and b are one of float32, float64, int32, int64, bool, promoted to one dtype; y is bool",
    )  # fmt: skip


def _logical(name: str, summary: str, op: str) -> KernelEntry:
    return _binary(
        name, summary, BOOL, Note("the op refuses non-bool operands", ("int-rejected", "float-rejected")), _AB_EMPTY,
        op=op, out="bool", gradient="none", rule="a and b are bool; y is bool",
    )  # fmt: skip


ENTRIES = [
    _binary("Add", "a + b", ALL, Note("on bool: logical or", ("bool-is-or",)),
            Note("inf + -inf is NaN; NaN propagates", ("inf-nan",)), _AB_EMPTY, op="tp.add (and +)",
            grad=rule("dy", "dy")),
    _binary("Sub", "a - b", NUMERIC, Note("inf - inf is NaN; the op refuses bool", ("inf", "bool-rejected")),
            _AB_EMPTY, op="tp.sub (and -)", grad=rule("dy", "neg(dy)")),
    _binary("Multiply", "a * b", ALL, Note("on bool: logical and", ("bool-is-and",)),
            Note("inf * 0 is NaN; NaN propagates", ("inf-nan",)), _SUBNORMAL, _AB_EMPTY, op="tp.mul (and *)",
            grad=rule("mul(dy, b)", "mul(dy, a)")),
    _binary("RealDiv", "a / b (true division)", FLOAT,
            Note("x / 0 is inf, -inf or NaN (0 / 0); integer operands reach the kernel as float32",
                 ("by-zero", "int-by-zero", "int32-gives-float32")), _AB_EMPTY, op="tp.div (and /)",
            rule="a and b are float32 or float64 (the op casts integer and bool operands to float32); y has "
                 "their dtype", grad=rule("div(dy, b)", "neg(div(mul(dy, a), square(b)))")),
    _binary("Pow", "a ** b", NUMERIC,
            Note("C's pow: (-inf) ** 0.5 is inf and (-0.0) ** 0.5 is 0.0, (-8) ** (1/3) is NaN, 0 ** -1 is inf, "
                 "x ** 0 is 1", ("half-exponent-of-minus-inf", "float64-special", "minus-inf-base")),
            Note("integer a to a negative integer b is an error: the kernel raises (the op refuses a negative "
                 "Python int exponent itself)", ("int-to-negative-int-tensor", "int-to-negative-python-int")),
            _AB_EMPTY, op="tp.pow (and **)", grad=function("grad_pow", saves=("a", "b"), outputs=(0,)),
            kinks=(Kink((0.0, 2.0), (0.0, 0.0), "at a = 0 the gradient of b is 0: log(a) is taken as 0 where "
                        "a <= 0"),)),
    _binary("Maximum", "the larger of a and b", ALL, Note("NaN if either is NaN", ("nan",)),
            Note("on bool: logical or", ("bool",)), _AB_EMPTY, op="tp.maximum",
            grad=rule("mul(dy, cast(greater_equal(a, b), dy.dtype))", "mul(dy, cast(less(a, b), dy.dtype))"),
            kinks=(Kink((1.0, 1.0), (1.0, 0.0), "on a tie the gradient goes to a (where a >= b), none to b"),)),
    _binary("Minimum", "the smaller of a and b", ALL, Note("NaN if either is NaN", ("nan",)),
            Note("on bool: logical and", ("bool",)), _AB_EMPTY, op="tp.minimum",
            grad=rule("mul(dy, cast(less_equal(a, b), dy.dtype))", "mul(dy, cast(greater(a, b), dy.dtype))"),
            kinks=(Kink((1.0, 1.0), (1.0, 0.0), "on a tie the gradient goes to a (where a <= b), none to b"),)),
    _binary("SquaredDifference", "(a - b) ** 2", NUMERIC, Note("NaN propagates; inf - inf is NaN", ("inf-nan",)),
            _AB_EMPTY, op="tp.squared_difference",
            grad=rule("mul(dy, mul(sub(a, b), 2.0))", "mul(dy, mul(sub(b, a), 2.0))"), decomposition="square(a - b)"),
    _binary("Atan2", "the angle of the point (b, a), in [-pi, pi]", FLOAT,
            Note("all four quadrants; atan2 of ±inf and NaN as C's atan2", ("float64-quadrants", "inf-nan")),
            _AB_EMPTY, op="tp.atan2",
            rule="a and b are float32 or float64 (the op casts integers to float32); y has their dtype",
            grad=rule("mul(dy, div(b, add(square(a), square(b))))", "neg(mul(dy, div(a, add(square(a), square(b)))))")),
    KernelEntry(
        name="Prelu", family="binary", summary="x where x >= 0, else alpha * x", ops=("tp.prelu",),
        inputs=(Input("x", NUMERIC), Input("alpha", NUMERIC, doc="the slope, broadcasting with x")),
        attrs=(), outputs=(Output("like:x", doc="the broadcast shape of x and alpha"),),
        dtypes="x and alpha are one numeric dtype (the op promotes them and refuses bool); y has their dtype",
        gradient="yes", grad_inputs=("x", "alpha"),
        notes=(Note("alpha broadcasts (one slope per channel, say)", ("per-channel",)),
               Note("NaN stays NaN, -inf becomes alpha * -inf", ("inf-nan",)),
               Note("empty x gives empty y", ("empty",))),
        grad=function("grad_prelu", saves=("x", "alpha")),
        kinks=(Kink((0.0, 0.25), (0.25, 0.0), "at x = 0 the gradient of x is alpha * dy and of alpha 0: dy passes "
                    "to x where x > 0, and alpha gets dy * x where x <= 0"),),
    ),
    _binary("FloorDiv", "floor(a / b)", NUMERIC,
            Note("integers: Python's floor division (rounds toward -inf: -7 // 2 is -4)", ("int32", "int64")),
            Note("integer division by zero gives 0, without an error or a warning", ("int-by-zero", "int64-by-zero")),
            Note("floats: floor of the true quotient, as TensorFlow.js (1.0 // 0.1 is 10.0, where Python gives 9.0); "
                 "x // 0 is inf, -inf or NaN", ("float-floors-the-quotient", "float-by-zero")), _AB_EMPTY,
            op="tp.floor_div (and //)", gradient="none"),
    _binary("Mod", "a - floor(a / b) * b: the remainder with the sign of b (Python's %)", NUMERIC,
            Note("the sign of the divisor: -7 mod 3 is 2, 7 mod -3 is -2", ("int32", "float32")),
            Note("integer x mod 0 is 0 (no error); float x mod 0 is NaN; inf mod b is NaN",
                 ("int-by-zero", "float-by-zero", "inf-nan")), _AB_EMPTY, op="tp.mod (and %)",
            grad=rule("dy", "neg(mul(dy, tensor(floor_div(a, b))))")),
    _compare("Equal", "a == b", "tp.equal (and ==)"),
    _compare("NotEqual", "a != b", "tp.not_equal (and !=)"),
    _compare("Less", "a < b", "tp.less (and <)"),
    _compare("LessEqual", "a <= b", "tp.less_equal (and <=)"),
    _compare("Greater", "a > b", "tp.greater (and >)"),
    _compare("GreaterEqual", "a >= b", "tp.greater_equal (and >=)"),
    _logical("LogicalAnd", "a and b", "tp.logical_and (and & on bool)"),
    _logical("LogicalOr", "a or b", "tp.logical_or (and | on bool)"),
    _logical("LogicalXor", "a xor b", "tp.logical_xor (and ^ on bool)"),
    KernelEntry(
        name="AddN", family="binary", summary="the elementwise sum of a list of tensors", ops=("tp.add_n",),
        inputs=(Input("tensors", ALL, is_list=True, doc="one or more tensors of one shape and one dtype"),),
        attrs=(), outputs=(Output("like:tensors", doc="the shape of each tensor"),),
        dtypes="every tensor has the same dtype, any of float32, float64, int32, int64, bool; y has that dtype",
        gradient="yes", grad_inputs=("tensors",),
        notes=(Note("no broadcasting: the op checks that shapes and dtypes agree", ("shape-mismatch",
                                                                                   "dtype-mismatch")),
               Note("a list of one tensor is allowed", ("single",)), Note("on bool: logical or", ("bool-is-or",)),
               Note("inf + -inf is NaN", ("inf-nan",)), Note("empty tensors give an empty result", ("empty",))),
        grad=function("grad_add_n", saves=("tensors",)),
    ),
]  # fmt: skip
