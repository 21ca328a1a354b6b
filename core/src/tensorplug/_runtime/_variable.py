"""Variable: a mutable Tensor (``assign`` replaces its value), and the list of live Variables.

While ``tp.function`` traces, a Variable's storage is read through the tracer (``tracing_variables``).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from tensorplug._runtime._errors import DTypeError, GradientError, ShapeError, TensorplugError
from tensorplug._runtime._state import Record, state
from tensorplug._runtime._tensor import Tensor, _repr, describe

_variable_names = itertools.count()
_variable_keys = itertools.count()
_variables: weakref.WeakValueDictionary[int, Variable] = weakref.WeakValueDictionary()
_variables_lock = threading.Lock()  # listing them iterates in Python: no other thread may add one meanwhile


class Variable(Tensor):
    """A mutable tensor: ``assign`` replaces its value. Trainable ones are found by ``variable_grads``.

    >>> import tensorplug as tp
    >>> w = tp.variable([1.0, 2.0], name="w")
    >>> w.assign(w * 2).tolist()
    [2.0, 4.0]
    """

    __slots__ = ("_value", "name", "trainable")
    __module__ = "tensorplug"  # its public name, in reprs and pickles, wherever the class is defined

    name: str
    trainable: bool
    _value: Any  # the storage; ``_data`` reads it (or, while this thread traces, the tracer's stand-in: below)

    def __init__(self, initial_value: Any, trainable: bool = True, name: str | None = None, dtype: Any = None) -> None:
        initial = _conversions[0](initial_value, dtype)
        self._value = initial._data
        self._backend = initial._backend
        self._tape = None
        self._dtype = initial._dtype
        self.trainable = trainable
        self.name = name if name is not None else f"Variable_{next(_variable_names)}"
        with _variables_lock:
            _variables[next(_variable_keys)] = self

    def assign(self, value: Any) -> Variable:
        """Replace the value; the new value must have this variable's shape and dtype.

        Inside a gradient scope (the function that ``tp.grad`` or ``tp.variable_grads`` differentiates), a
        variable that a recorded kernel has read cannot be assigned: that kernel's gradient needs the value it
        read, so this raises a GradientError and leaves the variable as it was. Assign it once the gradient is
        computed, as an optimizer's ``apply`` does.
        """
        new = _conversions[1](value, self.dtype)
        if new.dtype != self.dtype:
            raise DTypeError(
                f"Variable {self.name!r}.assign(): value is {describe(new)} on backend {new.backend!r}, the variable "
                f"is {describe(self)}; cast the value first (tp.cast(value, {self.dtype!r})), or make a new variable "
                "to change its dtype"
            )
        if new.shape != self.shape:
            raise ShapeError(
                f"Variable {self.name!r}.assign(): value is {describe(new)} on backend {new.backend!r}, the variable "
                f"is {describe(self)}; make a new variable to change its shape"
            )
        tape = state.tape
        if tape is not None:
            _check_unread(self, tape.records)
        if new._backend is not self._backend:
            self._backend = new._backend
        raw = new._data
        self._value = raw
        self._dtype = new._dtype
        tracer = state.tracer
        if tracer is not None:  # tp.function is tracing: replays assign too
            tracer.assigned(self, raw)
        return self

    def __repr__(self) -> str:
        """A tensor's repr named ``variable``, with the name: ``variable([1., 2.], dtype=float32, name='w')``."""
        return _repr(self, "variable", [f"name={self.name!r}"] + ([] if self.trainable else ["trainable=False"]))


def _check_unread(v: Variable, records: list[Record]) -> None:
    """Raise if a kernel recorded on this thread's tape read ``v``: its gradient is computed from the inputs it
    read, and ``v`` would give its new value instead (a silently wrong gradient)."""
    for record in reversed(records):
        for value in record.inputs.values():
            if value is v or ((type(value) is list or type(value) is tuple) and any(u is v for u in value)):
                raise GradientError(
                    f"Variable {v.name!r}.assign() while a gradient scope records ({describe(v)}): kernel "
                    f"{record.kernel_name!r} on backend {v._backend.name!r} read the variable in this scope, and "
                    "its gradient would be computed from the new value, not the one it read. Assign the variable "
                    "once the gradient is computed (after tp.grad's function or tp.variable_grads returns, as an "
                    "optimizer's apply does), or keep the new value in another variable until then"
                )


# A Variable's ``_data`` is its storage, ``_value``: read and written as that slot (no Python call) while no
# thread traces. While a ``tp.function`` traces in any thread, ``_data`` goes through ``_viewed_storage``,
# which gives the tracing thread the tracer's stand-in for the storage (see Tracer.variable_storage) and every
# other thread the storage itself: a trace changes how reads are made, never what another thread reads.


def _viewed_storage(v: Variable) -> Any:
    tracer = state.tracer
    if tracer is None:
        return v._value
    return tracer.variable_storage(v)


def _replace_storage(v: Variable, raw: Any) -> None:
    v._value = raw
    tracer = state.tracer
    if tracer is not None:  # moved or disposed while this thread traces: its stand-in is stale
        tracer.variable_changed(v)


_DIRECT_STORAGE = Variable.__dict__["_value"]
_VIEWED_STORAGE = property(_viewed_storage, _replace_storage)
setattr(Variable, "_data", _DIRECT_STORAGE)  # noqa: B010 (a descriptor set after the class is made)
_traces = 0  # traces running in any thread
_traces_lock = threading.Lock()


@contextlib.contextmanager
def tracing_variables() -> Iterator[None]:
    """While the block runs (a trace), each thread reads Variables through ``_viewed_storage``."""
    global _traces
    with _traces_lock:
        _traces += 1
        if _traces == 1:
            setattr(Variable, "_data", _VIEWED_STORAGE)  # noqa: B010
    try:
        yield
    finally:
        with _traces_lock:
            _traces -= 1
            if _traces == 0:
                setattr(Variable, "_data", _DIRECT_STORAGE)  # noqa: B010


def live_variables() -> list[Variable]:
    """Every Variable still referenced somewhere, in creation order."""
    with _variables_lock:
        return list(_variables.values())


def _ops_missing(value: Any, dtype: Any) -> Tensor:
    raise TensorplugError("tensorplug's ops are not loaded: import tensorplug (not only tensorplug._runtime) first")


_conversions: list[Callable[[Any, Any], Tensor]] = [_ops_missing, _ops_missing]
"""``tp.tensor`` and ``tp.as_tensor`` (``[make, convert]``): how a Variable makes its first value and converts an
assigned one; the ops layer gives them (``use_conversions``) when it is imported."""


def use_conversions(make: Callable[[Any, Any], Tensor], convert: Callable[[Any, Any], Tensor]) -> None:
    """Let Variables make their values with ``make(value, dtype)`` and convert assigned ones with
    ``convert(value, dtype)`` (the ops layer's ``tensor`` and ``as_tensor``)."""
    _conversions[:] = [make, convert]
