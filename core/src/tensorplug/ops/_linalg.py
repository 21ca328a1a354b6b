"""Linear algebra: ``matmul`` (the BatchMatMul kernel) and ``einsum`` (the Einsum kernel)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorplug import kernel_names as K
from tensorplug._runtime._engine import dispatch, engine, run_entry
from tensorplug._runtime._errors import DTypeError, InvalidArgumentError, ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._checked import Site, entry_of_pair
from tensorplug.ops._promote import promote_all, promote_operands
from tensorplug.ops._shape import reshape
from tensorplug.ops._shapes import broadcast_shapes

__all__ = ["matmul", "einsum"]

_MATMUL = Site("matmul", K.BATCH_MAT_MUL)  # its checked calls (see ops._checked): two matrices, nothing to reshape

# The labels an equation may use: string.ascii_letters (importing `string` would cost 0.4 ms at import).
EINSUM_LABELS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
    """Matrix product over the last two axes, batch axes broadcasting (NumPy's ``matmul``).

    1-D operands are treated as a row (``a``) or a column (``b``) vector and
    that axis is dropped from the result, as in NumPy.

    >>> import tensorplug as tp
    >>> tp.matmul(tp.ones((2, 3)), tp.ones((3, 4))).shape
    (2, 4)
    """
    entry = entry_of_pair(_MATMUL, a, b)  # None until a call on tensors of this dtype passed the dtype checks
    if entry is None:
        table = engine.table
        before_a, before_b = a, b
        a, b = promote_operands("matmul", a, b)
        if a.dtype == "bool":
            raise DTypeError(f"matmul: expects numeric tensors, got {describe(a)} and {describe(b)}")
    ra, rb = a._data, b._data
    sa, sb = ra.shape, rb.shape
    if len(sa) == 2 and len(sb) == 2 and sa[0 if transpose_a else 1] == sb[1 if transpose_b else 0]:
        # two matrices whose inner dimensions agree (the common case): nothing to reshape or broadcast
        attrs = {"transpose_a": transpose_a, "transpose_b": transpose_b}
        if entry is not None:
            return run_entry(entry, {"a": a, "b": b}, {"a": ra, "b": rb}, attrs)
        out = dispatch(K.BATCH_MAT_MUL, {"a": a, "b": b}, attrs)
        if a is before_a and b is before_b:  # tensors taken as they were, of one dtype, not bool
            _MATMUL.learn(a.dtype, table, out)
        return out
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must have at least one dimension, got {describe(a)} and {describe(b)}")
    given_a, given_b = a, b  # before 1-D operands become matrices, for messages
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
            f"times {describe(b)}{' (transposed)' if transpose_b else ''} ({ka} != {kb}); "
            f"the operands: {describe(given_a)} and {describe(given_b)}"
        )
    try:
        batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
    except ShapeError:
        raise ShapeError(
            f"matmul: the batch dimensions of {describe(a)} and {describe(b)} (all but the last two) do not broadcast"
        ) from None
    out = dispatch(K.BATCH_MAT_MUL, {"a": a, "b": b}, {"transpose_a": transpose_a, "transpose_b": transpose_b})
    if squeeze_a or squeeze_b:
        shape = batch + ((m,) if not squeeze_a else ()) + ((n,) if not squeeze_b else ())
        out = reshape(out, shape)
    return out


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation over the operands' labelled axes, as NumPy's ``einsum``.

    Supported: any number of operands, implicit output (``"ij,jk"``: the
    labels seen once, sorted), labels repeated within an operand (``"ii->i"``
    takes a diagonal, ``"ii"`` a trace), labels summed within one operand,
    ``...`` for broadcast leading axes, and size-1 axes broadcasting against
    the same label elsewhere (a superset of TensorFlow.js's einsum, which
    takes two operands at most). Not supported: NumPy's sublist form
    (``einsum(a, [0, 1], b, [1, 2])``) and its ``out``/``dtype``/``optimize``
    arguments. Operands promote to one dtype; bool is refused.
    The kernel gets the equation in explicit form with ``...`` spelled out
    as letters, so a backend only has to handle ``"ab,bc->ac"``.

    >>> import tensorplug as tp
    >>> tp.einsum("ij,jk->ik", tp.ones((2, 3)), tp.ones((3, 4))).shape
    (2, 4)
    >>> tp.einsum("ii", tp.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    5.0
    """
    if not isinstance(equation, str):
        raise DTypeError(f"einsum: the equation must be a str such as 'ij,jk->ik', got {type(equation).__name__}")
    if not operands:
        raise InvalidArgumentError(f"einsum({equation!r}): needs at least one operand")
    tensors = promote_all(operands)
    if tensors[0].dtype == "bool":  # only when every operand is bool
        raise DTypeError(f"einsum: expects numeric tensors, got {', '.join(describe(t) for t in tensors)}")
    canonical = _explicit_equation(equation, [t.shape for t in tensors])
    return dispatch(K.EINSUM, {"tensors": tensors}, {"equation": canonical})


def _explicit_equation(equation: str, shapes: Sequence[tuple[int, ...]]) -> str:
    """``equation`` checked against the operands' shapes and written as ``"ab,bc->ac"``: no spaces, no ellipsis."""
    where = f"einsum({equation!r})"
    compact = equation.replace(" ", "")
    if compact.count("->") > 1:
        raise InvalidArgumentError(f"{where}: the equation has more than one '->'")
    lhs, arrow, rhs = compact.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise InvalidArgumentError(
            f"{where}: the equation names {len(terms)} operand(s) but {len(shapes)} were given; "
            "separate the operands' labels with commas"
        )
    for term in [*terms, rhs]:
        if term.count("...") > 1 or any(c not in EINSUM_LABELS for c in term.replace("...", "")):
            raise InvalidArgumentError(
                f"{where}: {term!r} is not a list of labels; labels are the letters a-z and A-Z, with at most "
                "one '...' per operand"
            )
    # Spell out '...': its axes broadcast right-aligned, as NumPy's; each gets an unused letter.
    ranks = [len(shape) - len(term.replace("...", "")) for term, shape in zip(terms, shapes, strict=True)]
    for term, shape, rank in zip(terms, shapes, ranks, strict=True):
        if rank < 0 or (rank > 0 and "..." not in term):
            raise ShapeError(
                f"{where}: the labels {term!r} do not match an operand of rank {len(shape)} (shape {shape}); "
                "give one label per axis, or '...' for the leading axes"
            )
    spare = [c for c in EINSUM_LABELS if c not in compact]
    ellipsis_rank = max((r for term, r in zip(terms, ranks, strict=True) if "..." in term), default=0)
    if ellipsis_rank > len(spare):
        raise InvalidArgumentError(f"{where}: '...' stands for {ellipsis_rank} axes, more than the unused letters left")
    ellipsis = "".join(spare[:ellipsis_rank])
    terms = [term.replace("...", ellipsis[ellipsis_rank - r :]) for term, r in zip(terms, ranks, strict=True)]
    if arrow:
        if "..." not in rhs and ellipsis_rank:
            raise ShapeError(
                f"{where}: '...' covers {ellipsis_rank} axes of the operands, so the output must name '...' too"
            )
        output = rhs.replace("...", ellipsis)
    else:
        seen = "".join(terms)
        output = ellipsis + "".join(sorted(c for c in set(seen) if seen.count(c) == 1 and c not in ellipsis))
    _check_label_sizes(where, terms, output, shapes)
    return ",".join(terms) + "->" + output


def _check_label_sizes(where: str, terms: list[str], output: str, shapes: Sequence[tuple[int, ...]]) -> None:
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes, strict=True):
        own: dict[str, int] = {}
        for label, size in zip(term, shape, strict=True):
            if own.setdefault(label, size) != size:
                raise ShapeError(
                    f"{where}: label {label!r} is repeated within an operand of shape {shape} with different "
                    f"sizes ({own[label]} and {size}); a repeated label takes a diagonal, which must be square"
                )
            if sizes.get(label, 1) not in (1, size) and size != 1:
                raise ShapeError(
                    f"{where}: label {label!r} has size {sizes[label]} in one operand and {size} in another "
                    f"(shapes {', '.join(str(s) for s in shapes)}); sizes of a label must match or be 1"
                )
            if size != 1:
                sizes[label] = size
    for label in output:
        if output.count(label) > 1:
            raise InvalidArgumentError(f"{where}: the output repeats label {label!r}; each output label must be unique")
        if not any(label in term for term in terms):
            raise InvalidArgumentError(f"{where}: the output label {label!r} is not a label of any operand")
