"""Torch kernels: linear algebra (BatchMatMul, Einsum), as the numpy backend's.

torch.matmul and torch.einsum multiply integer tensors on the CPU, but on
CUDA (cuBLAS has no integer GEMM) and other accelerators they raise. There
integer products are spelled out as broadcast multiplies and sums in the
tensors' own dtype: exact, and wrapping on overflow as NumPy's integer
matmul does, at the cost of memory for the broadcast product (BatchMatMul
bounds it by contracting in chunks).
"""

from __future__ import annotations

from typing import Any

import torch

# Elements of one broadcast product (batch * m * chunk * n) in the integer BatchMatMul fallback.
_INT_CHUNK_ELEMENTS = 1 << 24


def _has_int_matmul(t: Any) -> bool:
    """Whether torch multiplies ``t``'s matrices natively: floats anywhere, integers on the CPU only."""
    return bool(t.is_floating_point()) or t.device.type == "cpu"


def batch_mat_mul(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    a, b = inputs["a"], inputs["b"]  # the op hands over one dtype and operands of rank 2 or more
    if attrs["transpose_a"]:
        a = a.mT
    if attrs["transpose_b"]:
        b = b.mT
    if _has_int_matmul(a):
        return torch.matmul(a, b)
    return _int_matmul(a, b)


def _int_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` for integer tensors, as sums of broadcast products over chunks of the inner axis."""
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])  # type: ignore[no-untyped-call]  # untyped in torch
    out = torch.zeros((*batch, m, n), dtype=a.dtype, device=a.device)
    step = max(1, _INT_CHUNK_ELEMENTS // max(1, batch.numel() * m * n))
    for start in range(0, k, step):  # one step for all but large products
        products = a[..., :, start : start + step, None] * b[..., None, start : start + step, :]
        out += products.sum(-2, dtype=a.dtype)  # out is our own fresh tensor
    return out


def einsum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    # The op hands over an explicit equation ("ij,jk->ik": no spaces, no ellipsis) and operands of one dtype.
    tensors = inputs["tensors"]
    if not _has_int_matmul(tensors[0]):
        return _int_einsum(attrs["equation"], tensors)
    if tensors[0].dtype == torch.int32:
        # torch.einsum sums an axis that one operand alone labels into int64 (and then fails to multiply that by an
        # int32 operand: "expected scalar type Int but found Long"); int64 gives the same result modulo 2**32.
        return torch.einsum(attrs["equation"], *[t.long() for t in tensors]).int()
    return torch.einsum(attrs["equation"], *tensors)


def _int_einsum(equation: str, tensors: list[Any]) -> Any:
    """einsum for integer tensors without torch's matmul: align every operand on every label, multiply, sum.

    Operands are multiplied in order; a label is summed out as soon as no later operand and not the output
    names it, which keeps the broadcast products as small as this left-to-right order allows.
    """
    lhs, output = equation.split("->")
    terms = lhs.split(",")
    labels = "".join(dict.fromkeys(lhs.replace(",", "")))  # every label once, in order of appearance
    aligned = [_align(t, term, labels) for t, term in zip(tensors, terms, strict=True)]
    result = aligned[0]
    for i in range(len(aligned)):
        if i:
            result = result * aligned[i]
        needed = output + "".join(terms[i + 1 :])
        done = tuple(d for d, label in enumerate(labels) if label not in needed and result.shape[d] != 1)
        if done:
            result = result.sum(done, keepdim=True, dtype=result.dtype)
    # every label is still an axis (of size 1 once summed): drop those not in the output, order the rest
    result = result.reshape([result.shape[labels.index(label)] for label in labels if label in output])
    kept = [label for label in labels if label in output]
    return result.permute([kept.index(label) for label in output])


def _align(t: Any, term: str, labels: str) -> Any:
    """``t`` (axes labelled by ``term``) with one axis per label of ``labels``, in that order; size 1 where absent.

    A label repeated within ``term`` takes the diagonal first (torch.diagonal moves it to the last axis).
    """
    for label in dict.fromkeys(term):
        while term.count(label) > 1:
            first = term.index(label)
            second = term.index(label, first + 1)
            t = torch.diagonal(t, 0, first, second)
            term = term[:first] + term[first + 1 : second] + term[second + 1 :] + label
    present = [label for label in labels if label in term]
    t = t.permute([term.index(label) for label in present])
    return t.reshape([t.shape[present.index(label)] if label in term else 1 for label in labels])
