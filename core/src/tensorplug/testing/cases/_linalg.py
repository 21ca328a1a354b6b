"""Conformance cases: linear algebra (BatchMatMul, Einsum).

Small products are worked out by hand in the comments; the gradient cases'
expected values come from the definitions written out in float64 with
broadcast multiplies and sums (never np.matmul or np.einsum).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing._case import Case, b8, f32, f64, i32, i64

inf, nan = math.inf, math.nan
A = [[1.0, 2.0], [3.0, 4.0]]
B = [[5.0, 6.0], [7.0, 8.0]]
AB = [[19.0, 22.0], [43.0, 50.0]]  # 1*5+2*7, 1*6+2*8; 3*5+4*7, 3*6+4*8
BA = [[23.0, 34.0], [31.0, 46.0]]  # 5*1+6*3, 5*2+6*4; 7*1+8*3, 7*2+8*4
AA = [[7.0, 10.0], [15.0, 22.0]]
BB = [[67.0, 78.0], [91.0, 106.0]]
I2 = [[1.0, 0.0], [0.0, 1.0]]
NOT_A_STR: Any = ["ij"]

_rng = np.random.default_rng(31)


def _normal(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape)


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The matrix product from its definition: sum_j a[..., i, j] * b[..., j, k], batch axes broadcasting."""
    product: np.ndarray = np.sum(a[..., :, :, None] * b[..., None, :, :], axis=-2)
    return product


P, Q, R = _normal(2, 3), _normal(3, 4), _normal(4, 2)
S = _normal(3, 3)
T3 = _normal(3, 2, 3)
V2 = _normal(2)
C1 = _normal(2, 1)
E4, E3 = _normal(2, 1, 2, 3), _normal(4, 3, 2)
P3, Q3 = _normal(3, 2), _normal(4, 3)
U3 = _normal(3)

