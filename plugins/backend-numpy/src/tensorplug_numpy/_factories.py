"""Kernel factories of the numpy kernel modules, and the floating-point policy every kernel follows: quiet.

inf - inf, inf * 0, 0 / 0, overflow: a kernel gives the inf or NaN the
kernel contract specifies and says nothing, as TensorFlow.js and PyTorch do
(``tp.debug`` is the tool that finds where NaNs come from). NumPy would warn
(RuntimeWarning) in such cases, so every kernel that computes floats runs
with NumPy's floating-point error handling off: made by ``unary`` or
``binary`` here, or decorated with ``quiet``. Kernels that only move, pick
or compare values cannot trigger it and run as they are (``exact_unary``,
``exact_binary``).

``np.errstate`` around each call would cost ~0.8 us, as much as the rest of
a small Add's dispatch. NumPy (2.0 and later) keeps its error settings in a
context variable, so each thread keeps one ``contextvars.Context`` with the
errors ignored instead, made once, and a kernel runs inside it with
``Context.run`` (~0.1 us). NumPy's settings outside the kernels are the
user's, untouched. Inside that context other context variables keep the
values they had when the thread first ran a kernel: kernels read none.
With NumPy 1.x, whose settings are per thread, kernels fall back to
``np.errstate``. The numpy backend's ``tp.function`` lowering runs a whole
replay in the quiet context.
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from tensorplug.kernel_factories import Kernel as Kernel
from tensorplug.kernel_factories import binary as exact_binary
from tensorplug.kernel_factories import unary as exact_unary

_QUIET = contextvars.ContextVar("tensorplug_numpy_quiet", default=False)
"""True inside a thread's quiet context: a kernel called from a quiet kernel (or a lowered replay) just runs."""
_threads = threading.local()
_CONTEXT_LOCAL_ERRSTATE = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


class Runner(Protocol):
    """What ``quiet_context`` returns: ``run(fn, *args)`` calls ``fn(*args)`` with floating-point errors off."""

    def run(self, fn: Callable[..., Any], /, *args: Any) -> Any: ...


class _Errstate:
    """The runner of NumPy 1.x, whose error settings are per thread, not per context: np.errstate per call."""

    def run(self, fn: Callable[..., Any], /, *args: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args)


def _enter_quiet() -> None:
    np.seterr(all="ignore")  # run inside the new context: only that context's settings change
    _QUIET.set(True)


def quiet_context() -> Runner | None:
    """This thread's runner of quiet calls, or None when the caller runs quietly already."""
    if _QUIET.get():
        return None
    try:
        runner: Runner = _threads.runner
    except AttributeError:
        if _CONTEXT_LOCAL_ERRSTATE:
            context = contextvars.copy_context()
            context.run(_enter_quiet)
            runner = context
        else:
            runner = _Errstate()
        _threads.runner = runner
    return runner


def quiet(kernel: Kernel) -> Kernel:
    """``kernel`` run with NumPy's floating-point warnings off (see the module docstring)."""

    @functools.wraps(kernel)
    def quiet_kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        runner = quiet_context()
        if runner is None:
            return kernel(inputs, attrs, backend)
        return runner.run(kernel, inputs, attrs, backend)

    return quiet_kernel


def unary(fn: Callable[[Any], Any]) -> Kernel:
    """The quiet kernel applying ``fn`` to input ``x``; ``kernel.applies`` is ``fn``, ``kernel.direct(x)`` the
    kernel on its raw input (see ``tensorplug.kernel_factories.binary``)."""

    def direct(x: Any) -> Any:
        runner = quiet_context()
        if runner is None:
            return fn(x)
        return runner.run(fn, x)

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        runner = quiet_context()
        if runner is None:
            return fn(inputs["x"])
        return runner.run(fn, inputs["x"])

    kernel.__name__ = direct.__name__ = getattr(fn, "__name__", "unary")
    kernel.applies = fn  # type: ignore[attr-defined]  # what a tp.function lowering calls directly
    kernel.direct = direct  # type: ignore[attr-defined]  # what an eager op calls once it has checked the call
    return kernel


def binary(fn: Callable[[Any, Any], Any]) -> Kernel:
    """The quiet kernel applying ``fn`` to inputs ``a`` and ``b``; ``kernel.applies`` is ``fn``, ``kernel.direct(a,
    b)`` the kernel on its raw inputs (see ``tensorplug.kernel_factories.binary``)."""

    def direct(a: Any, b: Any) -> Any:
        runner = quiet_context()
        if runner is None:
            return fn(a, b)
        return runner.run(fn, a, b)

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        runner = quiet_context()
        if runner is None:
            return fn(inputs["a"], inputs["b"])
        return runner.run(fn, inputs["a"], inputs["b"])

    kernel.__name__ = direct.__name__ = getattr(fn, "__name__", "binary")
    kernel.applies = fn  # type: ignore[attr-defined]
    kernel.direct = direct  # type: ignore[attr-defined]
    return kernel


__all__ = ["Kernel", "Runner", "binary", "exact_binary", "exact_unary", "quiet", "quiet_context", "unary"]
