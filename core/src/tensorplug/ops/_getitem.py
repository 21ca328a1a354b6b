"""Tensor indexing: a NumPy-style key lowered to one StridedSlice, plus one GatherV2 for an integer array.

``Tensor.__getitem__`` calls :func:`getitem`. The basic indices (ints,
slices, ``None``, ``...``) become one StridedSlice whose attrs are already
canonical (what ``slice_spec`` resolves them to: one entry per axis of the
result before shrinking, bounds clamped as ``slice.indices`` clamps them,
which is NumPy's rule), so the kernel and the StridedSlice gradient see
plain, checked numbers. One integer array (a list, a numpy array, an int
Tensor, or a 1-d boolean mask given as host data) on one axis becomes a
GatherV2 of the sliced result. Its dimensions take the array's place, or
go first when a slice, ``None`` or ``...`` separates it from an int index,
which is where NumPy puts them. Host indices are checked and wrapped here;
an int Tensor's indices stay on the device (negative ones are wrapped with
ops, out-of-range ones are reported by the gather kernel).
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime import _dtypes
from tensorplug._runtime._engine import dispatch
from tensorplug._runtime._errors import DTypeError, IndexingError, KernelError, ShapeError
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops._binary import add, less, where
from tensorplug.ops._convert import from_host
from tensorplug.ops._indexing import gather
from tensorplug.ops._shape import transpose
from tensorplug.ops._slicing import canonical_slice_attrs

SUPPORTED = "ints, slices, None, ... and one integer array (a list, a numpy array or an int tensor) per index"

# What each entry of a key is: a new axis, the ellipsis, or an index into one axis of x.
_NEW, _ELLIPSIS, _INT, _SLICE, _ARRAY = range(5)


# Canonical attrs of basic keys (ints, slices, None, ...), by (shape, key): tensors are indexed in loops, and
# lowering a key costs more than the kernel. Attrs are never mutated (the engine shares them the same way).
_ATTRS: dict[tuple[Any, ...], dict[str, Any]] = {}
_ATTRS_MAX = 1024


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``, with NumPy's semantics for the indices listed in ``SUPPORTED``."""
    shape = tuple(x._data.shape)
    kind = type(key)
    if kind is int:
        cache_key: tuple[Any, ...] | None = (shape, key)
    elif kind is slice:
        bounds = _bounds(key)
        cache_key = None if bounds is None else (shape, (bounds,))  # as x[(key,)]: the same lowering
    else:
        cache_key = _basic_key(shape, key) if kind is tuple else None
    if cache_key is not None:
        attrs = _ATTRS.get(cache_key)
        if attrs is not None:
            return dispatch(K.STRIDED_SLICE, {"x": x}, attrs)
    if kind is int and shape and -shape[0] <= key < shape[0]:
        attrs = _row_attrs(shape, key % shape[0])
    else:
        items = key if kind is tuple else (key,)
        attrs, gathered = _lower(x, shape, items)
        if gathered is not None:
            return _gather(x, items, attrs, gathered)
    if cache_key is not None:
        if len(_ATTRS) >= _ATTRS_MAX:
            _ATTRS.clear()
        _ATTRS[cache_key] = attrs
    return dispatch(K.STRIDED_SLICE, {"x": x}, attrs)


