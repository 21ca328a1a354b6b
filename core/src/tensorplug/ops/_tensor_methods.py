"""Tensor's operators and methods, made of ops: attached to ``Tensor`` when the ops layer is imported.

``Tensor`` and ``Variable`` (``tensorplug._runtime``) hold storage and metadata and know nothing of ops; the
ops layer gives them ``+``, ``==``, ``t[key]``, ``t.sum()``... here, as JAX's numpy layer gives its Array its
operators. The runtime declares each of them under ``TYPE_CHECKING`` (their signatures), so that type
checkers and editors see them; ``attach`` puts these functions in their place, and
tests/unit/test_layers.py checks that every declared one is attached. An operator whose op takes
``(a, b)`` is the op itself (one Python call less per operator); a reflected one swaps its operands.
"""

from __future__ import annotations

from typing import Any

from tensorplug._runtime._engine import engine
from tensorplug._runtime._storage import moved_storage
from tensorplug._runtime._tensor import Tensor, wrap_storage
from tensorplug._runtime._variable import use_conversions
from tensorplug.ops import _getitem
from tensorplug.ops._binary import (
    add,
    div,
    equal,
    floor_div,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_or,
    logical_xor,
    mod,
    mul,
    not_equal,
    pow,
    sub,
)
from tensorplug.ops._convert import as_tensor, cast, tensor
from tensorplug.ops._linalg import matmul
from tensorplug.ops._reduction import any, max, mean, min, sum
from tensorplug.ops._shape import reshape as _reshape
from tensorplug.ops._shape import transpose as _transpose
from tensorplug.ops._unary import abs, logical_not, neg

__all__ = ["METHODS", "attach"]


def item_at(self: Tensor, key: Any) -> Tensor:
    """``t[key]`` as NumPy indexes: ints, slices, ``None``, ``...`` and one integer array (differentiable).

    Lowered to one StridedSlice, plus a GatherV2 for an integer array.
    Out-of-range and unsupported indices raise ``tp.IndexingError`` (an IndexError). Examples are in the
    class's docstring.
    """
    return _getitem.getitem(self, key)


def contains(self: Tensor, value: Any) -> bool:
    """``value in t``: whether any element equals ``value`` (NumPy's ``(t == value).any()``)."""
    return bool(any(equal(self, value)))


def radd(self: Tensor, other: Any) -> Tensor:
    return add(other, self)


def rsub(self: Tensor, other: Any) -> Tensor:
    return sub(other, self)


def rmul(self: Tensor, other: Any) -> Tensor:
    return mul(other, self)


def rtruediv(self: Tensor, other: Any) -> Tensor:
    return div(other, self)


def rpow(self: Tensor, other: Any) -> Tensor:
    return pow(other, self)


def rmatmul(self: Tensor, other: Any) -> Tensor:
    return matmul(other, self)


def rfloordiv(self: Tensor, other: Any) -> Tensor:
    return floor_div(other, self)


def rmod(self: Tensor, other: Any) -> Tensor:
    return mod(other, self)


def rand(self: Tensor, other: Any) -> Tensor:
    return logical_and(other, self)


def ror(self: Tensor, other: Any) -> Tensor:
    return logical_or(other, self)


def rxor(self: Tensor, other: Any) -> Tensor:
    return logical_xor(other, self)


def to_backend(self: Tensor, name: str) -> Tensor:
    """A new tensor with these values on backend ``name`` (zero-copy through DLPack where both sides allow)."""
    target = engine.initialize(name)
    if target is self._backend:
        return tensor(self)
    return wrap_storage(moved_storage(self, target, f"to_backend({name!r})"), target, self._dtype)


def reshape(self: Tensor, *shape: Any) -> Tensor:
    """``tp.reshape(t, shape)``; the shape as one sequence or as separate ints (``t.reshape(2, 3)``)."""
    target = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
    return _reshape(self, target)


def _t(self: Tensor) -> Tensor:
    """The axes reversed (``tp.transpose(t)``)."""
    return _transpose(self)


def astype(self: Tensor, dtype: Any) -> Tensor:
    """``tp.cast(t, dtype)``."""
    return cast(self, dtype)


METHODS: dict[str, Any] = {
    "__getitem__": item_at,
    "__contains__": contains,
    "__add__": add,
    "__radd__": radd,
    "__sub__": sub,
    "__rsub__": rsub,
    "__mul__": mul,
    "__rmul__": rmul,
    "__truediv__": div,
    "__rtruediv__": rtruediv,
    "__pow__": pow,
    "__rpow__": rpow,
    "__matmul__": matmul,
    "__rmatmul__": rmatmul,
    "__floordiv__": floor_div,
    "__rfloordiv__": rfloordiv,
    "__mod__": mod,
    "__rmod__": rmod,
    "__and__": logical_and,
    "__rand__": rand,
    "__or__": logical_or,
    "__ror__": ror,
    "__xor__": logical_xor,
    "__rxor__": rxor,
    "__invert__": logical_not,
    "__abs__": abs,
    "__neg__": neg,
    "__lt__": less,
    "__le__": less_equal,
    "__gt__": greater,
    "__ge__": greater_equal,
    "__eq__": equal,
    "__ne__": not_equal,
    "to_backend": to_backend,
    "reshape": reshape,
    "transpose": _transpose,
    "T": property(_t),
    "astype": astype,
    "sum": sum,
    "mean": mean,
    "max": max,
    "min": min,
}
"""Each operator and method of Tensor that ops make, by name."""


def attach() -> None:
    """Give ``Tensor`` (and so ``Variable``) its operators and methods, and ``Variable`` its conversions."""
    for name, method in METHODS.items():
        setattr(Tensor, name, method)
    use_conversions(tensor, as_tensor)
