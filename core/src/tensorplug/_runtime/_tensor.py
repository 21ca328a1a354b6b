"""Tensor: a thin, immutable wrapper of a backend's raw storage (Variable, its mutable kind, is in _variable)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorplug._runtime._engine_view import view
from tensorplug._runtime._errors import CopyError, ShapeError, UnsupportedOperationError
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

    def __iter__(self) -> Iterator[Tensor]:
        """The sub-tensors along the first axis, ``t[0], t[1], ...`` (a 0-d tensor cannot be iterated)."""
        if not self.ndim:
            raise UnsupportedOperationError(f"iteration over a 0-d tensor ({describe(self)}); use .item()")
        return map(self.__getitem__, range(self._data.shape[0]))

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

    def __pos__(self) -> Tensor:
        return self

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

    def dispose(self) -> None:
        """Release the storage now (device memory included) instead of when the tensor is collected.

        Using the tensor afterwards raises a TensorplugError.
        """
        self._data = _DISPOSED_STORAGE
        self._backend = _DISPOSED_BACKEND

    @property
    def is_disposed(self) -> bool:
        return self._data is _DISPOSED_STORAGE

    # -- operators and methods made of ops: ``tensorplug.ops._tensor_methods`` attaches them ------------------

    if TYPE_CHECKING:

        def __getitem__(self, key: Any) -> Tensor: ...
        def __contains__(self, value: Any) -> bool: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def to_backend(self, name: str) -> Tensor: ...
        def reshape(self, *shape: Any) -> Tensor: ...
        def transpose(self, perm: Any = None) -> Tensor: ...
        @property
        def T(self) -> Tensor: ...  # noqa: N802 - the numpy name
        def astype(self, dtype: Any) -> Tensor: ...
        def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor: ...
        def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor: ...
        def max(self, axis: Any = None, keepdims: bool = False) -> Tensor: ...
        def min(self, axis: Any = None, keepdims: bool = False) -> Tensor: ...


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


# -- how a tensor prints: NumPy's ``array_repr`` layout, with the backend and device where they matter --------


def _repr(t: Tensor, name: str, extra: list[str]) -> str:
    """NumPy's ``array_repr`` layout, as ``name(values, dtype=..., <placement>, <extra>)``."""
    if t.is_disposed:
        return f"<disposed {name}>"
    array = t.numpy()
    prefix = f"{name}("
    if array.size or array.shape == (0,):
        body = np.array2string(array, separator=", ", prefix=prefix, suffix=",")
    else:
        body = f"[], shape={array.shape}"  # as NumPy: the shape of an empty array would be lost otherwise
    text = f"{prefix}{body},"
    tail = ", ".join([f"dtype={t.dtype}", *_placement(t), *extra]) + ")"
    last_line = len(text) - (text.rfind("\n") + 1)
    if last_line + 1 + len(tail) > np.get_printoptions()["linewidth"]:
        return f"{text}\n{' ' * len(prefix)}{tail}"
    return f"{text} {tail}"


def _placement(t: Tensor) -> list[str]:
    """The backend when it is not the active one, and the device when it is not the host."""
    fields = []
    active = view.active_name()
    if active is None or active != t.backend:
        fields.append(f"backend={t.backend!r}")
    if not is_host_device(t.device):
        fields.append(f"device={t.device!r}")
    return fields
