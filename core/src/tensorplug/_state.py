"""Per-thread autodiff state and the tape record, shared by the engine and autodiff."""

from __future__ import annotations

import threading
from typing import Any, NamedTuple


class Tape:
    """The records of one (outermost) gradient scope; nested scopes share it.

    Tensors the tape tracks carry its ``token`` (a small object, so that a
    tensor outliving the scope does not keep the records alive).
    """

    __slots__ = ("records", "token")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.token = object()


class Record(NamedTuple):
    """One recorded kernel call: what the backward pass needs to differentiate it.

    ``grad`` is a GradientSpec that overrides the registry for this record
    (custom_grad uses it), or None.
    """

    kernel_name: str
    inputs: dict[str, Any]
    attrs: dict[str, Any]
    outputs: tuple[Any, ...]
    grad: Any = None


new_record = tuple.__new__
"""``new_record(Record, (name, inputs, attrs, outputs, grad))``: a Record without NamedTuple's
Python-level ``__new__`` (the recording hot path)."""


class ThreadState(threading.local):
    """What is per thread: the recording tape (None while not recording or in no_grad), the gradient
    overrides of the enclosing scopes (kernel name -> GradientSpec, None outside any scope), the kernel
    observers, and which kernel's gradient backprop is computing."""

    tape: Tape | None = None
    overrides: dict[str, Any] | None = None
    observers: tuple[Any, ...] | None = None  # kernel observers of this thread (tp.profile, tp.debug)
    gradient_of: str | None = None  # during backprop: the kernel whose gradient is being computed


state = ThreadState()


class no_grad:  # noqa: N801 - used like a function, as torch.no_grad
    """Context manager: kernels run inside it are not recorded on any tape (this thread only).

    >>> import tensorplug as tp
    >>> x = tp.tensor(3.0)
    >>> with tp.no_grad():
    ...     y = x * x
    """

    __slots__ = ("_saved",)

    def __enter__(self) -> None:
        self._saved = state.tape
        state.tape = None

    def __exit__(self, *exc: object) -> None:
        state.tape = self._saved
