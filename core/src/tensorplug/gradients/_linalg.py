"""Gradients of BatchMatMul (2-D, batched, broadcast batch axes, transposed operands) and Einsum."""

from __future__ import annotations

import functools
from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import cast, cumsum, einsum, equal, matmul, ones, reshape, sum_to_shape
from tensorplug.ops._linalg import EINSUM_LABELS


def grad_batch_mat_mul(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
    """Lazy entries: the gradient of a constant operand (a batch of inputs, say) is never computed."""
    a, b = saved
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]

    def da() -> Tensor:
        if not ta:
            return sum_to_shape(matmul(dy, b, transpose_b=not tb), a.shape)
        return sum_to_shape(matmul(b, dy, transpose_a=tb, transpose_b=True), a.shape)

    def db() -> Tensor:
        if not tb:
            return sum_to_shape(matmul(a, dy, transpose_a=not ta), b.shape)
        return sum_to_shape(matmul(dy, a, transpose_a=True, transpose_b=ta), b.shape)

    return da, db


def grad_einsum(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[list[Any]]:
    """One lazy einsum per operand; the equation is explicit, without '...' (the op made it so)."""
    (operands,) = saved
    equation = attrs["equation"]
    return ([functools.partial(_einsum_operand_grad, k, dy, operands, equation) for k in range(len(operands))],)


def _einsum_operand_grad(k: int, dy: Tensor, operands: list[Tensor], equation: str) -> Tensor:
    """The gradient of operand ``k``: an einsum of dy with the other operands, back to operand k's labels.

    A label repeated in operand k (a diagonal) is spread back with an identity
    matrix per extra occurrence; a label that nothing else carries at operand
    k's size (summed within operand k, or size 1 elsewhere) is broadcast with
    a vector of ones; axes that broadcasting stretched are summed back.
    """
    lhs, output = equation.split("->")
    terms = lhs.split(",")
    x, term = operands[k], terms[k]
    spare = iter(c for c in EINSUM_LABELS if c not in equation)
    labels = [output] + [t for j, t in enumerate(terms) if j != k]
    tensors = [dy] + [o for j, o in enumerate(operands) if j != k]
    target = ""
    for label, size in zip(term, x.shape, strict=True):
        if label in target:
            fresh = next(spare)
            labels.append(label + fresh)
            tensors.append(_eye(size, dy.dtype))
            target += fresh
        else:
            target += label
    carried: dict[str, int] = {}
    for term_j, t in zip(labels, tensors, strict=True):
        for label, size in zip(term_j, t.shape, strict=True):
            carried[label] = max(size, carried.get(label, 1))
    for label, size in zip(term, x.shape, strict=True):
        if label not in carried or carried[label] < size:
            labels.append(label)
            tensors.append(ones((size,), dy.dtype))
            carried[label] = size
    g = einsum(",".join(labels) + "->" + target, *tensors)
    return sum_to_shape(g, x.shape)


def _eye(n: int, dtype: str) -> Tensor:
    index = cumsum(ones((n,), "int32"), exclusive=True)
    return cast(equal(reshape(index, (n, 1)), reshape(index, (1, n))), dtype)
