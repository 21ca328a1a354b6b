"""The engine: backend registry and selection, and ``run_kernel``, the one dispatch path.

``run_kernel`` is the hot path of the whole library: keep it flat. It looks
the kernel up in the active backend's dispatch table (a plain dict rebuilt
lazily from the kernel registry), unwraps inputs to raw storage (moving
tensors that live on another backend), and makes the kernel call of
``_call``: the kernel run, its errors (``failure``), the output's wrapping
and the record on the tape when a watched tensor took part (``wrap_call``).

A kernel the active backend lacks is found in the slow path,
``Engine.resolve_kernel``: when the backend declares a fallback backend
that has it, the table gets a small wrapper kernel that moves the inputs
there, runs the fallback's kernel and moves the results back, so
``run_kernel`` itself never knows about fallbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._engine._backends import INSTALL_HINT as INSTALL_HINT
from tensorplug._runtime._engine._backends import FallbackKernel as FallbackKernel
from tensorplug._runtime._engine._backends import _call_kernel_hook as _call_kernel_hook
from tensorplug._runtime._engine._backends import engine as engine
from tensorplug._runtime._engine._call import call as call
from tensorplug._runtime._engine._call import failure as failure
from tensorplug._runtime._engine._call import input_orders_from as input_orders_from
from tensorplug._runtime._engine._call import recorded_inputs as recorded_inputs
from tensorplug._runtime._engine._call import watching as watching
from tensorplug._runtime._errors import TensorplugError
from tensorplug._runtime._registry import RUNTIME, BackendSpec
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor, wrap_call, wrap_storage

_NO_ATTRS: dict[str, Any] = {}


def run_kernel(name: str, inputs: Mapping[str, Any], attrs: dict[str, Any] | None = None) -> Tensor | list[Tensor]:
    """Run kernel ``name`` of the active backend on ``inputs`` (Tensors, or lists of them).

    Returns a Tensor, or a list of Tensors for kernels with several outputs.

    >>> import tensorplug as tp
    >>> tp.run_kernel("Add", {"a": tp.tensor([1.0]), "b": tp.tensor([2.0])}).tolist()
    [3.0]
    """
    backend = engine.active
    if backend is None:
        backend = engine.ensure_active()
    fn = engine.table.get(name)
    if fn is None:
        fn = engine.resolve_kernel(name, backend)
    if attrs is None:
        attrs = _NO_ATTRS
    tape = state.tape
    raw: dict[str, Any] = {}
    if tape is None:
        # The common case, kept tight: no tape, so no watched-tensor checks.
        for key, t in inputs.items():
            if isinstance(t, Tensor) and t._backend is backend:
                raw[key] = t._data
            else:
                raw[key] = _unwrap(name, backend, key, t)
    else:
        token = tape.token
        watched = False
        for key, t in inputs.items():
            if isinstance(t, Tensor) and t._backend is backend:
                raw[key] = t._data
                mark = t._tape
                if mark is token or (mark is not None and id(t) in tape.watched_ids):  # tape.is_watching(t)
                    watched = True
            else:
                raw[key] = _unwrap(name, backend, key, t)
                if isinstance(t, Tensor):
                    watched = watched or tape.is_watching(t)
                else:
                    watched = watched or any(tape.is_watching(u) for u in t)
        if not watched:
            tape = None
    # _call.call, inline (tests/unit/test_kernel_call.py checks it against call)
    try:
        out = fn(raw, attrs, backend)
    except TensorplugError:
        raise
    except Exception as exc:
        raise failure(name, backend, inputs, attrs, exc) from exc
    if tape is None:
        if type(out) is not tuple and type(out) is not list:
            return wrap_storage(out, backend)
        several: list[Tensor] = wrap_call(out, backend, None, None, name, inputs, attrs)
        return several
    result: Tensor | list[Tensor] = wrap_call(out, backend, None, tape, name, recorded_inputs(name, inputs), attrs)
    return result


def _unwrap(name: str, backend: Backend, key: str, value: Any) -> Any:
    """Raw storage of an input that is not a Tensor already on ``backend``: move it, or unwrap a list."""
    if isinstance(value, Tensor):
        engine.move(value, backend)
        return value._data
    if not isinstance(value, list | tuple):
        raise _bad_input(name, backend, key, value)
    items = []
    for u in value:
        if not isinstance(u, Tensor):
            raise _bad_input(name, backend, key, u)
        if u._backend is not backend:
            engine.move(u, backend)
        items.append(u._data)
    return items


# -- checked calls: an op's kernel call on inputs whose dtypes it has checked once -----------------------


class Entry:
    """What a later call of kernel ``name`` needs, once an op has checked a call of it on tensors of some dtypes.

    An op keeps one per input dtypes it accepts as they are (``make_entry``, after a call that converted
    nothing); it stays valid while ``table``, the active backend's dispatch table when it was made, is still
    ``engine.table``. The engine puts a new table in place whenever what a lookup would find may change: a
    kernel registered or removed (an override), the backend switched, re-initialised or disposed, a
    fallback backend registered, an observer (``tp.profile``, ``tp.debug``, a ``tp.function`` trace) coming
    or going. While it is valid, ``fn`` is what ``run_kernel`` would call on ``backend``, and the output has
    dtype ``dtype``, the first call's (kernels give the dtype their contract says, from the dtypes of
    their inputs alone). A later call on tensors of the same dtypes then only needs the op's shape checks.
    ``direct`` is ``fn.direct`` when the kernel has one (made by ``kernel_factories.unary``/``binary``, or a
    backend's factory likewise): the kernel called with its raw inputs in order, no inputs dict; or None.
    """

    __slots__ = ("backend", "direct", "dtype", "fn", "name", "table")

    def __init__(self, name: str, table: dict[str, Any], backend: Backend, fn: Any, dtype: str) -> None:
        self.name = name
        self.table = table
        self.backend = backend
        self.fn = fn
        self.direct: Callable[..., Any] | None = getattr(fn, "direct", None)  # None for observed kernels too
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"<Entry {self.name!r} on backend {self.backend.name!r} -> {self.dtype}: {self.fn!r}>"


def make_entry(name: str, table: dict[str, Any], out: Any) -> Entry | None:
    """The entry of kernel ``name``, whose call just returned ``out`` and began while the active dispatch table was
    ``table``; None when the table changed meanwhile (another thread registered a kernel, say) or the call gave
    several outputs."""
    backend = engine.active
    if (
        type(out) is not Tensor
        or backend is None
        or out._backend is not backend
        or engine.table is not table
        or engine.tables.get(backend.name) is not table  # a backend switch in between: table is another's
    ):
        return None
    fn = table.get(name)
    if fn is None:
        return None
    return Entry(name, table, backend, fn, out.dtype)


def run_entry(entry: Entry, inputs: dict[str, Any], raw: dict[str, Any], attrs: dict[str, Any]) -> Tensor:
    """``run_kernel`` for a checked call of a single-output kernel: ``entry`` is valid (``entry.table is
    engine.table``), ``inputs`` are Tensors of ``entry.backend``, and ``raw`` holds their storage under the same
    names. The kernel call is run_kernel's (``call``); the output has the entry's dtype."""
    tape = state.tape
    if tape is not None:
        tape = watching(tape, inputs)
    return call(entry.name, entry.fn, raw, inputs, attrs, entry.backend, entry.dtype, tape)  # type: ignore[return-value]


class _SingleOutputDispatch(Protocol):
    def __call__(self, name: str, inputs: Mapping[str, Any], attrs: dict[str, Any] | None = None, /) -> Tensor: ...


dispatch: _SingleOutputDispatch = run_kernel  # type: ignore[assignment]
"""``run_kernel`` for single-output kernels, typed as returning one Tensor (what the ops call)."""


def _bad_input(name: str, backend: Backend, key: str, value: object) -> TensorplugError:
    from tensorplug._runtime._errors import DTypeError

    return DTypeError(
        f"run_kernel({name!r}) on backend {backend.name!r}: input {key!r} is a {type(value).__name__}, "
        "not a Tensor (or a list of Tensors); convert it with tp.tensor(...) first"
    )


# -- public backend API ------------------------------------------------------


def register_backend(
    name: str,
    factory: Callable[..., Backend] | str,
    priority: int | Callable[[], int] | str = 0,
    *,
    override: bool = False,
    fallback: str | None = None,
) -> None:
    """Register a backend factory (a callable, or a lazy ``"module:attr"`` name) under ``name``.

    The factory runs when the backend is first used. Among registered
    backends the default is the highest-priority one whose factory succeeds.
    With ``fallback`` (another backend's name), a kernel this backend lacks
    runs on that backend instead, its inputs moved there and its results
    moved back, with one ``tp.FallbackWarning`` per kernel.
    """
    engine.add_backend(BackendSpec(name, factory, priority, RUNTIME, fallback), override=override)


def remove_backend(name: str) -> None:
    """Dispose the backend (running its kernels' dispose hooks) and forget its registration."""
    engine.remove_backend(name)


def set_backend(name: str, **options: Any) -> None:
    """Make ``name`` the active backend, initialising it with ``options`` if given."""
    engine.activate(name, options)


def get_backend() -> str:
    """The name of the active backend (initialising the default backend if none is active yet)."""
    return engine.ensure_active().name


def backend(name: str | None = None) -> Backend:
    """The Backend instance named ``name`` (the active one by default), initialising it if needed."""
    if name is None:
        return engine.ensure_active()
    return engine.initialize(name)


def list_backends() -> list[str]:
    """Names of every registered backend, highest priority first (none is initialised)."""
    return engine.names()
