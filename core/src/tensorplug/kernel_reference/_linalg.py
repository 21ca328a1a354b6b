"""Linear algebra kernels."""

from __future__ import annotations

from tensorplug.kernel_reference._entries import NUMERIC, Attr, Input, KernelEntry, Note, Output, function

ENTRIES = [
    KernelEntry(
        name="BatchMatMul", family="linalg", summary="the matrix product over the last two axes",
        ops=("tp.matmul (and @)",),
        inputs=(Input("a", NUMERIC), Input("b", NUMERIC)),
        attrs=(Attr("transpose_a", "bool", "use a with its last two axes swapped"),
               Attr("transpose_b", "bool", "use b with its last two axes swapped")),
        outputs=(Output("like:a", doc="broadcast batch axes + (m, n)"),),
        dtypes="a and b have one numeric dtype (the op promotes them and refuses bool); y has it",
        gradient="yes", grad_inputs=("a", "b"),
        notes=(Note("a and b have rank >= 2 (the op turns vectors into matrices and back); their batch axes "
                    "broadcast (NumPy's matmul)", ("vector-matrix", "broadcast-batch", "batched")),
               Note("an empty inner dimension gives zeros; inf * 0 is NaN", ("empty-inner-is-zero",
                                                                              "inf-times-zero")),
               Note("integers keep their dtype", ("int32", "int64"))),
        grad=function("grad_batch_mat_mul", saves=("a", "b")),
    ),
    KernelEntry(
        name="Einsum", family="linalg", summary="Einstein summation over labelled axes", ops=("tp.einsum",),
        inputs=(Input("tensors", NUMERIC, is_list=True, doc="one or more operands of one dtype"),),
        attrs=(Attr("equation", "str", "explicit and checked against the shapes by the op: 'ab,bc->ac', one "
                    "term per operand, no spaces, '...' spelled out as letters, the output given", form="equation"),),
        outputs=(Output("like:tensors", doc="one axis per output label"),),
        dtypes="every operand has one numeric dtype (the op promotes them and refuses bool); y has it",
        gradient="yes", grad_inputs=("tensors",),
        notes=(Note("a label repeated within a term takes the diagonal; a label absent from the output is summed",
                    ("trace", "diagonal", "sum-axis")),
               Note("size-1 axes broadcast against the same label elsewhere", ("size-one-broadcasts",)),
               Note("any number of operands", ("three-operands",)),
               Note("an empty contraction gives zeros; inf * 0 is NaN", ("empty-contraction-is-zero",
                                                                          "inf-times-zero"))),
        grad=function("grad_einsum", saves=("tensors",)),
    ),
]  # fmt: skip
