"""A decomposition run as the kernel of a backend that has no kernel of that name (before any fallback).

The wrapper takes the kernel convention (raw storage in, raw storage out): it wraps the inputs as Tensors of the
backend, calls the decomposition, which computes the output with ops on that backend, and hands back the raw
output. The call is one kernel call to whoever watches: the tape records the kernel, not its ops, and a trace of
``tp.function`` has one step (its replay calls this wrapper); so the thread's tape, tracer and observers are set
aside while the decomposition runs.
"""

from __future__ import annotations

import threading
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._errors import KernelError
from tensorplug._runtime._registry import DecompositionSpec, resolve
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor, wrap_storage

__all__ = ["DecomposedKernel"]

_running = threading.local()  # the kernels whose decomposition this thread is running


class DecomposedKernel:
    """Kernel ``name`` of ``backend``, computed by its decomposition ``spec``."""

    __slots__ = ("backend", "name", "spec")

    def __init__(self, name: str, spec: DecompositionSpec, backend: Backend) -> None:
        self.name, self.spec, self.backend = name, spec, backend

    def __call__(self, inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        name, spec = self.name, self.spec
        running: set[str] = getattr(_running, "names", None) or set()
        if name in running:
            raise KernelError(
                f"the decomposition of {name!r} (from {spec.source}) calls {name!r} itself on backend "
                f"{self.backend.name!r}, which has no kernel of that name: write it with other ops, or register "
                f"the kernel for {self.backend.name!r}"
            )
        fn = resolve(spec.fn, f"decomposition of {name!r} (from {spec.source})")
        tensors = {
            key: [wrap_storage(v, self.backend) for v in value] if isinstance(value, list | tuple)
            else wrap_storage(value, self.backend)
            for key, value in inputs.items()
        }  # fmt: skip
        saved = state.tape, state.tracer, state.observers
        state.tape = state.tracer = state.observers = None
        _running.names = running | {name}
        try:
            out = fn(tensors, dict(attrs))
        finally:
            state.tape, state.tracer, state.observers = saved
            _running.names = running
        if isinstance(out, list | tuple):
            return tuple(self._raw(o) for o in out)
        return self._raw(out)

    def _raw(self, out: Any) -> Any:
        if not isinstance(out, Tensor) or out._backend is not self.backend:
            where = f"a Tensor of backend {out._backend.name!r}" if isinstance(out, Tensor) else type(out).__name__
            raise KernelError(
                f"the decomposition of {self.name!r} (from {self.spec.source}) returned {where}; it returns the "
                f"kernel's output as Tensors of the backend it ran on ({self.backend.name!r}), computed with ops"
            )
        return out._data

    def __repr__(self) -> str:
        return f"<decomposition of {self.name!r} from {self.spec.source} on {self.backend.name!r}>"
