"""Tensor: a thin, immutable wrapper of a backend's raw storage (Variable, its mutable kind, is in _variable)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorplug._runtime._errors import CopyError, ShapeError, UnsupportedOperationError
from tensorplug._runtime._printing import _repr
from tensorplug._runtime._state import Record, Tape, state
from tensorplug._runtime._storage import _DISPOSED_BACKEND, _DISPOSED_STORAGE, _read_only_host_view
from tensorplug._runtime._storage import is_host_device as is_host_device
from tensorplug._runtime._storage import moved_storage as moved_storage
from tensorplug._runtime._storage import spec_text as spec_text
from tensorplug._runtime._storage import stored_dtype_error as stored_dtype_error
from tensorplug._runtime._storage import unsupported_dtype_error as unsupported_dtype_error

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend


_new = object.__new__
_new_record = tuple.__new__  # a Record without NamedTuple's Python-level __new__ (the recording hot path)


class Tensor:
    """An immutable n-dimensional array living on one backend.

    Every operator goes through an op, and so through ``run_kernel``;
    indexing is NumPy's (ints, slices, ``None``, ``...`` and one integer array).

    >>> import tensorplug as tp
    >>> x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (x * 2 + 1).tolist()
    [[3.0, 5.0], [7.0, 9.0]]
    >>> x.shape, x.dtype
    ((2, 2), 'float32')
    >>> x[:, ::-1]  # doctest: +ELLIPSIS
    tensor([[2., 1.],
            [4., 3.]], dtype=float32...)
    >>> print(x[1], f"{x[0, 1]:.2f}")
    [3. 4.] 2.00
    >>> y = tp.tensor([[1, 2, 3], [4, 5, 6]])
    >>> y[-1, ::2].tolist(), y[..., None, 0].tolist(), y[:, [2, 0]].tolist()
    ([4, 6], [[1], [4]], [[3, 1], [6, 4]])
    """

    __slots__ = ("__weakref__", "_backend", "_data", "_dtype", "_tape")
    # Its public name, in reprs and pickles, wherever the class is defined. doctest then finds the examples of
    # the class's docstring only (as tensorplug.Tensor's), so the methods keep theirs there.
    __module__ = "tensorplug"
    __array_priority__ = 1000.0  # numpy defers `ndarray + Tensor` to Tensor.__radd__

    _data: Any
    _backend: Backend
    _tape: object | None
    _dtype: str | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedOperationError("make tensors with tp.tensor(data, dtype=None), tp.zeros, tp.ones or tp.full")

    # -- metadata -----------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, as a tuple of ints."""
        return tuple(self._data.shape)

    @property
    def dtype(self) -> str:
        """The dtype name: one of float32, float64, int32, int64, bool."""
        dtype = self._dtype
        if dtype is None:
            dtype = self._dtype = self._backend.dtype_of(self._data)
        return dtype

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    @property
    def size(self) -> int:
        return math.prod(self._data.shape)

    @property
    def backend(self) -> str:
        """The name of the backend holding this tensor's storage."""
        return self._backend.name

    @property
    def device(self) -> str:
        """The device of the storage, as the backend names it (e.g. "cpu", "cuda:0")."""
        return self._backend.device

    @property
    def raw(self) -> Any:
        """The backend's raw storage (e.g. a numpy.ndarray); treat it as read-only."""
        tracer = state.tracer
        if tracer is not None:  # tp.function is tracing: what is done with the storage cannot be replayed
            tracer.read_back(self, "its raw storage was taken (Tensor.raw)")
        return self._data

    # -- reading back -------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The values as a read-only numpy array (no copy when the backend allows)."""
        tracer = state.tracer
        if tracer is not None:  # tp.function is tracing: a value read back to Python cannot be replayed
            tracer.read_back(self, "its value was read back to Python")
        array = np.asarray(self._backend.to_host(self._data))
        if array.flags.writeable:
            array = array.view()
            array.flags.writeable = False
        return array

    def item(self) -> bool | int | float:
        """The value of a one-element tensor as a Python scalar."""
        if self.size != 1:
            raise ShapeError(f"item(): the tensor has shape {self.shape} ({self.size} elements), not one element")
        value: bool | int | float = self.numpy().reshape(()).item()
        return value

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The values for numpy (``np.asarray(t)``, ``np.array(t)``), following numpy 2's ``copy`` protocol.

        ``copy=None``: a read-only view where the backend allows, a copy otherwise;
        ``copy=True``: a fresh, writable copy; ``copy=False``: never a copy, and a
        CopyError where one is needed (device memory, another dtype).
        """
        if copy is False and not is_host_device(self.device):
            raise CopyError(
                f"np.asarray(copy=False) of {describe(self)} on backend {self.backend!r}, device {self.device!r}: "
                "the values live in device memory, so reading them needs a copy; use copy=None or np.array(t)"
            )
        array = self.numpy()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise CopyError(
                    f"np.asarray(copy=False, dtype={np.dtype(dtype)}) of {describe(self)}: changing the dtype needs "
                    "a copy; use copy=None, or tp.cast first"
                )
            return array.astype(dtype)
        return array.copy() if copy else array

    def __repr__(self) -> str:
        """NumPy's array repr, named ``tensor``; the backend and device show when they are not the usual ones."""
        return _repr(self, "tensor", [])

    def __str__(self) -> str:
        """The values as NumPy prints them: ``[1. 2.]``."""
        if self.is_disposed:
            return "<disposed tensor>"
        return str(self.numpy())

    def __format__(self, spec: str) -> str:
        """``f"{t:.3f}"`` formats the value of a one-element tensor; an empty spec gives ``str(t)``."""
        if not spec:
            return str(self)
        if self.size == 1:
            return format(self.item(), spec)
        raise UnsupportedOperationError(
            f"format spec {spec!r} given for {describe(self)}: only one-element tensors take a format spec; "
            "format t.item(), or each value of t.tolist()"
        )

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ShapeError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; use tp.all/tp.any or .item()"
            )
        return bool(self.item())

    def __len__(self) -> int:
        if not self.ndim:
            raise UnsupportedOperationError(f"len() of a 0-d tensor ({describe(self)}); use .item() for its value")
        return int(self._data.shape[0])

    # -- indexing -----------------------------------------------------------

    def __getitem__(self, key: Any) -> Tensor:
        """``t[key]`` as NumPy indexes: ints, slices, ``None``, ``...`` and one integer array (differentiable).

        Lowered to one StridedSlice, plus a GatherV2 for an integer array.
        Out-of-range and unsupported indices raise ``tp.IndexingError`` (an IndexError). Examples are in the
        class's docstring.
        """
        return _index.getitem(self, key)

    def __iter__(self) -> Iterator[Tensor]:
        """The sub-tensors along the first axis, ``t[0], t[1], ...`` (a 0-d tensor cannot be iterated)."""
        if not self.ndim:
            raise UnsupportedOperationError(f"iteration over a 0-d tensor ({describe(self)}); use .item()")
        return map(self.__getitem__, range(self._data.shape[0]))

    def __contains__(self, value: Any) -> bool:
        """``value in t``: whether any element equals ``value`` (NumPy's ``(t == value).any()``)."""
        return bool(_ops.any(_ops.equal(self, value)))

    def __setitem__(self, key: Any, value: Any) -> None:
        raise UnsupportedOperationError(
            f"{describe(self)} does not support item assignment: tensors are immutable. Make a new tensor "
            "instead: tp.where(mask, new, t) to replace elements, tp.scatter_nd(indices, updates, shape) to "
            "place values, or Variable.assign(new_value) to change a variable"
        )

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    __hash__ = object.__hash__

    # -- operators (each goes through an op) ----------------------------------

    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.div(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return _ops.floor_div(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops.floor_div(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _ops.mod(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _ops.mod(other, self)

    def __and__(self, other: Any) -> Tensor:
        return _ops.logical_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _ops.logical_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        return _ops.logical_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return _ops.logical_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return _ops.logical_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return _ops.logical_xor(other, self)

    def __invert__(self) -> Tensor:
        return _ops.logical_not(self)

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __neg__(self) -> Tensor:
        return _ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __lt__(self, other: Any) -> Tensor:
        return _ops.less(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.less_equal(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.greater(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.greater_equal(self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.equal(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.not_equal(self, other)

    # -- interop and lifetime ---------------------------------------------------

    def __dlpack__(self, **kwargs: Any) -> Any:
        """Export the storage through DLPack (zero-copy where the backend allows), e.g. to ``torch.from_dlpack``.

        Host memory goes out flagged read-only to DLPack 1.0 consumers, so ``np.from_dlpack(t)`` is a read-only
        view. torch has no read-only tensors: ``torch.from_dlpack(t)`` is a writable view, and writing to it
        changes ``t``, the one way around tensors being immutable (copy it with ``.clone()`` to write).
        """
        tracer = state.tracer
        if tracer is not None:
            tracer.read_back(self, "it was exported through DLPack")
        source = self._backend.dlpack_source(self._data)
        if type(source) is np.ndarray and any(s < 0 for s in source.strides):
            source = np.ascontiguousarray(source)  # a[::-1]: torch aborts the process on negative strides
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        max_version = kwargs.get("max_version")
        if max_version is not None and tuple(max_version) >= (1, 0):  # older consumers cannot be told read-only
            source = _read_only_host_view(source)
        return source.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._backend.dlpack_source(self._data).__dlpack_device__()

    def to_backend(self, name: str) -> Tensor:
        """A new tensor with these values on backend ``name`` (zero-copy through DLPack where both sides allow)."""
        from tensorplug._runtime._engine import engine

        target = engine.initialize(name)
        if target is self._backend:
            return _ops.tensor(self)
        return wrap_storage(moved_storage(self, target, f"to_backend({name!r})"), target, self._dtype)

    def dispose(self) -> None:
        """Release the storage now (device memory included) instead of when the tensor is collected.

        Using the tensor afterwards raises a TensorplugError.
        """
        self._data = _DISPOSED_STORAGE
        self._backend = _DISPOSED_BACKEND

    @property
    def is_disposed(self) -> bool:
        return self._data is _DISPOSED_STORAGE

    # -- common methods -----------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        target = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return _ops.reshape(self, target)

    def transpose(self, perm: Any = None) -> Tensor:
        return _ops.transpose(self, perm)

    @property
    def T(self) -> Tensor:  # noqa: N802 - the numpy name
        return _ops.transpose(self)

    def astype(self, dtype: Any) -> Tensor:
        return _ops.cast(self, dtype)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.sum(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.mean(self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.max(self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.min(self, axis, keepdims)


def describe(t: Any) -> str:
    """A short description for messages: ``float32[2, 3]``."""
    if isinstance(t, Tensor) and t.is_disposed:
        return "<disposed tensor>"
    if isinstance(t, Tensor):
        return spec_text(t.dtype, t.shape)
    return type(t).__name__


def wrap_storage(raw: Any, backend: Backend, dtype: str | None = None) -> Tensor:
    """A Tensor around ``raw`` (storage of ``backend``), on no tape; ``dtype`` None: read from the storage when
    first asked."""
    t = _new(Tensor)
    t._data = raw
    t._backend = backend
    t._tape = None
    t._dtype = dtype
    return t


def wrap_call(
    out: Any,
    backend: Backend,
    dtype: str | None,
    tape: Tape | None,
    name: str,
    inputs: Mapping[str, Any],
    attrs: dict[str, Any],
    grad: Any = None,
) -> Any:
    """The output of a call of ``name``, as a Tensor of ``backend`` (``dtype`` None: read from the storage when first
    asked); or a list of Tensors when ``out`` is a list or tuple (a kernel of several outputs). On ``tape``, when
    given (a watched tensor took part), the outputs carry its mark and the call is recorded: this is the one place
    a Record joins a tape (kernel calls, ``custom_grad``, the core's fused gradients, the link of a higher-order
    gradient to its ``y``).

    ``inputs`` is the record's own dict, in the order the kernel declares them; ``grad`` the GradientSpec that
    backprop is to call for this record; None: the enclosing override scope's for ``name``, if any, else the
    registry's when backprop comes. It builds the single output inline (as ``wrap_storage`` does): it is the
    wrapping of every recorded kernel call (``tensorplug._runtime._engine._call``), where a call more would cost
    ~10 % of the recording.
    """
    if type(out) is tuple or type(out) is list:
        t: Any = [wrap_storage(o, backend) for o in out]
        if tape is None:
            return t
        for o in t:
            o._tape = tape.token
        outputs: Any = list(t)  # a list even of one: its gradient takes a list of upstream gradients
    else:
        t = _new(Tensor)
        t._data = out
        t._backend = backend
        t._dtype = dtype
        if tape is None:
            t._tape = None
            return t
        t._tape = tape.token
        outputs = (t,)
    if grad is None:
        overrides = state.overrides
        if overrides is not None:
            grad = overrides.get(name)
    tape.records.append(_new_record(Record, (name, inputs, attrs, outputs, grad)))
    return t


from tensorplug import ops as _ops  # noqa: E402
from tensorplug.ops import _getitem as _index  # noqa: E402  (indexing and the operators above need the ops)