CASES: list[Case] = [
    # -- BatchMatMul ---------------------------------------------------------------------------------------------
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(A), f32(B)), f32(AB), name="2d"),
    Case(K.BATCH_MAT_MUL, lambda a, b: tp.matmul(a, b, transpose_a=True), (f32(A), f32(B)),
         f32([[26.0, 30.0], [38.0, 44.0]]), name="transpose-a"),  # 1*5+3*7, 1*6+3*8; 2*5+4*7, 2*6+4*8
    Case(K.BATCH_MAT_MUL, lambda a, b: tp.matmul(a, b, transpose_b=True), (f32(A), f32(B)),
         f32([[17.0, 23.0], [39.0, 53.0]]), name="transpose-b"),  # 1*5+2*6, 1*7+2*8; 3*5+4*6, 3*7+4*8
    Case(K.BATCH_MAT_MUL, lambda a, b: tp.matmul(a, b, transpose_a=True, transpose_b=True), (f32(A), f32(B)),
         f32(np.transpose(BA)), name="transpose-both"),  # A^T B^T = (B A)^T
    Case(K.BATCH_MAT_MUL, tp.matmul, (f64(A), f64(B)), f64(AB), name="f64"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (i32(A), i32(B)), i32(AB), name="int32"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (i64(A), i64(B)), i64(AB), name="int64"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (i32(A), f32(B)), f32(AB), name="int32-float32-promotes"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32([A, B]), f32(B)), f32([AB, BB]), name="batched"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(np.ones((4, 1, 2, 3))), f32(np.ones((5, 3, 2)))),
         f32(np.full((4, 5, 2, 2), 3.0)), name="broadcast-batch"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32([1.0, 2.0]), f32(A)), f32([7.0, 10.0]), name="vector-matrix"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(A), f32([1.0, 1.0])), f32([3.0, 7.0]), name="matrix-vector"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32([1.0, 2.0]), f32([3.0, 4.0])), f32(11.0), name="vector-vector"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(np.zeros((2, 0))), f32(np.zeros((0, 3)))), f32(np.zeros((2, 3))),
         name="empty-inner-is-zero"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(np.zeros((0, 2, 2))), f32(A)), f32(np.zeros((0, 2, 2))),
         name="empty-batch"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32([[inf, 1.0]]), f32([[0.0], [1.0]])), f32([[nan]]), name="inf-times-zero"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(np.ones((2, 3))), f32(np.ones((2, 3)))), raises=tp.ShapeError,
         match="inner dimensions", name="inner-mismatch"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(np.ones((2, 2, 3))), f32(np.ones((3, 3, 2)))), raises=tp.ShapeError,
         match="broadcast", name="batch-mismatch"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (b8([[True]]), b8([[True]])), raises=tp.DTypeError, match="numeric",
         name="bool"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f32(2.0), f32(A)), raises=tp.ShapeError, match="at least one dimension",
         name="scalar"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f64(P), f64(Q)), f64(_mm(P, Q)), rtol=1e-12, grad=True, name="grad-2d"),
    Case(K.BATCH_MAT_MUL, lambda a, b: tp.matmul(a, b, transpose_a=True), (f64(P3), f64(Q[:, :2])),
         f64(_mm(P3.T, Q[:, :2])), rtol=1e-12, grad=True, name="grad-transpose-a"),
    Case(K.BATCH_MAT_MUL, lambda a, b: tp.matmul(a, b, transpose_b=True), (f64(P), f64(Q3)), f64(_mm(P, Q3.T)),
         rtol=1e-12, grad=True, name="grad-transpose-b"),
    Case(K.BATCH_MAT_MUL, lambda a, b: tp.matmul(a, b, transpose_a=True, transpose_b=True), (f64(P3), f64(Q3)),
         f64(_mm(P3.T, Q3.T)), rtol=1e-12, grad=True, name="grad-transpose-both"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f64(E4), f64(E3)), f64(_mm(E4, E3)), rtol=1e-12, grad=True,
         name="grad-broadcast-batch"),
    Case(K.BATCH_MAT_MUL, tp.matmul, (f64(U3), f64(P3)), f64(_mm(U3[None, :], P3)[0]), rtol=1e-12, grad=True,
         name="grad-vector-matrix"),
    # -- Einsum --------------------------------------------------------------------------------------------------
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (f32(A), f32(B)), f32(AB), name="matmul"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk", a, b), (f32(A), f32(B)), f32(AB), name="implicit-output"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ba,cb", a, b), (f32(A), f32(B)), f32(np.transpose(BA)),
         name="implicit-output-sorted"),  # out[a, c] = sum_b A[b, a] B[c, b] = (B A)[c, a]
    Case(K.EINSUM, lambda a, b: tp.einsum(" Ab , bC -> AC ", a, b), (f32(A), f32(B)), f32(AB),
         name="uppercase-and-spaces"),
    Case(K.EINSUM, lambda a: tp.einsum("ii", a), (f32(A),), f32(5.0), name="trace"),
    Case(K.EINSUM, lambda a: tp.einsum("ii->i", a), (f32(A),), f32([1.0, 4.0]), name="diagonal"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->ji", a), (f32(A),), f32([[1.0, 3.0], [2.0, 4.0]]), name="transpose"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->", a), (f32(A),), f32(10.0), name="sum-all"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->j", a), (f32(A),), f32([4.0, 6.0]), name="sum-axis"),
    Case(K.EINSUM, lambda a, b: tp.einsum("i,j->ij", a, b), (f32([1.0, 2.0]), f32([3.0, 4.0, 5.0])),
         f32([[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]), name="outer"),
    Case(K.EINSUM, lambda a, b: tp.einsum("i,i", a, b), (f32([1.0, 2.0, 3.0]), f32([4.0, 5.0, 6.0])), f32(32.0),
         name="dot"),
    Case(K.EINSUM, lambda a, b: tp.einsum("bij,bjk->bik", a, b), (f32([A, B]), f32([B, A])), f32([AB, BA]),
         name="batched"),
    Case(K.EINSUM, lambda a, b: tp.einsum("...ij,...jk->...ik", a, b), (f32([[A], [B]]), f32([I2, A, [[2.0, 0.0],
         [0.0, 2.0]]])), f32([[A, AA, np.multiply(2.0, A)], [B, BA, np.multiply(2.0, B)]]), name="ellipsis-broadcast"),
    Case(K.EINSUM, lambda a, b: tp.einsum("...i,...i", a, b), (f32(A), f32([1.0, 1.0])), f32([3.0, 7.0]),
         name="ellipsis-implicit"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->...ij", a), (f32(A),), f32(A), name="ellipsis-of-no-axes"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,ij->ij", a, b), (f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
         f32([[10.0, 20.0, 30.0]])), f32([[10.0, 40.0, 90.0], [40.0, 100.0, 180.0]]), name="size-one-broadcasts"),
    # u^T A v with u = (1, 2), v = (1, -1): A v = (-1, -1), u . (-1, -1) = -3
    Case(K.EINSUM, lambda u, a, v: tp.einsum("i,ij,j->", u, a, v), (f32([1.0, 2.0]), f32(A), f32([1.0, -1.0])),
         f32(-3.0), name="three-operands"),
    Case(K.EINSUM, lambda a, b: tp.einsum(",->", a, b), (f32(2.0), f32(3.0)), f32(6.0), name="scalars"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (f64(A), f64(B)), f64(AB), name="f64"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (i32(A), i32(B)), i32(AB), name="int32"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (i64(A), i64(B)), i64(AB), name="int64"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (i32(A), f32(B)), f32(AB), name="int32-float32-promotes"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (f32(np.zeros((2, 0))), f32(np.zeros((0, 3)))),
         f32(np.zeros((2, 3))), name="empty-contraction-is-zero"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->i", a), (f32(np.zeros((0, 3))),), f32([]), name="empty-output"),
    Case(K.EINSUM, lambda a, b: tp.einsum("i,i", a, b), (f32([inf, 1.0]), f32([0.0, 1.0])), f32(nan),
         name="inf-times-zero"),
    Case(K.EINSUM, lambda a: tp.einsum("ij,jk->ik", a), (f32(A),), raises=tp.TensorplugError,
         match="names 2 operand", name="operand-count"),
    Case(K.EINSUM, lambda a: tp.einsum("ijk->i", a), (f32(A),), raises=tp.ShapeError, match="operand of rank 2",
         name="labels-rank-mismatch"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk", a, b), (f32(np.ones((2, 3))), f32(np.ones((2, 3)))),
         raises=tp.ShapeError, match="label 'j' has size", name="label-size-mismatch"),
    Case(K.EINSUM, lambda a: tp.einsum("ii", a), (f32(np.ones((2, 3))),), raises=tp.ShapeError,
         match="repeated within an operand", name="non-square-diagonal"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->k", a), (f32(A),), raises=tp.TensorplugError,
         match="not a label of any operand", name="unknown-output-label"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->ii", a), (f32(A),), raises=tp.TensorplugError, match="repeats label",
         name="repeated-output-label"),
    Case(K.EINSUM, lambda a: tp.einsum("i1->i", a), (f32(A),), raises=tp.TensorplugError,
         match="not a list of labels", name="bad-character"),
    Case(K.EINSUM, lambda a: tp.einsum("ij->ij->ij", a), (f32(A),), raises=tp.TensorplugError,
         match="more than one '->'", name="two-arrows"),
    Case(K.EINSUM, lambda a: tp.einsum("...i->i", a), (f32(np.ones((2, 3))),), raises=tp.ShapeError,
         match="must name '...'", name="ellipsis-dropped-from-output"),
    Case(K.EINSUM, lambda a, b: tp.einsum("i,i", a, b), (b8([True]), b8([True])), raises=tp.DTypeError,
         match="numeric", name="bool"),
    Case(K.EINSUM, lambda: tp.einsum("ij"), (), raises=tp.TensorplugError, match="at least one operand",
         name="no-operands"),
    Case(K.EINSUM, lambda a: tp.einsum(NOT_A_STR, a), (f32(A),), raises=TypeError, match="must be a str",
         name="equation-not-str"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (f64(P), f64(Q)), f64(_mm(P, Q)), rtol=1e-12,
         grad=True, name="grad-matmul"),
    Case(K.EINSUM, lambda a: tp.einsum("ii", a), (f64(S),), f64(S[0, 0] + S[1, 1] + S[2, 2]), rtol=1e-12, grad=True,
         name="grad-trace"),
    Case(K.EINSUM, lambda a: tp.einsum("ii->i", a), (f64(S),), f64([S[0, 0], S[1, 1], S[2, 2]]), grad=True,
         name="grad-diagonal"),
    Case(K.EINSUM, lambda a, v: tp.einsum("iji,j->", a, v), (f64(T3), f64(V2)),
         f64(sum(T3[i, j, i] * V2[j] for i in range(3) for j in range(2))), rtol=1e-12, grad=True,
         name="grad-repeated-label-and-vector"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->i", a, b), (f64(P), f64(Q)), f64(np.sum(_mm(P, Q), axis=1)),
         rtol=1e-12, grad=True, name="grad-label-summed-within-one-operand"),
    Case(K.EINSUM, lambda a, b: tp.einsum("ij,jk->ik", a, b), (f64(C1), f64(Q)),
         f64(C1 * np.sum(Q, axis=0)[None, :]), rtol=1e-12, grad=True, name="grad-size-one-broadcasts"),
    Case(K.EINSUM, lambda a, b: tp.einsum("...ij,...jk->...ik", a, b), (f64(E4), f64(E3)), f64(_mm(E4, E3)),
         rtol=1e-12, grad=True, name="grad-ellipsis-broadcast"),
    Case(K.EINSUM, lambda a, b, c: tp.einsum("ij,jk,kl", a, b, c), (f64(P), f64(Q), f64(R)), f64(_mm(_mm(P, Q), R)),
         rtol=1e-12, grad=True, name="grad-three-operands"),
    Case(K.EINSUM, lambda a: tp.einsum("i,i", a, a), (f64(U3),), f64(np.sum(U3 * U3)), rtol=1e-12, grad=True,
         name="grad-same-operand-twice"),
]  # fmt: skip
