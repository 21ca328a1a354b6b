"""Linear algebra: matmul through the BatchMatMul kernel."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._engine import dispatch
from tensorplug._errors import DTypeError, ShapeError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops._convert import broadcast_shapes, promote_operands
from tensorplug.ops._shape import reshape

__all__ = ["matmul"]


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
    """Matrix product over the last two axes, batch axes broadcasting (NumPy's ``matmul``).

    1-D operands are treated as a row (``a``) or a column (``b``) vector and
    that axis is dropped from the result, as in NumPy.

    >>> import tensorplug as tp
    >>> tp.matmul(tp.ones((2, 3)), tp.ones((3, 4))).shape
    (2, 4)
    """
    a, b = promote_operands("matmul", a, b)
    if a.dtype == "bool":
        raise DTypeError(f"matmul: expects numeric tensors, got {describe(a)} and {describe(b)}")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must have at least one dimension, got {describe(a)} and {describe(b)}")
    squeeze_a, squeeze_b = a.ndim == 1, b.ndim == 1
    if squeeze_a:
        a, transpose_a = reshape(a, (1, a.shape[0])), False
    if squeeze_b:
        b, transpose_b = reshape(b, (b.shape[0], 1)), False
    m, ka = (a.shape[-1], a.shape[-2]) if transpose_a else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if transpose_b else (b.shape[-2], b.shape[-1])
    if ka != kb:
        raise ShapeError(
            f"matmul: inner dimensions differ: {describe(a)}{' (transposed)' if transpose_a else ''} "
            f"times {describe(b)}{' (transposed)' if transpose_b else ''} ({ka} != {kb})"
        )
    batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
    out = dispatch(K.BATCH_MAT_MUL, {"a": a, "b": b}, {"transpose_a": transpose_a, "transpose_b": transpose_b})
    if squeeze_a or squeeze_b:
        shape = batch + ((m,) if not squeeze_a else ()) + ((n,) if not squeeze_b else ())
        out = reshape(out, shape)
    return out