def _basic_key(shape: tuple[int, ...], key: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """A cache key for a key of plain ints, slices of ints, None and ..., or None for any other key."""
    items: list[Any] = []
    for item in key:
        kind = type(item)
        if kind is slice:
            bounds = _bounds(item)
            if bounds is None:
                return None
            items.append(bounds)
        elif kind is int or item is None or item is Ellipsis:
            items.append(item)
        else:
            return None
    return (shape, tuple(items))


def _bounds(s: slice) -> tuple[int | None, ...] | None:
    """A slice's bounds when each is an int or None (1.0 == 1 must not find x[1:]'s attrs), else None."""
    bounds = (s.start, s.stop, s.step)
    for v in bounds:
        if v is not None and type(v) is not int:
            return None
    return bounds


def _row_attrs(shape: tuple[int, ...], i: int) -> dict[str, Any]:
    """Canonical StridedSlice attrs of ``x[i]`` for ``0 <= i < shape[0]``."""
    rank = len(shape)
    return {
        "begin": (i,) + (0,) * (rank - 1),
        "end": (i + 1, *shape[1:]),
        "strides": (1,) * rank,
        "begin_mask": 0,
        "end_mask": 0,
        "ellipsis_mask": 0,
        "new_axis_mask": 0,
        "shrink_axis_mask": 1,
    }


def _lower(x: Tensor, shape: tuple[int, ...], items: tuple[Any, ...]) -> tuple[dict[str, Any], _Gathered | None]:
    """Canonical StridedSlice attrs for ``items``, and the gather that follows when one entry is an array."""
    ndim = len(shape)
    entries = [_classify(x, items, item) for item in items]
    kinds = [kind for kind, _ in entries]
    named = builtins.sum(1 for kind in kinds if kind >= _INT)
    if kinds.count(_ELLIPSIS) > 1:
        raise IndexingError(f"{_context(x, items)}: an index can only have a single ellipsis ('...')")
    if named > ndim:
        raise IndexingError(
            f"{_context(x, items)}: too many indices: the tensor is {ndim}-dimensional, but {named} were indexed"
        )
    if kinds.count(_ARRAY) > 1:
        raise IndexingError(
            f"{_context(x, items)}: {kinds.count(_ARRAY)} integer arrays in one index; tensor indexing supports "
            f"{SUPPORTED}. Index one axis at a time (x[rows][:, cols] takes the cross product), "
            "or use tp.gather_nd(x, indices) to pick elements point by point"
        )
    triples: list[tuple[int, int, int]] = []  # canonical (begin, end, stride), one per axis before shrinking
    new_bits = shrink_bits = end_bits = 0
    axis = out_axis = 0  # the axis of x, and of the sliced result, that the next entry refers to
    gathered = None
    for kind, value in entries:
        bit = 1 << len(triples)
        if kind == _ELLIPSIS:
            for d in shape[axis : axis + ndim - named]:
                triples.append((0, d, 1))
            axis += ndim - named
            out_axis += ndim - named
        elif kind == _NEW:
            triples.append((0, 1, 1))
            new_bits |= bit
            out_axis += 1
        elif kind == _INT:
            d = shape[axis]
            if not -d <= value < d:
                raise IndexingError(
                    f"{_context(x, items)}: index {value} is out of bounds for axis {axis} with size {d}"
                )
            i = value % d
            triples.append((i, i + 1, 1))
            shrink_bits |= bit
            axis += 1
        elif kind == _SLICE:
            first, stop, step = _slice_bounds(x, items, value, shape[axis])
            if not len(range(first, stop, step)):
                first, stop, step = 0, 0, 1
            elif stop < 0:  # a negative step running through index 0
                end_bits |= bit
                stop = 0
            triples.append((first, stop, step))
            axis += 1
            out_axis += 1
        else:  # _ARRAY: the whole axis here, gathered from afterwards
            gathered = _Gathered(out_axis, _indices(x, items, value, axis, shape[axis]), _advanced_apart(kinds))
            triples.append((0, shape[axis], 1))
            axis += 1
            out_axis += 1
    triples.extend((0, d, 1) for d in shape[axis:])
    return canonical_slice_attrs(triples, end_bits, new_bits, shrink_bits), gathered


class _Gathered(NamedTuple):
    """The integer-array entry of a key: where it lands in the sliced result, its positions, and placement."""

    axis: int
    indices: Tensor
    first: bool  # NumPy puts the array's dimensions first (a slice, None or ... separates it from an int)


def _gather(x: Tensor, items: tuple[Any, ...], attrs: dict[str, Any], gathered: _Gathered) -> Tensor:
    """The StridedSlice of ``attrs`` (skipped when it takes everything), then the gather, then NumPy's placement."""
    whole = not attrs["shrink_axis_mask"] and attrs["begin"] == (0,) * x.ndim and attrs["end"] == x.shape
    y = x if whole and attrs["strides"] == (1,) * x.ndim else dispatch(K.STRIDED_SLICE, {"x": x}, attrs)
    at, indices = gathered.axis, gathered.indices
    tracer = state.tracer
    if tracer is not None:  # tp.function is tracing: a replay's index out of range is an IndexingError too
        context = _context(x, items)
        previous = tracer.translate_errors(lambda exc: IndexingError(f"{context}: an index is out of bounds ({exc})"))
    try:
        y = gather(y, indices, axis=at)
    except KernelError as exc:  # an int Tensor's index out of range: the kernel checks the values
        raise IndexingError(f"{_context(x, items)}: an index is out of bounds ({exc})") from exc
    finally:
        if tracer is not None:
            tracer.translate_errors(previous)
    if gathered.first and at and indices.ndim:
        k = indices.ndim
        y = transpose(y, [*range(at, at + k), *range(at), *range(at + k, y.ndim)])
    return y


def _classify(x: Tensor, items: tuple[Any, ...], item: Any) -> tuple[int, Any]:
    """The kind of one entry of a key, and its value as the lowering wants it."""
    if item is None:
        return _NEW, None
    if item is Ellipsis:
        return _ELLIPSIS, None
    if type(item) is slice:
        return _SLICE, item
    if isinstance(item, bool | np.bool_):
        raise IndexingError(
            f"{_context(x, items)}: a boolean scalar index ({item!r}) is not supported; tensor indexing supports "
            f"{SUPPORTED}; use x[None] to add an axis"
        )
    if isinstance(item, int | np.integer):
        return _INT, int(item)
    if isinstance(item, Tensor):
        if item.dtype in _dtypes.INT_DTYPES:
            return _ARRAY, item
        if item.dtype == _dtypes.bool_:
            raise IndexingError(
                f"{_context(x, items)}: a boolean mask tensor ({describe(item)}) is not supported, since the "
                "result's shape would depend on its values; use tp.where(mask, x, fill) to keep the shape, "
                "or index with a host mask (mask.numpy()) or host positions (np.flatnonzero(mask.numpy()))"
            )
        raise IndexingError(
            f"{_context(x, items)}: an index tensor must be int32 or int64, got {describe(item)}; "
            "cast it with tp.cast(i, 'int32')"
        )
    if isinstance(item, list | tuple | np.ndarray):
        array = np.asarray(item)
        if array.ndim == 0 and array.dtype.kind in "iu":
            return _INT, int(array)
        if array.dtype.kind in "iub" or array.size == 0:
            return _ARRAY, array
    raise IndexingError(
        f"{_context(x, items)}: {type(item).__name__} {item!r} is not a valid index; "
        f"tensor indexing supports {SUPPORTED}"
    )


def _slice_bounds(x: Tensor, items: tuple[Any, ...], s: slice, size: int) -> tuple[int, int, int]:
    try:
        return s.indices(size)
    except ValueError:
        raise ShapeError(f"{_context(x, items)}: slice step cannot be zero") from None
    except TypeError:  # a TypeError, as NumPy raises
        raise DTypeError(
            f"{_context(x, items)}: slice bounds must be ints or None (or have __index__), got {s!r}"
        ) from None


def _indices(x: Tensor, items: tuple[Any, ...], value: Any, axis: int, size: int) -> Tensor:
    """Indices into an axis of ``size`` as an int tensor of positions in ``[0, size)`` (negative ones wrapped)."""
    if isinstance(value, Tensor):
        return where(less(value, 0), add(value, size), value)
    array: np.ndarray = value
    if array.dtype.kind == "b":
        if array.ndim != 1:
            raise IndexingError(
                f"{_context(x, items)}: a {array.ndim}-d boolean mask indexes several axes at once, which tensor "
                f"indexing does not support ({SUPPORTED}, or a 1-d boolean mask); use tp.where(mask, x, fill) "
                "to keep the shape, or tp.gather_nd(x, np.argwhere(mask)) for x[mask]"
            )
        if len(array) != size:
            raise IndexingError(
                f"{_context(x, items)}: boolean index did not match the tensor along axis {axis}; "
                f"size of axis is {size} but size of the boolean index is {len(array)}"
            )
        array = np.flatnonzero(array)
    if array.size:
        bad = (array < -size) | (array >= size)
        if bad.any():
            raise IndexingError(
                f"{_context(x, items)}: index {array[bad].flat[0]} is out of bounds for axis {axis} with size {size}"
            )
    array = array.astype(np.int64)  # a fresh array: from_host takes ownership
    array[array < 0] += size
    return from_host(array)


def _advanced_apart(kinds: list[int]) -> bool:
    """Whether a slice, None or ... stands between the int and array indices (NumPy then puts them first)."""
    advanced = [i for i, kind in enumerate(kinds) if kind in (_INT, _ARRAY)]
    return any(kinds[i] not in (_INT, _ARRAY) for i in range(advanced[0], advanced[-1]))


def _context(x: Tensor, items: tuple[Any, ...]) -> str:
    """``float32[3, 4][1:, [0, 2]]``: the tensor and the key, for messages."""
    return f"{describe(x)}[{', '.join(_entry_text(item) for item in items)}]"


def _entry_text(item: Any) -> str:
    if item is Ellipsis:
        return "..."
    if type(item) is slice:
        text = ":".join("" if v is None else str(v) for v in (item.start, item.stop))
        return text if item.step is None else f"{text}:{item.step}"
    if isinstance(item, Tensor):
        return f"<{describe(item)} tensor>"
    if isinstance(item, np.ndarray):
        return f"<{item.dtype}{list(item.shape)} array>"
    text = repr(item)
    return text if len(text) <= 40 else text[:37] + "..."
