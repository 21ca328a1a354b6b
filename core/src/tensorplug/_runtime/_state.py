"""Per-thread autodiff state and the tape record, shared by the engine and autodiff."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from tensorplug._runtime._errors import KernelError
    from tensorplug._runtime._tensor import Tensor


class Tape:
    """The records of one (outermost) gradient scope; nested scopes share it.

    Tensors that kernels recorded on the tape produce carry its ``token``
    (a small object, so that a tensor outliving the scope does not keep the
    records alive). The tensors a scope watches may be shared with other
    threads, each watching them on a tape of its own: the tape remembers
    them by id (``watch``), and marks only those that carry no token yet, so
    that a tensor is watched by a tape when it carries the tape's token, or
    carries any token and is one the tape watches (``is_watching``).
    """

    __slots__ = ("_watched", "records", "token", "watched_ids")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.token = object()
        self.watched_ids: set[int] = set()
        self._watched: list[Any] = []  # keeps the watched tensors alive, so that their ids stay theirs

    def watch(self, tensors: Any) -> None:
        """Record the kernels that read any of ``tensors`` from now on."""
        for t in tensors:
            if t._tape is None:
                t._tape = self.token
            if id(t) not in self.watched_ids:
                self.watched_ids.add(id(t))
                self._watched.append(t)

    def is_watching(self, t: Any) -> bool:
        """Whether the kernels that read tensor ``t`` are recorded on this tape (run_kernel inlines it)."""
        mark = t._tape
        return mark is self.token or (mark is not None and id(t) in self.watched_ids)


class Record(NamedTuple):
    """One recorded kernel call: what the backward pass needs to differentiate it.

    ``outputs`` is a tuple holding the one output of a single-output kernel,
    or a list of the outputs of a kernel that returns a list (even a list of
    one: its gradient then takes a list of one ``dy``). ``grad`` is a
    GradientSpec that overrides the registry for this record (custom_grad
    uses it), or None.
    """

    kernel_name: str
    inputs: dict[str, Any]
    attrs: dict[str, Any]
    outputs: tuple[Any] | list[Any]
    grad: Any = None


class TracerHooks(Protocol):
    """What the layers below tracing ask of the tracer of a ``tp.function`` being traced in this thread.

    Tensors, variables, indexing and the optimizers tell the tracer (``tensorplug._tracing._tracer.Tracer``) what a
    replay must redo or cannot redo through these calls alone; they never import tracing.
    """

    def read_back(self, t: Tensor, why: str) -> None:
        """``t``'s value leaves the tensor world (read to Python, exported, moved)."""

    def variable_storage(self, v: Any) -> Any:  # v: a Variable (not imported here: it imports this module)
        """``v``'s storage as the tracing thread sees it."""

    def assigned(self, v: Any, raw: Any) -> None:  # v: a Variable
        """``v.assign`` gave ``v`` the storage ``raw`` in this thread."""

    def variable_changed(self, v: Any) -> None:  # v: a Variable
        """``v``'s storage was replaced other than by ``assign`` (moved, disposed)."""

    def translate_errors(
        self, error: Callable[[KernelError], Exception] | None
    ) -> Callable[[KernelError], Exception] | None:
        """From now on a failing replayed kernel raises ``error(kernel_error)``; returns the previous translation."""

    def on_replay(self, callback: Callable[[], Any], undo: Callable[[], Any] | None = None) -> None:
        """Run ``callback()`` at the start of every replay (``undo()`` when the replay fails)."""

    def host_values(self, compute: Callable[[], Sequence[Any]], values: Sequence[Any], dtype: str) -> list[Tensor]:
        """``values`` as tensors of ``dtype`` that a replay makes again from ``compute()``."""

    def guard(self, check: Callable[[], bool]) -> None:
        """Before each replay, ``check()``: False means trace again."""


class ThreadState(threading.local):
    """What is per thread: the recording tape (None while not recording or in no_grad), the gradient
    overrides of the enclosing scopes (kernel name -> GradientSpec, None outside any scope), the kernel
    observers, which kernel's gradient backprop is computing, and the tracer of a ``tp.function`` being traced.

    ``no_grad`` and override scopes push what they replace on this thread's stacks and pop it on exit,
    so that one scope object may be entered in several threads at once, or again while it is active.
    """

    def __init__(self) -> None:  # runs once in each thread that uses the state
        self.tape: Tape | None = None
        self.overrides: dict[str, Any] | None = None
        self.observers: tuple[Any, ...] | None = None  # kernel observers of this thread (tp.profile, tp.debug)
        self.gradient_of: str | None = None  # during backprop: the kernel whose gradient is being computed
        self.outer_tapes: list[Tape | None] = []  # what each active no_grad replaced, innermost last
        self.outer_overrides: list[dict[str, Any] | None] = []  # what each active override scope replaced
        self.tracer: TracerHooks | None = None  # while tp.function traces in this thread: its tracer


state = ThreadState()


class no_grad:  # noqa: N801 - used like a function, as torch.no_grad
    """Context manager: kernels run inside it are not recorded on any tape (this thread only).

    >>> import tensorplug as tp
    >>> x = tp.tensor(3.0)
    >>> with tp.no_grad():
    ...     y = x * x
    """

    __slots__ = ()

    def __enter__(self) -> None:
        state.outer_tapes.append(state.tape)
        state.tape = None

    def __exit__(self, *exc: object) -> None:
        state.tape = state.outer_tapes.pop()
