"""Kernel observers: what ``tp.profile``, ``tp.time`` and debug mode see of every kernel call.

Observing costs nothing while nobody observes: the dispatch tables then hold
the kernels themselves. While at least one observer is active anywhere, the
engine wraps each kernel it resolves in an :class:`ObservedKernel`, which
times the call and hands a :class:`KernelCall` to the observers of the
calling thread (and to the process-wide ones, such as ``TENSORPLUG_DEBUG``);
a thread with no observer pays one thread-local read per kernel.

An observer may raise (debug mode does, at the first NaN): the error
reaches the caller of the op, as a kernel's own error would.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from tensorplug._runtime._engine_view import view
from tensorplug._runtime._state import state

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend
    from tensorplug._runtime._tensor import Tensor

KernelFunc = Any


class KernelCall(NamedTuple):
    """One kernel call as an observer sees it: raw inputs and outputs, wall time, and where it ran.

    ``backend`` is the backend the call was made on (the active one); ``ran_on`` is the backend whose kernel
    actually ran: the same, or the fallback backend that ran a kernel ``backend`` lacks (with the data moved
    there and back). ``function`` is the kernel function that ran (what the dispatch table resolved, a
    FallbackKernel for a fallback), and ``sequence`` says whether it returned a list or tuple of outputs
    (``outputs`` holds them) rather than one raw output: ``tp.function`` records both to replay the call.
    """

    kernel: str
    backend: Backend
    inputs: dict[str, Any]  # input name -> raw storage (or a list of raw storage)
    attrs: dict[str, Any]
    outputs: tuple[Any, ...]  # raw storage, one per output
    seconds: float  # wall time of the kernel; includes the device's work when an observer synchronises
    gradient_of: str | None  # None in the forward pass; in backprop, the kernel whose gradient made this call
    ran_on: Backend | None = None  # the fallback backend whose kernel ran; None when backend's own kernel ran
    function: Any = None  # the kernel function called (unwrapped: what a replay calls)
    sequence: bool = False  # whether it returned a list or tuple of outputs


class Observer(Protocol):
    """Anything with ``kernel_ran(call)``; ``synchronize = True`` makes timings wait for the device.

    ``kernel_ran`` returns None, or a tuple of replacement outputs (debug mode on a lazy backend returns the
    outputs with a deferred check added to their graph); the observers after it see the replacements.
    """

    synchronize: bool

    def kernel_ran(self, call: KernelCall) -> tuple[Any, ...] | None: ...


class GradientObserver(Observer, Protocol):
    """An observer that also sees each gradient the backward pass adds up (debug mode checks it for NaN or inf).

    ``gradient_made(of, input_name, gradient)`` runs for every gradient, kernel-made or not, that the tape
    adds to an input while the observer is active; it may raise (the error reaches ``tp.grad``'s caller).
    """

    def gradient_made(self, of: str, input_name: str, gradient: Tensor) -> None: ...


everywhere: list[Observer] = []  # observers of every thread (debug mode set by the environment)


class ObservedKernel:
    """A kernel wrapped so that the active observers see each call."""

    __slots__ = ("fn", "name", "ran_on")

    def __init__(self, name: str, fn: KernelFunc, ran_on: Backend | None = None) -> None:
        self.name = name
        self.fn = fn
        self.ran_on = ran_on  # the fallback backend that runs ``fn``, when it is a fallback kernel

    def __call__(self, inputs: dict[str, Any], attrs: dict[str, Any], backend: Backend) -> Any:
        observers = state.observers
        if everywhere:
            observers = (*(observers or ()), *everywhere)
        if not observers:
            return self.fn(inputs, attrs, backend)
        synchronize = any(o.synchronize for o in observers)
        if synchronize:
            backend.synchronize()  # the device's queued work is not this kernel's
        start = time.perf_counter()
        out = self.fn(inputs, attrs, backend)
        if synchronize:
            backend.synchronize()
        seconds = time.perf_counter() - start
        sequence = type(out) is tuple or type(out) is list
        outputs = tuple(out) if sequence else (out,)
        call = KernelCall(
            self.name, backend, inputs, attrs, outputs, seconds, state.gradient_of, self.ran_on, self.fn, sequence
        )
        for observer in observers:
            replaced = observer.kernel_ran(call)
            if replaced is not None:
                call = call._replace(outputs=replaced)
                out = type(out)(replaced) if sequence else replaced[0]
        return out

    def __repr__(self) -> str:
        return f"<ObservedKernel {self.name!r}: {self.fn!r}>"


def gradient_made(of: str, input_name: str, gradient: Tensor) -> None:
    """Show ``gradient``, which the gradient of kernel ``of`` gave input ``input_name``, to the active observers
    of this thread (and of every thread) that watch gradients. The tape calls it only while some observer is on."""
    observers = (*(state.observers or ()), *everywhere)
    for observer in observers:
        made = getattr(observer, "gradient_made", None)  # a GradientObserver
        if made is not None:
            made(of, input_name, gradient)


@contextlib.contextmanager
def observing(observer: Observer, all_threads: bool = False) -> Iterator[None]:
    """Let ``observer`` see every kernel call of this thread (of every thread with ``all_threads``) in the block."""
    view.observe(+1)
    saved = state.observers
    if all_threads:
        everywhere.append(observer)
    else:
        state.observers = (*(saved or ()), observer)
    try:
        yield
    finally:
        if all_threads:
            everywhere.remove(observer)
        else:
            state.observers = saved
        view.observe(-1)
