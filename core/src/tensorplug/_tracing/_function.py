"""``tp.function``: trace a function once per input signature, then replay its flat program of kernel calls.

The first call with a new signature runs ``f`` eagerly while a :class:`Tracer` (a kernel observer of this
thread, see :mod:`tensorplug._runtime._observe`) records every kernel call it makes, forward and backward, as a
:class:`Step`. Each raw storage object the trace meets gets a *register*, named by where its value comes from:

- ``argument``: the storage of a tensor argument (each argument gets a fresh storage object for the trace,
  so that it is told apart from any other tensor sharing its storage);
- ``variable``: what a Variable held when the trace first read it. While this thread traces, reading a
  Variable's storage gives the tracer's own stand-in for it (a fresh storage object over the same values, made
  at the first read, see :meth:`Tracer.variable_storage`), so that the trace tells reads of the Variable from
  other uses of the same storage (a snapshot sharing it stays a constant), and other threads, which see the
  storage itself, are left alone; a replay reads the Variable when it starts;
- ``host``: a per-call host value (what an optimizer computes on the host from its step count);
- ``step``: an output of a kernel call of the trace;
- ``constant``: anything else (``tp.tensor`` data, cached scalars), captured as it is.

``Variable.assign`` during the trace is an :class:`Assign` step. The :class:`Program` (steps, registers,
outputs) is a plain data structure; the plain replay is Python code generated from it: each kernel called on
raw storage in order, its inputs a dict literal, each register deleted after its last use, no op validation,
no tape, no Tensor but the outputs. A trace that read a traced value back to Python (``.item()``,
``.numpy()``, ``bool()``, ``print``...), moved data between backends, or met a storage object it cannot tell
apart, is not replayable: that signature runs eagerly, with one :class:`~tensorplug.FunctionWarning`.
"""

from __future__ import annotations

import functools
import itertools
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypeVar

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import FunctionWarning, InvalidArgumentError, KernelError, TensorplugError, warn
from tensorplug._runtime._lazy import persist_lazy
from tensorplug._runtime._observe import everywhere, observing
from tensorplug._runtime._program import Assign, Program
from tensorplug._runtime._registry import decomposition_registry, gradient_registry, kernel_registry
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor, wrap_storage
from tensorplug._runtime._variable import Variable, tracing_variables
from tensorplug._tracing._pipeline import FUNCTION, PLAIN, build, lower
from tensorplug._tracing._replay import (
    failed_step,
    host_storage,
    lowered_failure_message,
    persist_step,
    replay_observed,
    roll_back,
    step_error,
)
from tensorplug._tracing._signature import aliases, flatten, rebuild, signature, unflatten
from tensorplug._tracing._tracer import Tracer
from tensorplug._tracing._warm import MISSED, Warm, pure_program, warm_arguments, warm_path, warm_replay, warmable

__all__ = ["Function", "function"]

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_MAX_TRACES = 8


# -- the signature: registries that changed make every trace stale ---------------------------------------------


_version = itertools.count()
_registry_version = next(_version)


def _registries_changed(key: Any) -> None:
    global _registry_version
    _registry_version = next(_version)  # every trace made before is stale: its kernels or gradients changed


kernel_registry.on_change(_registries_changed)
gradient_registry.on_change(_registries_changed)
decomposition_registry.on_change(_registries_changed)  # a trace's step may run a decomposition in place of a kernel


# -- the function --------------------------------------------------------------------------------------------


class _Stale(Exception):
    """A trace cannot serve this call (a variable it reads was collected, or moved): trace again."""


@dataclass(eq=False)
class _Trace:
    """What the cache holds per signature: the program and its compiled replay, or why it runs eagerly."""

    program: Program | None
    reason: str | None = None
    replay: Callable[..., Any] | None = None
    lowered: bool = False
    structure: Any = None
    dtypes: tuple[str | None, ...] = ()
    returned: tuple[tuple[int, int], ...] = ()  # (position among the results, variable index): f returned a Variable
    used: int = 0
    warmable: bool = False  # a call may take the warm path (_tracing._warm)
    pure: bool = False  # a pure function of its tensor arguments: the warm path's leanest replay (_tracing._warm)


_uses = itertools.count()


