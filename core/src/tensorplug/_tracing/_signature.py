"""The signature of a ``tp.function`` call, and structures of tensors (its arguments and its results).

A call's cache key holds, per tensor argument, its backend, shape and dtype; per Variable argument, the
Variable itself (by id); per other Python value, the value, compared as NumPy tells values apart: ``0.0``
and ``-0.0`` are two keys (``x / s`` differs), as are NaNs of different bits, and ``np.float32(1)`` and
``np.float64(1)`` (``value_key``, which keys the attrs in the gradient programs' signatures too). The same
tensor passed twice is one argument of the trace, not two (a gradient with respect to one is a gradient with
respect to the other), so the key says which arguments are one tensor.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorplug._runtime._errors import InvalidArgumentError
from tensorplug._runtime._tensor import Tensor
from tensorplug._runtime._variable import Variable

_pack_double = struct.Struct("<d").pack


def signature(fname: str, value: Any, key: list[Any], leaves: list[Tensor], where: str) -> None:
    """Append ``value``'s part of the cache key to ``key``, and its tensors (Variables left out) to ``leaves``."""
    kind = type(value)
    if kind is Tensor:
        key.append((value._backend, value._data.shape, value._dtype or value.dtype))
        leaves.append(value)
    elif kind is Variable or isinstance(value, Variable):
        key.append((Variable, id(value), value._backend, value._data.shape, value.dtype))
    elif isinstance(value, Tensor):
        key.append((kind, value._backend, value._data.shape, value.dtype))
        leaves.append(value)
    elif kind is tuple or kind is list or (isinstance(value, tuple) and hasattr(value, "_fields")):
        key.append((kind, len(value)))
        for i, item in enumerate(value):
            signature(fname, item, key, leaves, f"{where}[{i}]")
    elif kind is dict:
        key.append((dict, tuple(value)))
        for k, item in value.items():
            signature(fname, item, key, leaves, f"{where}[{k!r}]")
    else:
        key.append(static_key(fname, value, where))


def static_key(fname: str, value: Any, where: str) -> Any:
    """The key of a static (Python) argument: equal for values NumPy computes with alike, and only for those."""
    try:
        return value_key(value)
    except TypeError:
        hint = " (a numpy array: pass tp.tensor(array))" if hasattr(value, "__array__") else ""
        raise InvalidArgumentError(
            f"tp.function {fname!r}: {where} is a {type(value).__name__}{hint}, which is not hashable, so it cannot "
            "be part of the trace signature (Python values are static: a new value traces again). Pass "
            "tensors, hashable Python values, or lists, tuples and dicts of them"
        ) from None


def attrs_key(attrs: dict[str, Any]) -> tuple[Any, ...] | None:
    """A kernel call's attrs as part of a cache key (the gradient programs' signatures), each value keyed as
    :func:`static_key` keys tp.function's Python arguments (bools, ints and strings inline, as :func:`value_key`
    keys them; tuples of ints, axes and shapes, by their type and the tuple itself); None if a value is not
    hashable. A backward pass keys every record's attrs: the commonest ones skip the call."""
    if not attrs:
        return ()
    keyed: list[tuple[Any, ...]] = []
    for name, value in attrs.items():
        kind = type(value)
        if kind is bool or kind is int or kind is str:  # most attrs (flags, sizes, names), keyed inline
            keyed.append((name, (kind, value)))  # value_key's key of it
        elif kind is tuple and all(type(item) is int for item in value):  # axes, shapes, strides
            keyed.append((name, tuple, value))
        else:
            try:
                keyed.append((name, value_key(value)))
            except TypeError:
                return None
    return tuple(keyed)


def value_key(value: Any) -> Any:
    """The key of a Python value, equal for values NumPy computes with alike and only for those (the sign of a
    zero, a NaN's bits, ``1``, ``1.0``, ``True`` and ``np.float32(1)`` apart); lists and tuples item by item.
    Raises TypeError for a value that is not hashable."""
    kind = type(value)
    if kind is float:  # 0.0 == -0.0 and their hashes too, and a NaN equals nothing: the bits tell them apart
        return (float, _pack_double(value))
    if kind is int or kind is str or kind is bool or value is None:
        return (kind, value)
    if kind is complex:
        return (complex, _pack_double(value.real), _pack_double(value.imag))
    if isinstance(value, np.generic):  # np.float64 is a float: its type, dtype (datetime units) and bits
        return (kind, value.dtype, value.tobytes())
    if kind is tuple or kind is list:
        return (kind, *[value_key(item) for item in value])
    hash(value)  # TypeError: not hashable
    return (kind, value)


def aliases(leaves: list[Tensor]) -> tuple[int, ...] | None:
    """None when the tensors of ``leaves`` are distinct objects; otherwise, for each, the position of its first
    occurrence (the part of the key that says which arguments are one tensor), and ``leaves`` keeps each
    tensor once, at its first occurrence (the arguments of the trace)."""
    if len({id(t) for t in leaves}) == len(leaves):
        return None
    first: dict[int, int] = {}
    pattern = tuple(first.setdefault(id(t), i) for i, t in enumerate(leaves))
    leaves[:] = [t for i, t in enumerate(leaves) if pattern[i] == i]
    return pattern


def flatten(value: Any, leaves: list[Tensor]) -> Any:
    """The structure of ``value`` with its Tensors collected in ``leaves`` (for :func:`unflatten`)."""
    kind = type(value)
    if isinstance(value, Tensor):
        leaves.append(value)
        return None
    if kind is tuple or kind is list:
        return (kind, [flatten(v, leaves) for v in value])
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (kind, [flatten(v, leaves) for v in value])
    if kind is dict:
        return (dict, {k: flatten(v, leaves) for k, v in value.items()})
    return ("static", value)


def unflatten(structure: Any, leaves: Any) -> Any:
    if structure is None:
        return next(leaves)
    kind, content = structure
    if kind == "static":
        return content
    if kind is dict:
        return {k: unflatten(v, leaves) for k, v in content.items()}
    items = [unflatten(v, leaves) for v in content]
    if kind is tuple or kind is list:
        return kind(items)
    return kind(*items)  # a NamedTuple (tp.variable_grads's result, say)


def rebuild(value: Any, swap: Callable[[Tensor], Tensor]) -> Any:
    """``value`` with each Tensor replaced by ``swap(tensor)`` (the arguments the trace sees), in the order
    :func:`signature` lists them."""
    if isinstance(value, Tensor):
        return swap(value)
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(rebuild(v, swap) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return kind(*(rebuild(v, swap) for v in value))
    if kind is dict:
        return {k: rebuild(v, swap) for k, v in value.items()}
    return value
