"""Reductions and scans (input x)."""

from __future__ import annotations

from tensorplug.kernel_reference._entries import (
    BOOL,
    ELEMENTWISE_SHAPE,
    FLOAT,
    NUMERIC,
    Attr,
    Grad,
    KernelEntry,
    Note,
    Output,
    _x,
    function,
)

_AXES = Attr("axis", "tuple[int, ...]", "the axes to reduce: sorted, distinct, non-negative (None and negative axes "
             "resolved by the op); () reduces nothing", form="axes")  # fmt: skip
_KEEP = Attr("keep_dims", "bool", "keep each reduced axis with size 1")


def _reduction(
    name: str,
    summary: str,
    dtypes: tuple[str, ...],
    *notes: Note,
    op: str,
    out: str = "like:x",
    gradient: str = "yes",
    rule: str = "",
    grad: Grad | None = None,
) -> KernelEntry:
    return KernelEntry(
        name=name,
        family="reduction",
        summary=summary,
        ops=(op,),
        inputs=_x(dtypes),
        attrs=(_AXES, _KEEP),
        outputs=(Output(out, doc="x's shape without the reduced axes (or with size 1 there, keep_dims)"),),
        dtypes=rule or f"x is any of {', '.join(dtypes)}; y has x's dtype",
        gradient=gradient,
        grad_inputs=("x",) if gradient == "yes" else (),
        notes=notes,
        grad=grad,
    )


def _arg(name: str, summary: str, op: str, ties: tuple[str, ...]) -> KernelEntry:
    return KernelEntry(
        name=name, family="reduction", summary=summary, ops=(op,), inputs=_x(NUMERIC),
        attrs=(Attr("axis", "int", "one axis, non-negative", form="axis"),),
        outputs=(Output("int32", doc="x's shape without axis"),),
        dtypes="x is numeric (the op refuses bool); y is int32", gradient="none",
        notes=(Note("ties: the first (lowest) index", ties),
               Note("NaN wins: the index of the first NaN", ("nan-first",)),
               Note("x has rank >= 1 and axis has size > 0 (the op checks)", ("empty-axis", "scalar"))),
    )  # fmt: skip


def _scan(name: str, summary: str, op: str, identity: str, *notes: Note, grad: Grad) -> KernelEntry:
    return KernelEntry(
        name=name, family="reduction", summary=summary, ops=(op,), inputs=_x(NUMERIC),
        attrs=(Attr("axis", "int", "one axis, non-negative", form="axis"),
               Attr("exclusive", "bool", f"leave each element out of its own result (the first is {identity})"),
               Attr("reverse", "bool", "accumulate from the end")),
        outputs=(Output("like:x", doc=ELEMENTWISE_SHAPE),),
        dtypes="x is numeric (the op casts bool to int32); y has x's dtype", gradient="yes", grad_inputs=("x",),
        notes=(Note("exclusive and reverse combine as TensorFlow.js's", ("exclusive", "reverse", "exclusive-reverse")),
               *notes, Note("an empty x gives an empty y", ("empty",))),
        grad=grad,
    )  # fmt: skip


ENTRIES = [
    _reduction("Sum", "the sum over axis", NUMERIC,
               Note("0 over no elements; axis=() returns x unchanged", ("empty-axis-is-zero", "empty-all",
                                                                         "no-axes-is-identity")),
               Note("integers keep their dtype and wrap (no widening to int64)", ("int32-wraps",)),
               Note("inf - inf is NaN; NaN propagates", ("inf-minus-inf-nan", "nan")),
               op="tp.sum", rule="x is numeric (the op casts bool to int32); y has x's dtype",
               grad=function("grad_sum", saves=("x",))),
    _reduction("Prod", "the product over axis", NUMERIC,
               Note("1 over no elements", ("empty-axis-is-one", "empty-all")),
               Note("integers keep their dtype and wrap", ("int32-wraps",)),
               Note("inf * 0 is NaN; NaN propagates", ("inf-times-zero-nan", "nan")),
               op="tp.prod", rule="x is numeric (the op casts bool to int32); y has x's dtype",
               grad=function("grad_prod", saves=("x",))),
    _reduction("Mean", "the mean over axis", FLOAT,
               Note("NaN over no elements, without an error", ("empty-nan", "empty-axis-nan")),
               Note("NaN propagates", ("nan",)), op="tp.mean",
               rule="x is float32 or float64 (the op casts integers and bool to float32); y has x's dtype",
               grad=function("grad_mean", saves=("x",))),
    _reduction("Max", "the maximum over axis", NUMERIC,
               Note("NaN propagates (any NaN gives NaN)", ("nan-propagates",)),
               Note("never called over an axis of size 0 (the op refuses it)", ("empty-axis", "empty-all")),
               Note("gradient: ties share dy (every maximal element gets all of it)", ("grad-ties",)),
               op="tp.max", rule="x is numeric (the op refuses bool); y has x's dtype",
               grad=function("grad_extremum", saves=("x",), outputs=(0,))),
    _reduction("Min", "the minimum over axis", NUMERIC,
               Note("NaN propagates", ("nan-propagates",)),
               Note("never called over an axis of size 0 (the op refuses it)", ("empty-axis",)),
               Note("gradient: ties share dy (every minimal element gets all of it)", ("grad-ties",)),
               op="tp.min", rule="x is numeric (the op refuses bool); y has x's dtype",
               grad=function("grad_extremum", saves=("x",), outputs=(0,))),
    _reduction("All", "logical and over axis", BOOL, Note("True over no elements", ("empty-is-true", "empty-axis")),
               op="tp.all", out="bool", gradient="none", rule="x is bool; y is bool"),
    _reduction("Any", "logical or over axis", BOOL, Note("False over no elements", ("empty-is-false", "empty-axis")),
               op="tp.any", out="bool", gradient="none", rule="x is bool; y is bool"),
    _arg("ArgMax", "the index of the largest value along axis", "tp.argmax", ("axis1-ties-first",)),
    _arg("ArgMin", "the index of the smallest value along axis", "tp.argmin",
         ("default-axis0-ties-first", "axis1-ties-first")),
    _scan("Cumsum", "the cumulative sum along axis", "tp.cumsum", "0",
          Note("inf + -inf is NaN from there on", ("inf-nan",)), grad=function("grad_cumsum")),
    _scan("Cumprod", "the cumulative product along axis", "tp.cumprod", "1",
          Note("inf * 0 is NaN from there on; zeros are exact", ("inf-nan", "zero")),
          grad=function("grad_cumprod", saves=("x",), outputs=(0,))),
]  # fmt: skip
