"""The engine: backend registry and selection, and ``run_kernel``, the one dispatch path.

``run_kernel`` is the hot path of the whole library: keep it flat. It looks
the kernel up in the active backend's dispatch table (a plain dict rebuilt
lazily from the kernel registry), unwraps inputs to raw storage (moving
tensors that live on another backend), calls the kernel, wraps the outputs,
and records the call on the tape when a watched tensor took part.

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
from tensorplug._runtime._errors import KernelError, TensorplugError
from tensorplug._runtime._observe import ObservedKernel
from tensorplug._runtime._registry import RUNTIME, BackendSpec, resolve
from tensorplug._runtime._state import Record, new_record, state
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.kernel_names import CATALOGUE

_NO_ATTRS: dict[str, Any] = {}
_new = object.__new__


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
    watched = False
    if tape is None:
        # The common case, kept tight: no tape, so no watched-tensor checks.
        for key, t in inputs.items():
            if isinstance(t, Tensor) and t._backend is backend:
                raw[key] = t._data
            else:
                raw[key] = _unwrap(name, backend, key, t)
    else:
        token = tape.token
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
    try:
        out = fn(raw, attrs, backend)
    except TensorplugError:
        raise
    except Exception as exc:
        raise KernelError(_failure_message(name, backend, inputs, attrs, exc)) from exc
    if type(out) is tuple or type(out) is list:
        return _wrap_several(name, inputs, attrs, out, backend, tape if watched else None)
    t = _new(Tensor)
    t._data = out
    t._backend = backend
    t._dtype = None
    if watched:
        assert tape is not None
        t._tape = tape.token
        overrides = state.overrides
        grad = None if overrides is None else overrides.get(name)
        recorded = dict(inputs) if len(inputs) < 2 else recorded_inputs(name, inputs)
        tape.records.append(new_record(Record, (name, recorded, attrs, (t,), grad)))
    else:
        t._tape = None
    return t


_declared_orders: dict[str, tuple[str, ...] | None] = {}
_input_orders: Callable[[str], tuple[str, ...] | None] | str | None = None


def input_orders_from(orders: Callable[[str], tuple[str, ...] | None] | str | None) -> None:
    """Let ``orders(kernel_name)`` (or the ``"module:attr"`` that is it, imported the first time a core kernel of
    several inputs is recorded) give the order in which a core kernel declares its inputs (None: it declares
    none); the package plugs in the kernel reference's."""
    global _input_orders
    _input_orders = orders
    _declared_orders.clear()


def recorded_inputs(name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs of a recorded call, as the tape keeps them: in the order the kernel declares them (the order of
    the entries of a gradient that returns one per input), whatever the order of the dict ``run_kernel`` got."""
    if len(inputs) < 2:
        return dict(inputs)
    order = _declared_orders.get(name, ())
    if order == ():
        order = _declared_orders[name] = _declared_order(name)
    if order is None or tuple(inputs) == order or set(inputs) != set(order):
        return dict(inputs)  # a kernel that declares no order, or inputs that are not those it declares
    return {key: inputs[key] for key in order}


def _declared_order(name: str) -> tuple[str, ...] | None:
    global _input_orders
    if _input_orders is None or name not in CATALOGUE:
        return None
    if isinstance(_input_orders, str):
        _input_orders = resolve(_input_orders, "the kernels' input orders")
    assert callable(_input_orders)
    return _input_orders(name)


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


def _wrap_several(
    name: str, inputs: Mapping[str, Any], attrs: dict[str, Any], out: Any, backend: Backend, tape: Any
) -> list[Tensor]:
    """Wrap the outputs of a multi-output kernel, recording the call when ``tape`` is given."""
    mark = None if tape is None else tape.token
    outputs = []
    for o in out:
        t = _new(Tensor)
        t._data = o
        t._backend = backend
        t._tape = mark
        t._dtype = None
        outputs.append(t)
    if tape is not None:
        overrides = state.overrides
        grad = None if overrides is None else overrides.get(name)
        tape.records.append(new_record(Record, (name, recorded_inputs(name, inputs), attrs, list(outputs), grad)))
    return outputs


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
    engine.table``), ``inputs`` are Tensors of ``entry.backend`` in a dict of this call's own (the tape records
    it as it is), and ``raw`` holds their storage under the same names. Kernel errors, observers and recording
    are run_kernel's; the output has the entry's dtype. (The elementwise ops run the same steps inline.)"""
    backend = entry.backend
    tape = state.tape
    try:
        out = entry.fn(raw, attrs, backend)
    except TensorplugError:
        raise
    except Exception as exc:
        raise kernel_failure(entry, inputs, attrs, exc) from exc
    if type(out) is tuple or type(out) is list:
        return several_outputs(entry, inputs, attrs, out)  # type: ignore[return-value]  # as run_kernel does
    t = _new(Tensor)
    t._data = out
    t._backend = backend
    t._dtype = entry.dtype
    t._tape = None
    if tape is not None:
        record_entry(entry, tape, inputs, attrs, t)
    return t


def kernel_failure(entry: Entry, inputs: dict[str, Any], attrs: dict[str, Any], exc: Exception) -> KernelError:
    """What a checked call raises when its kernel raised ``exc`` (not a tensorplug error, which passes as it is):
    run_kernel's error, naming kernel, backend, inputs and attrs."""
    return KernelError(_failure_message(entry.name, entry.backend, inputs, attrs, exc))


def record_entry(entry: Entry, tape: Any, inputs: dict[str, Any], attrs: dict[str, Any], t: Tensor) -> None:
    """Record the checked call that made ``t`` from ``inputs`` (a dict of its own) on ``tape`` when any of
    them is watched, as run_kernel does."""
    token = tape.token
    for u in inputs.values():
        mark = u._tape
        if mark is token or (mark is not None and id(u) in tape.watched_ids):  # tape.is_watching(u)
            t._tape = token
            overrides = state.overrides
            grad = None if overrides is None else overrides.get(entry.name)
            tape.records.append(new_record(Record, (entry.name, inputs, attrs, (t,), grad)))
            return


def several_outputs(entry: Entry, inputs: dict[str, Any], attrs: dict[str, Any], out: Any) -> list[Tensor]:
    """The outputs of a checked call whose kernel returned several (not what its first call gave), as run_kernel
    gives them."""
    tape = state.tape
    watched = tape is not None and any(tape.is_watching(u) for u in inputs.values())
    return _wrap_several(entry.name, inputs, attrs, out, entry.backend, tape if watched else None)


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


def _failure_message(
    name: str, backend: Backend, inputs: Mapping[str, Any], attrs: dict[str, Any], exc: Exception
) -> str:
    parts = []
    for key, t in inputs.items():
        if isinstance(t, list | tuple):
            parts.append(f"{key}=[{', '.join(describe(u) for u in t)}]")
        else:
            parts.append(f"{key}={describe(t)}")
    fn = engine.tables.get(backend.name, {}).get(name)
    if isinstance(fn, ObservedKernel):  # while observed (tp.profile, tp.debug), the table holds the kernel wrapped
        fn = fn.fn
    where = repr(backend.name)
    if isinstance(fn, FallbackKernel):
        where += f" (run on its fallback backend {fn.target.name!r})"
    return (
        f"kernel {name!r} on backend {where} failed for inputs {', '.join(parts) or '(none)'} "
        f"and attrs {attrs!r}: {type(exc).__name__}: {exc}"
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
