"""Debug mode: ``tp.debug()`` and ``TENSORPLUG_DEBUG=1`` raise at the first NaN or inf a kernel makes.

Debug mode is a kernel observer (:mod:`tensorplug._runtime._observe`), as ``tp.profile``
is: while it is on, every kernel's outputs are checked with
``Backend.all_finite`` (float storage only: integers and bools hold no NaN)
right after the kernel ran, and the first NaN or inf raises
:class:`~tensorplug.NonFiniteError` in the thread that ran the kernel. The
message says which kernel, on which backend and device, what its inputs were
(and which of them held NaN or inf already: then the kernel passed it on
rather than made it), its attrs, and whether it ran in the forward pass or
in the gradient of which kernel during backprop. TensorFlow.js's debug mode
only logs, asynchronously, after the fact.

In backprop, the kernels that gradients run are checked like any other;
the gradient each input receives is checked too, which catches NaN that no
kernel made (a custom gradient returning ``tp.tensor`` data, say).

``tp.debug()`` checks the calling thread's kernels while the block runs (it
nests, and works as a decorator); ``tp.debug(all_threads=True)`` and
``TENSORPLUG_DEBUG=1`` (read when tensorplug is imported) check every
thread's. Outside debug mode nothing is checked and the dispatch tables hold
the plain kernels. Checking costs a few microseconds per kernel on a CPU
(and one device synchronisation per output on CUDA).

On a lazy backend (``Backend.lazy``: dask) there are no values to check when
a kernel runs, and reading them would compute the whole graph at every
kernel. Debug mode then adds the check to the graph instead
(``Backend.check_finite``): each float output is replaced by the same array
with a per-chunk check, which raises NonFiniteError, naming the kernel, its
inputs' shapes and dtypes, attrs and pass, when the values are computed.
Every consumer reads the checked output, so the first kernel that made NaN
or inf raises before any kernel that passed it on; the counts and the index
of the first bad element are not in that message (the error names the chunk).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import numpy as np

from tensorplug._runtime._errors import NonFiniteError
from tensorplug._runtime._observe import KernelCall, Observer, observing
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import spec_text

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend
    from tensorplug._runtime._tensor import Tensor

__all__ = ["debug"]

P = ParamSpec("P")
R = TypeVar("R")


class _Checker:
    """The observer of debug mode: raise at the first kernel output or gradient holding NaN or inf."""

    synchronize = False  # reading the check's result waits for the device anyway

    def kernel_ran(self, call: KernelCall) -> tuple[Any, ...] | None:
        backend = call.backend
        if backend.lazy:  # the values do not exist yet: the check goes into the graph, ahead of every consumer
            return tuple(
                backend.check_finite(
                    raw, _deferred_message(call, index), kernel=call.kernel, gradient_of=call.gradient_of
                )
                for index, raw in enumerate(call.outputs)
            )
        for index, raw in enumerate(call.outputs):
            if not backend.all_finite(raw):
                raise _kernel_error(call, index)
        return None

    def gradient_made(self, of: str, input_name: str, g: Tensor) -> None:
        """Raise if ``g``, the gradient the gradient of kernel ``of`` gives input ``input_name``, holds NaN or inf.

        A gradient a kernel made was checked when the kernel ran; this catches
        what no kernel made (host data returned by a custom gradient, say).
        The tape calls it only while debug mode is on (through ``tensorplug._runtime._observe.gradient_made``).
        """
        backend = g._backend
        if backend.lazy:
            message = (
                f"debug mode (checked when computed, on lazy backend {backend.name!r}): in the backward pass, the "
                f"gradient of {of!r} returned NaN or inf for its input {input_name!r} ({_storage(backend, g._data)}). "
                "No kernel made it: it came from host data (tp.tensor(...) returned by a tp.custom_grad gradient or a "
                "registered gradient, or the dy passed to tp.grad). Return finite values from that gradient function."
            )
            g._data = backend.check_finite(g._data, message, kernel=of, gradient_of=of)
            return
        if backend.all_finite(g._data):
            return
        nan, inf, where = _count(backend, g._data)
        raise NonFiniteError(
            f"debug mode: in the backward pass, the gradient of {of!r} returned {_amount(nan, inf)} of "
            f"{_elements(g.size)}{where} for its input {input_name!r} ({_storage(backend, g._data)} on backend "
            f"{backend.name!r}, device {backend.device}). No kernel that debug mode watched made it: it was made "
            "outside kernels (host data such as tp.tensor(...) returned by a tp.custom_grad gradient or a registered "
            "gradient, or the dy passed to tp.grad). Return finite values from that gradient function, or check "
            "the data it captures.",
            kernel=of,
            backend=backend.name,
            gradient_of=of,
            nan=nan,
            inf=inf,
        )


_CHECKER = _Checker()
_for_good: AbstractContextManager[None] | None = None  # the block TENSORPLUG_DEBUG=1 entered, never left


class debug:  # noqa: N801 - used like a function, as tp.no_grad
    """Debug mode for a block: raise ``tp.NonFiniteError`` at the first kernel output or gradient holding NaN or inf.

    Only the calling thread's kernels are checked (every thread's with
    ``all_threads=True``, as ``TENSORPLUG_DEBUG=1`` does for the whole
    process). Blocks nest; an instance may be entered again, in any thread,
    and also decorates a function.

    >>> import tensorplug as tp
    >>> with tp.debug():
    ...     tp.log(tp.tensor([1.0, -1.0]))
    Traceback (most recent call last):
    ...
    tensorplug.NonFiniteError: debug mode: kernel 'Log' on backend 'numpy' (device cpu) returned NaN ...
    """

    __slots__ = ("_threads", "all_threads")

    def __init__(self, all_threads: bool = False) -> None:
        self.all_threads = all_threads
        self._threads = threading.local()  # .entered: per thread, one entry per `with` of self not left yet

    def _entered(self) -> list[AbstractContextManager[None] | None]:
        entered: list[AbstractContextManager[None] | None] = self._threads.__dict__.setdefault("entered", [])
        return entered

    def __enter__(self) -> None:
        # Checked already, for good (the environment) or by an enclosing block of this thread: nothing to add.
        # (An all_threads block of another thread may end first, so it does not count.)
        if _for_good is not None or (not self.all_threads and _CHECKER in (state.observers or ())):
            self._entered().append(None)
            return
        observer: Observer = _CHECKER
        context = observing(observer, all_threads=self.all_threads)
        context.__enter__()
        self._entered().append(context)

    def __exit__(self, *exc: object) -> None:
        context = self._entered().pop()
        if context is not None:
            context.__exit__(None, None, None)

    def __call__(self, fn: Callable[P, R]) -> Callable[P, R]:
        """``@tp.debug()``: run every call of ``fn`` in debug mode."""
        all_threads = self.all_threads

        @functools.wraps(fn)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            with debug(all_threads):
                return fn(*args, **kwargs)

        return checked

    def __repr__(self) -> str:
        return f"tp.debug(all_threads={self.all_threads})"


def enable_everywhere() -> None:
    """Check every thread's kernels from now on, for good (what ``TENSORPLUG_DEBUG=1`` does at import)."""
    global _for_good
    if _for_good is None:
        observer: Observer = _CHECKER
        _for_good = observing(observer, all_threads=True)
        _for_good.__enter__()  # never left (held here: a collected generator would leave it)