class Function(Generic[P, R]):
    """A function traced once per input signature and replayed as a flat program of kernel calls.

    Made by :func:`function`; see it for the rules. ``trace_count`` counts the traces made,
    ``clear_cache()`` forgets them, ``program(*args)`` shows the program a call with these arguments
    replays (tracing first if needed).
    """

    def __init__(self, fn: Callable[P, R], max_traces: int = DEFAULT_MAX_TRACES, lower: bool = True) -> None:
        if not callable(fn):
            raise InvalidArgumentError(f"tp.function: expects a function, got a {type(fn).__name__}")
        if isinstance(max_traces, bool) or not isinstance(max_traces, int) or max_traces < 1:
            raise InvalidArgumentError(f"tp.function: max_traces must be an int >= 1, got {max_traces!r}")
        self.python_function = fn
        self.max_traces = max_traces
        self.lower = bool(lower)
        self.trace_count = 0
        self._cache: dict[tuple[Any, ...], _Trace] = {}
        self._lock = threading.Lock()
        self._warned_retracing = False
        self._captures: dict[int, Any] = {}  # id -> storage of each tensor f captures that came as an argument
        self._captured: frozenset[int] = frozenset()  # the ids of those and of every cached program's constants
        self._warned_lowering = False
        self._warm: Warm | None = None
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<tp.function {self.__name__!r}: {len(self._cache)} traces cached, {self.trace_count} made>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method: the instance is a static argument (hashable by identity, as objects are by default)."""
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def clear_cache(self) -> None:
        """Forget every trace: the next call with any signature traces again."""
        with self._lock:
            self._cache.clear()
            self._captures.clear()
            self._recount()
            self._warm = None

    def _recount(self) -> None:
        """(Under the lock) the ids of the storages the cached traces capture, which select traces of their own."""
        ids = set(self._captures)
        for entry in self._cache.values():
            if entry.program is not None:
                ids.update(id(raw) for _, raw in entry.program.constants)
        self._captured = frozenset(ids)

    def _key(
        self, backend: Backend, args: tuple[Any, ...], kwargs: dict[str, Any], leaves: list[Tensor]
    ) -> tuple[Any, ...]:
        overrides = state.overrides
        key: list[Any] = [backend, _registry_version, None if not overrides else frozenset(overrides.items())]
        fname = self.__name__
        for i, a in enumerate(args):
            if type(a) is Tensor:  # the common case, inline
                key.append((a._backend, a._data.shape, a._dtype or a.dtype))
                leaves.append(a)
            else:
                signature(fname, a, key, leaves, f"argument {i}")
        if kwargs:
            for name in sorted(kwargs):
                key.append(name)
                signature(fname, kwargs[name], key, leaves, f"argument {name!r}")
        n = len(leaves)
        if n > 2 or (n == 2 and leaves[0] is leaves[1]):
            pattern = aliases(leaves)  # the same tensor twice: one argument (its gradients are one)
            if pattern is not None:
                key.append(pattern)
        captured = self._captured
        if captured:  # an argument that is a tensor f captures (a constant of a trace) is one tensor with it
            marks = tuple((i, id(t._data)) for i, t in enumerate(leaves) if id(t._data) in captured)
            if marks:
                key.append(("captured", marks))
        return tuple(key)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        warm = self._warm
        if (
            warm is not None
            and not kwargs
            and engine.active is warm.backend
            and warm.version == _registry_version
            and state.tape is None
            and state.tracer is None
            and not state.overrides
            and state.observers is None
            and not everywhere
        ):
            arguments = warm_arguments(warm, args, self._captured)
            if arguments is not None:
                entry = warm.entry
                if entry.pure:
                    result = warm_replay(entry, warm.backend, arguments)
                else:
                    try:
                        result = self._run(entry, arguments)
                    except _Stale:
                        result = MISSED  # the general path traces again
                if result is not MISSED:
                    entry.used = next(_uses)
                    return result  # type: ignore[no-any-return]
        if state.tape is not None or state.tracer is not None:
            # Recorded by an outer gradient scope (so that gradients flow through f), or inside another trace
            # (which records f's kernels as its own): f runs as plain Python.
            return self.python_function(*args, **kwargs)
        backend = engine.active or engine.ensure_active()
        leaves: list[Tensor] = []
        key = self._key(backend, args, kwargs, leaves)
        entry = self._cache.get(key)
        if entry is None:
            return self._trace(key, backend, args, kwargs, leaves)
        entry.used = next(_uses)
        if entry.program is None:
            return self.python_function(*args, **kwargs)
        try:
            result = self._replay(entry, leaves)
            if entry.warmable and not kwargs and (self._warm is None or self._warm.entry is not entry):
                # (the registries' version the key was made with: a registration made since leaves it stale)
                self._warm = warm_path(entry, backend, args, self._captured, key[1])
            return result  # type: ignore[no-any-return]
        except _Stale:
            with self._lock:
                self._warm = None
                if self._cache.get(key) is entry:
                    del self._cache[key]
                    self._recount()
            return self._trace(key, backend, args, kwargs, leaves)

    def program(self, *args: P.args, **kwargs: P.kwargs) -> Program:
        """The program that a call with these arguments replays (the call traces f first if needed, running it)."""
        backend = engine.active or engine.ensure_active()
        key = self._key(backend, args, kwargs, [])
        entry = self._cache.get(key)
        if entry is None:
            self(*args, **kwargs)
            entry = self._cache.get(key)
        if entry is None:
            raise TensorplugError(
                f"tp.function {self.__name__!r}: no trace for these arguments (called inside a gradient scope or "
                "another trace, it runs as plain Python)"
            )
        if entry.program is None:
            raise TensorplugError(f"tp.function {self.__name__!r} runs eagerly for these arguments: {entry.reason}")
        return entry.program

    # -- tracing

    def _trace(
        self,
        key: tuple[Any, ...],
        backend: Backend,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tensors: list[Tensor],
    ) -> R:
        captured = self._captured
        itself = [t for t in tensors if id(t._data) in captured]  # arguments f captures: passed as themselves
        ids = {id(t) for t in itself}
        tracer = Tracer(self.__name__, backend)
        state.tracer = tracer
        try:
            with tracing_variables(), observing(tracer):
                copies: dict[int, Tensor] = {}

                def swap(t: Tensor) -> Tensor:  # the arguments, in the order the key lists them, each tensor once
                    if isinstance(t, Variable):
                        return t
                    copy = copies.get(id(t))
                    if copy is None:
                        copy = copies[id(t)] = tracer.argument_itself(t) if id(t) in ids else tracer.argument(t)
                    return copy

                traced_args = rebuild(args, swap)
                swapped = {k: rebuild(kwargs[k], swap) for k in sorted(kwargs)}
                traced_kwargs = {k: swapped[k] for k in kwargs}
                result = self.python_function(*traced_args, **traced_kwargs)
                leaves: list[Tensor] = []
                structure = flatten(result, leaves)
                outputs = []
                for t in leaves:
                    if t._backend is not backend:
                        tracer.fail(f"it returned a tensor on backend {t._backend.name!r}")
                        break
                    outputs.append(tracer._input(t._data))
        finally:
            state.tracer = None
        if tracer.captured:
            return self._captured_argument(backend, args, kwargs, tracer)
        if itself:  # kept while f is: a replay of this trace reads them through the argument
            with self._lock:
                self._captures.update((id(t._data), t._data) for t in itself)
        if tracer.failure is not None:
            entry = _Trace(None, tracer.failure)
            warn(
                f"tp.function {self.__name__!r} cannot be replayed for this signature, so it runs eagerly at every "
                f"call with it: {tracer.failure}. A replay runs the recorded kernels only, so values must stay on the "
                "tensor side: use tp.where instead of an `if` on a tensor, keep losses as tensors and read them "
                "after the call, or pass the Python value as an argument (a static one: each value traces once)",
                FunctionWarning,
                stacklevel=3,
            )
        else:
            program = build(tracer, outputs)
            made = lower(program, FUNCTION if self.lower else PLAIN)
            if made.failure is not None:
                self._lowering_failed(program, made.failure)
            replay, lowered = made.replay, made.lowered
            assert replay is not None  # a tp.function program always has one: the plain replay at least
            dtypes = tuple(t.dtype for t in leaves)
            returned = _returned_variables(program, leaves)
            entry = _Trace(
                program,
                None,
                replay,
                lowered,
                structure,
                dtypes,
                returned,
                warmable=warmable(program),
                pure=pure_program(program, returned),
            )
            if backend.lazy:  # the optimizers inside f did not persist while tracing: the step boundary is here
                assigned = [program.variables[i]() for i, _ in program.updates]
                persist_lazy([*leaves, *(v for v in assigned if v is not None)])
        entry.used = next(_uses)
        self._store(key, entry)
        return result

    def _captured_argument(self, backend: Backend, args: tuple[Any, ...], kwargs: dict[str, Any], tracer: Tracer) -> R:
        """The trace met a tensor argument as a tensor ``f`` captures too (a closure or global variable): the trace
        gave ``f`` a copy, two tensors where the call has one (a gradient with respect to the argument misses the
        captured uses). Trace again with that argument itself, under a signature of its own."""
        with self._lock:
            for raw in tracer.captured:
                self._captures[id(raw)] = raw
            self._recount()
        if tracer.host or any(isinstance(s, Assign) for s in tracer.steps):
            raise InvalidArgumentError(
                f"tp.function {self.__name__!r}: {_described(tracer)} is also a tensor the function captures (a "
                "closure or global variable), and the trace gave the function a copy of the argument, so that the "
                "two were two tensors in this call, which updated Variables (and cannot run again to redo it): "
                "its results and updates may differ from an eager call's. Calls from now on treat the argument and "
                "the captured tensor as one tensor; to be sure, pass that tensor as an argument only"
            )
        leaves: list[Tensor] = []
        key = self._key(backend, args, kwargs, leaves)
        return self._trace(key, backend, args, kwargs, leaves)

    def _lowering_failed(self, program: Program, failure: str) -> None:
        if self._warned_lowering:
            return
        self._warned_lowering = True
        warn(
            f"tp.function {self.__name__!r}: backend {program.backend.name!r} failed to lower the traced program "
            f"({failure}), so it runs the plain replay (each kernel called in turn); the results are the same. "
            "Report it to the backend's authors; tp.function(lower=False) skips the lowering",
            FunctionWarning,
            stacklevel=4,
        )

    def _store(self, key: tuple[Any, ...], entry: _Trace) -> None:
        with self._lock:
            self.trace_count += 1
            self._cache[key] = entry
            self._warm = None
            if len(self._cache) > self.max_traces:
                oldest = min(self._cache, key=lambda k: self._cache[k].used)
                del self._cache[oldest]
                warn_now = not self._warned_retracing
                self._warned_retracing = True
            else:
                warn_now = False
            self._recount()
        if warn_now:
            warn(
                f"tp.function {self.__name__!r} has been traced {self.trace_count} times, more than max_traces="
                f"{self.max_traces}: its signature keeps changing, and each trace runs the function eagerly and "
                "records it again. Python arguments are static (each new value traces again): pass numbers that "
                "change as tensors; tensors of new shapes or dtypes trace again too. Raise the bound with "
                "tp.function(max_traces=N) if these signatures are all needed",
                FunctionWarning,
                stacklevel=4,
            )

    # -- replaying

    def _replay(self, entry: _Trace, leaves: list[Tensor]) -> Any:
        program = entry.program
        assert program is not None
        if program.guards:
            for guard in program.guards:
                if not guard():
                    raise _Stale
        return self._run(entry, [t._data for t in leaves])

    @staticmethod
    def _run(entry: _Trace, arguments: list[Any]) -> Any:
        """The replay of ``entry``'s trace on the arguments' storages, its guards checked: reads the Variables and
        host values, assigns the updates, wraps the results (the general path's and the warm path's)."""
        program = entry.program
        assert program is not None
        backend = program.backend
        variables = []
        current = []  # what the variables hold when the call starts: the replay reads them from this list
        for ref in program.variables:
            v = ref()
            if v is None or v._backend is not backend:
                raise _Stale
            variables.append(v)
            current.append(v._value)
        ran = 0
        try:
            host: list[Any] = []
            if program.host:
                for h in program.host:
                    values = h.compute()
                    ran += 1
                    if h.dtype is not None:
                        host.extend(host_storage(h, values))
            if state.observers is not None or everywhere:
                outputs, updates = replay_observed(program, arguments, current, host)
            else:
                try:
                    outputs, updates = entry.replay(arguments, current, host)  # type: ignore[misc]
                except TensorplugError:
                    raise
                except Exception as exc:
                    index = failed_step(exc)
                    if index is None:
                        raise KernelError(lowered_failure_message(program, exc)) from exc
                    raise step_error(program, index, exc) from exc
            if backend.lazy:
                outputs, updates = persist_step(program, outputs, updates)
            if (updates or program.updates) and len(updates) != len(program.updates):
                message = f"it returned {len(updates)} variable updates for the program's {len(program.updates)}"
                raise KernelError(lowered_failure_message(program, ValueError(message)))
        except BaseException:
            roll_back(program, ran)  # no Variable took a new value yet: only host state to take back
            raise
        if updates:
            for (index, _), raw in zip(program.updates, updates, strict=True):
                variables[index]._value = raw
        dtypes = entry.dtypes
        if entry.structure is None:
            if entry.returned:
                return variables[entry.returned[0][1]]
            return wrap_storage(outputs[0], backend, dtypes[0])
        tensors = [wrap_storage(raw, backend, dtype) for raw, dtype in zip(outputs, dtypes, strict=True)]
        for position, index in entry.returned:
            tensors[position] = variables[index]
        return unflatten(entry.structure, iter(tensors))


def _described(tracer: Tracer) -> str:
    """``the argument float32[2]``: the arguments the trace met as captured tensors too."""
    described = []
    for raw in tracer.captured:
        spec = tracer.specs[tracer.register_of[id(raw)]]
        described.append(f"the argument {spec}")
    return " and ".join(described)


def _returned_variables(program: Program, leaves: list[Tensor]) -> tuple[tuple[int, int], ...]:
    """``(position, variable index)`` of each Variable among the results: a replay returns the Variable itself."""
    returned = []
    for position, t in enumerate(leaves):
        if isinstance(t, Variable):
            for index, ref in enumerate(program.variables):
                if ref() is t:
                    returned.append((position, index))
                    break
    return tuple(returned)


def function(fn: Callable[P, R] | None = None, *, max_traces: int = DEFAULT_MAX_TRACES, lower: bool = True) -> Any:
    """Trace ``fn`` once per input signature and replay the kernels it ran, as ``tf.function`` / ``jax.jit``.

    Use it as ``@tp.function``, ``@tp.function(max_traces=4)`` or ``tp.function(fn)``. The first call with a
    new signature (each tensor argument's shape, dtype, backend and device; which arguments are the same
    tensor, and which are a tensor ``fn`` captures, one tensor with it as eagerly; other arguments by value,
    ``0.0`` and ``-0.0`` apart; the active backend and gradient override scopes) runs ``fn`` eagerly and records
    every kernel it runs, forward and backward; later calls replay those kernels on raw storage. Variables are read
    at the start of each replay and ``assign`` is redone, so an optimizer step inside ``fn`` updates them at every
    call (with the optimizer's hyper-parameters of that call); a replay that raises leaves every Variable, and the
    optimizers' step counts, as they were. A Variable ``fn`` returns is returned itself. Tracing in one thread
    changes nothing other threads see. Python side effects (print, making Variables or optimizer slots) happen at
    trace time only. See docs/tracing.md for what cannot be replayed (it then runs
    eagerly, with a ``tp.FunctionWarning``), and how gradient scopes, ``tp.profile`` and ``tp.debug`` behave. A
    backend may lower the program it traced into a faster replay of its own (:meth:`Backend.lower_step` per
    step, or :meth:`Backend.compile` for the whole program); ``lower=False`` keeps the plain replay (each kernel
    called in turn).

    >>> import tensorplug as tp
    >>> @tp.function
    ... def f(x):
    ...     return tp.tanh(x) * 2.0
    >>> f(tp.tensor([0.0, 1.0])).shape, f(tp.tensor([0.5, 2.0])).shape, f.trace_count
    ((2,), (2,), 1)
    """
    if fn is None:
        return lambda f: Function(f, max_traces, lower)
    return Function(fn, max_traces, lower)
