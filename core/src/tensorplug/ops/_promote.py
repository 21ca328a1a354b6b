"""Dtype promotion of operands: TensorFlow.js's rule for tensors, weak Python scalars, and the cached scalar tensors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import DTypeError, ShapeError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._convert import as_tensor, cast, tensor
from tensorplug.ops._shapes import broadcast_shapes

_SCALARS: dict[tuple[Any, type, str, str], Tensor] = {}
_SCALARS_MAX = 1024


def scalar_like(value: bool | int | float, other: Tensor) -> Tensor:
    """A Python scalar meeting tensor ``other``, as a tensor of its weak dtype.

    Tensors are immutable, so the scalars that ops and gradients use over
    and over (``1.0 - y``, ``x * 2.0``) are made once per backend and dtype.
    Float zeros are not cached: 0.0 == -0.0, with equal hashes, so the key
    would confuse them (np.float64 is a float too).
    """
    dtype = _dtypes.weak_scalar_dtype(value, other.dtype)
    backend = engine.active or engine.ensure_active()
    key = (value, type(value), dtype, backend.name)
    cached = _SCALARS.get(key)
    if cached is not None and cached._backend is backend:
        return cached
    t = tensor(value, dtype)
    if value or not isinstance(value, float):
        if len(_SCALARS) >= _SCALARS_MAX:
            _SCALARS.clear()
        _SCALARS[key] = t
    return t


def binary_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Convert and promote two operands to one dtype, and check that their shapes broadcast."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype == b.dtype):  # else nothing to promote
        a, b = promote_operands(op, a, b)
    sa, sb = a._data.shape, b._data.shape
    if sa != sb:
        try:
            broadcast_shapes(op, sa, sb)
        except ShapeError:
            raise ShapeError(
                f"{op}: shapes {tuple(sa)} and {tuple(sb)} cannot be broadcast together "
                f"({describe(a)} and {describe(b)} on backend {a.backend!r}); each dimension must match or be 1"
            ) from None
    return a, b


def promote_all(values: Sequence[Any]) -> list[Tensor]:
    """A non-empty sequence of tensor-likes as tensors cast to their common dtype (:func:`_dtypes.promote`)."""
    ts = [as_tensor(v) for v in values]
    dtype = ts[0].dtype
    for t in ts[1:]:
        dtype = _dtypes.promote(dtype, t.dtype)
    return [cast(t, dtype) for t in ts]


def promote_operands(op: str, a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Convert two operands to tensors and promote them to one dtype.

    Tensors (and numpy arrays, numpy scalars and lists, which become tensors
    first) promote as TensorFlow.js does: the higher dtype of the two, so an
    integer meeting a float takes the float's dtype (int32 + float32 is
    float32, where NumPy gives float64). A Python scalar is weak: it takes the
    other operand's dtype, unless its kind is higher (a float meeting an
    integer tensor), in which case both take the default dtype of that kind.
    """
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype == b.dtype:
        return a, b  # the common case: nothing to convert or promote
    weak_a = isinstance(a, bool | int | float)
    weak_b = isinstance(b, bool | int | float)
    if not isinstance(a, Tensor) and not weak_a:
        a = tensor(a)
    if not isinstance(b, Tensor) and not weak_b:
        b = tensor(b)
    if weak_a and weak_b:
        a = tensor(a)
        weak_a = False
    if weak_b:
        b = _weak_scalar(op, b, a)
        return (a if a.dtype == b.dtype else cast(a, b.dtype)), b
    if weak_a:
        a = _weak_scalar(op, a, b)
        return a, (b if b.dtype == a.dtype else cast(b, a.dtype))
    da, db = a.dtype, b.dtype
    if da != db:
        target = _dtypes.promote(da, db)
        if da != target:
            a = cast(a, target)
        if db != target:
            b = cast(b, target)
    return a, b


def _weak_scalar(op: str, value: bool | int | float, other: Tensor) -> Tensor:
    try:
        return scalar_like(value, other)
    except DTypeError as exc:  # an int past the range of other's integer dtype (as NumPy's OverflowError)
        raise DTypeError(
            f"{op}: the Python scalar {value!r} does not fit {other.dtype}, the dtype of the other operand "
            f"({describe(other)}); make it a tensor of a wider dtype first, e.g. tp.tensor({value!r}, 'int64')"
        ) from exc