# -- the message ------------------------------------------------------------------------------------------------------


def _deferred_message(call: KernelCall, index: int) -> str:
    """The error text of a lazy backend's deferred check: what is known before any value is (no counts)."""
    backend = call.backend
    which = f"output {index} of {len(call.outputs)}" if len(call.outputs) > 1 else "output"
    phase = (
        "the forward pass"
        if call.gradient_of is None
        else f"the backward pass, in the gradient of {call.gradient_of!r}"
    )
    inputs = ", ".join(
        f"{key}=[{', '.join(_storage(backend, r) for r in value)}]"
        if isinstance(value, list | tuple)
        else f"{key}={_storage(backend, value)}"
        for key, value in call.inputs.items()
    )
    attrs = repr(call.attrs)
    if len(attrs) > 200:
        attrs = attrs[:197] + "..."
    return (
        f"debug mode (checked when computed, on lazy backend {backend.name!r}): kernel {call.kernel!r} returned NaN "
        f"or inf in {phase}, in its {which} {_storage(backend, call.outputs[index])}.\n"
        f"  inputs: {inputs or '(none)'}\n"
        f"  attrs: {attrs}\n"
        "Its inputs passed their own checks first (each kernel's output is checked before any kernel uses it), so "
        f"{call.kernel!r} made it, unless an input came from data given to tp.tensor or a Variable: look at the "
        "values reaching it (log or sqrt of a negative number or zero, 0 / 0, exp of a large number...) and keep "
        "them in range (tp.clip_by_value, a small epsilon)."
    )


def _kernel_error(call: KernelCall, index: int) -> NonFiniteError:
    backend = call.backend
    raw = call.outputs[index]
    nan, inf, where = _count(backend, raw)
    size = int(np.prod(backend.shape_of(raw)))
    which = f"output {index} of {len(call.outputs)}" if len(call.outputs) > 1 else "output"
    if call.gradient_of is None:
        phase = "the forward pass"
    else:
        phase = f"the backward pass, in the gradient of {call.gradient_of!r}"
    inputs, tainted = _inputs(backend, call.inputs)
    attrs = repr(call.attrs)
    if len(attrs) > 200:
        attrs = attrs[:197] + "..."
    kind = _kind(nan, inf)
    lines = [
        f"debug mode: kernel {call.kernel!r} on backend {backend.name!r} (device {backend.device}) returned "
        f"{kind} in {phase}: {_amount(nan, inf)} of {_elements(size)}{where} in its {which} {_storage(backend, raw)}.",
        f"  inputs: {inputs or '(none)'}",
        f"  attrs: {attrs}",
    ]
    if tainted:
        held = ", ".join(repr(t) for t in tainted)
        lines.append(
            f"Its input{'s' if len(tainted) > 1 else ''} {held} held NaN or inf already: {call.kernel!r} passed it "
            "on rather than made it, and no kernel that debug mode watched made it either. It came from outside: "
            "data given to tp.tensor or assigned to a Variable, or a kernel run before debug mode began or in a "
            "thread it does not watch. Check that data (tp.isfinite)."
        )
    elif call.gradient_of is None:
        lines.append(
            f"Its inputs were finite, so {call.kernel!r} made the {kind}: look at the values reaching it (log or "
            "sqrt of a negative number or zero, 0 / 0, inf - inf, exp of a large number, a sum that overflows...) "
            "and keep them in range (tp.clip_by_value, a small epsilon) or compute more stably (tp.log_softmax "
            "and the losses do)."
        )
    else:
        lines.append(
            f"Its inputs were finite, so the gradient of {call.gradient_of!r} made the {kind}: that gradient is "
            f"infinite or undefined at the values {call.gradient_of!r} saw in the forward pass (sqrt or log at 0, "
            "say). Keep those values away from such points (a small epsilon), or give the computation a "
            "gradient of your own (tp.custom_grad)."
        )
    return NonFiniteError(
        "\n".join(lines), kernel=call.kernel, backend=backend.name, gradient_of=call.gradient_of, nan=nan, inf=inf
    )


def _count(backend: Backend, raw: Any) -> tuple[int, int, str]:
    """NaN count, inf count, and where the first of them is (" (the first at index (1, 0))"; "" for 0-d)."""
    array = np.asarray(backend.to_host(raw))
    nan = int(np.isnan(array).sum())
    inf = int(np.isinf(array).sum())
    if array.ndim == 0:
        return nan, inf, ""
    first = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
    return nan, inf, f" (the first at index {first})"


def _elements(size: int) -> str:
    return "1 element" if size == 1 else f"{size} elements"


def _kind(nan: int, inf: int) -> str:
    return "NaN and inf" if nan and inf else "NaN" if nan else "inf"


def _amount(nan: int, inf: int) -> str:
    parts = []
    if nan:
        parts.append(f"{nan} NaN")
    if inf:
        parts.append(f"{inf} inf")
    return " and ".join(parts)


def _storage(backend: Backend, raw: Any) -> str:
    """``float32[2, 3]``, as error messages describe tensors."""
    return spec_text(backend.dtype_of(raw), backend.shape_of(raw))


def _inputs(backend: Backend, inputs: dict[str, Any]) -> tuple[str, list[str]]:
    """The inputs as text (each non-finite one saying how much it holds) and the names of the non-finite ones."""
    parts = []
    tainted = []
    for key, value in inputs.items():
        several = isinstance(value, list | tuple)
        texts = []
        for i, raw in enumerate(value if several else [value]):
            text = _storage(backend, raw)
            if not backend.all_finite(raw):
                nan, inf, _ = _count(backend, raw)
                text += f" holding {_amount(nan, inf)}"
                tainted.append(f"{key}[{i}]" if several else key)
            texts.append(text)
        parts.append(f"{key}=[{', '.join(texts)}]" if several else f"{key}={texts[0]}")
    return ", ".join(parts), tainted
