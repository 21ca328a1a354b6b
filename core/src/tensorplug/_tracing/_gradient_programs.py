"""Gradient programs: the core's own gradients, traced once per signature and replayed on raw storage.

Eager backprop calls a kernel's gradient for each record of the tape: a few ops, each converting, promoting,
checking broadcasts and dispatching around a kernel call that costs less than all of that (a float32 scalar's
``Tanh`` gradient spends ~4 µs in the op layer around ~0.3 µs of arithmetic). A backward pass is a function of
its signature alone: each record's gradient spec and attrs, which tensor each of its inputs is, and every
tensor's shape and dtype. So the second time a tape's signature comes, its whole backward pass is walked as
written under the tracer of ``tp.function`` (on stand-ins of every tensor), and from then on replayed from that
program through the backend's lowering: its direct calls (``np.multiply(dy, y)``), bit for bit what the ops
compute (``replay_backward``; with no ``dy`` given, the program makes the seed, ones like ``y``, itself). A tape
that one program cannot serve is walked record by record, and each record of the core's own gradients is
replayed from a program of its own, keyed by its upstream gradient, inputs and saved values, and checked once
against its inputs' shapes and dtypes (``replay_gradient``).

What runs as written instead, every time: gradients whose spec does not declare ``replay=True`` (the core's and
the gradients plugins declare do, unless they say otherwise; ``tp.register_gradient``'s, gradient sets registered
at runtime and override scopes' only when registered with ``replay=True``; ``custom_grad``'s never: their Python
may do more than call ops),
records with list inputs or several outputs, lazy backends, a backprop that a scope records (higher order),
that tp.profile, debug mode or a trace observe (they see every kernel), a gradient whose trace failed (it
read a value to Python) or whose results do not fit its inputs (the ops then raise the error), and a replay
that raises (the ops then run again, raising what they raise). A registry change forgets every program, and a
program traced while one happened is not kept. Attrs are keyed as ``tp.function`` keys Python values (``0.0`` and
``-0.0`` are two signatures).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from tensorplug._autodiff._backward import _backprop, call_gradient, saved_values
from tensorplug._runtime._backend import Backend
from tensorplug._runtime._dtypes import FLOAT_DTYPES
from tensorplug._runtime._engine import engine
from tensorplug._runtime._observe import observing
from tensorplug._runtime._program import Program
from tensorplug._runtime._registry import GradientSpec, gradient_registry, kernel_registry
from tensorplug._runtime._state import Record, state
from tensorplug._runtime._tensor import Tensor, wrap_storage
from tensorplug._tracing._pipeline import GRADIENT, build, lower
from tensorplug._tracing._signature import attrs_key
from tensorplug._tracing._tracer import Tracer
from tensorplug.ops import ones_like

__all__ = ["BackwardProgram", "GradientProgram", "clear", "replay_backward", "replay_gradient"]

WHOLE_PASSES = True
"""Whether a tape's whole backward pass is replayed from one program where it can be (the traced conformance run
turns it off for a second round, to check the programs of single gradients on every case too)."""

MAX_PROGRAMS = 4096
"""Signatures kept (and signatures seen once, waiting for a second sighting); past it, all are forgotten."""


class _Program:
    """A traced program: its replay, and for each gradient it gives (each input of a record, each argument of a
    backward pass) the output that is that gradient (-1: none), with the outputs' dtypes."""

    __slots__ = ("dtypes", "program", "replay", "slots")

    def __init__(
        self, program: Program, replay: Callable[..., Any], slots: tuple[int, ...], dtypes: tuple[str, ...]
    ) -> None:
        self.program = program
        self.replay = replay
        self.slots = slots
        self.dtypes = dtypes

    def run(self, arguments: list[Any], backend: Backend) -> list[Tensor | None] | None:
        """The gradients from a replay on ``arguments`` (raw storage); None when the replay raised (what ran
        as written raises it again, as the ops do)."""
        try:
            outputs, _ = self.replay(arguments, (), ())
        except Exception:
            return None
        results: list[Tensor | None] = []
        for slot in self.slots:
            if slot < 0:
                results.append(None)
                continue
            results.append(wrap_storage(outputs[slot], backend, self.dtypes[slot]))
        return results


class GradientProgram(_Program):
    """A traced gradient of one record, for the spec it was traced from."""

    __slots__ = ("spec",)

    def __init__(
        self,
        spec: GradientSpec,
        program: Program,
        replay: Callable[..., Any],
        slots: tuple[int, ...],
        dtypes: tuple[str, ...],
    ) -> None:
        super().__init__(program, replay, slots, dtypes)
        self.spec = spec


class BackwardProgram(_Program):
    """A traced backward pass of a tape."""

    __slots__ = ()


Traced = tuple[object, "list[Tensor | None] | None"]
"""What a trace gives: the program (or ``_AS_WRITTEN``), and the gradients it computed (None: none, run as written)."""

_AS_WRITTEN = object()
"""The cache's answer for a signature whose gradient runs as written."""

_programs: dict[tuple[Any, ...], object] = {}  # a program, or _AS_WRITTEN
_seen: set[tuple[Any, ...]] = set()
_generation = 0
"""Bumped by every registry change: a program traced while it changed is not kept (another thread registered a
kernel or a gradient while this one traced, so the program may call the one that was replaced)."""
_lock = threading.Lock()  # a program is stored, or forgotten, with the generation it was traced under


_UNKNOWN: Any = object()
_replayable: dict[str, GradientSpec | None] = {}
"""Each kernel name's registered gradient when a backward pass may replay it (``replay=True``, a gradient to
call), else None; filled as backward passes ask, forgotten with the programs."""


def _replayable_spec(name: str) -> GradientSpec | None:
    """The registered gradient of kernel ``name`` when a backward pass may replay it, else None (kept when the
    registries did not change meanwhile)."""
    generation = _generation
    spec = gradient_registry.get(name)
    if spec is not None and (not spec.replay or spec.grad is None):
        spec = None
    with _lock:
        if generation == _generation:
            _replayable[name] = spec
    return spec


def clear(key: Any = None) -> None:
    """Forget every gradient program and every registry lookup kept (a kernel or a gradient changed: what they call
    may have too)."""
    global _generation
    with _lock:
        _generation += 1
        _programs.clear()
        _seen.clear()
        _replayable.clear()


kernel_registry.on_change(clear)
gradient_registry.on_change(clear)


def _sighted(signature: tuple[Any, ...], trace: Callable[[], Traced]) -> list[Tensor | None] | None:
    """A signature with no program yet: seen once, it runs as written (None; traces are for what repeats); seen
    twice, ``trace()`` makes its program, kept, and this gives what the trace computed."""
    if signature not in _seen:
        if len(_seen) >= MAX_PROGRAMS:
            _seen.clear()
        _seen.add(signature)
        return None
    generation = _generation  # the registries' engine tables were reset before it was bumped (listened first)
    entry, traced = trace()
    with _lock:
        if generation == _generation:  # else the trace may have called a kernel or gradient since replaced
            if len(_programs) >= MAX_PROGRAMS:
                _programs.clear()
            _programs[signature] = entry
    return traced


def replay_gradient(record: Record, dy: Tensor, reachable: set[int]) -> list[Tensor | None] | None:
    """The gradient of each of the record's inputs from its program (traced at the second sighting of its
    signature), or None when it is to be called as written: see the module doc."""
    spec = record.grad
    if spec is None:
        spec = gradient_registry.get(record.kernel_name)
        if spec is None:
            return None
    if not spec.replay or spec.grad is None:
        return None
    backend = dy._backend
    if backend is not engine.active or backend.lazy:
        return None  # a gradient's ops run on the active backend; lazy graphs persist where the ops decide
    attrs = attrs_key(record.attrs)
    if attrs is None:
        return None
    key: list[Any] = [id(spec), backend, attrs, dy._data.shape, dy.dtype]
    inputs = record.inputs
    needs = []
    for value in inputs.values():
        if type(value) is list or type(value) is tuple or value._backend is not backend:
            return None
        dtype = value.dtype
        needed = id(value) in reachable and dtype in FLOAT_DTYPES
        needs.append(needed)
        key += (value._data.shape, dtype, needed)
    for index in spec.outputs_to_save:
        output = record.outputs[index]
        key += (output._data.shape, output.dtype)
    signature = tuple(key)
    entry = _programs.get(signature)
    if entry is None:
        return _sighted(signature, lambda: _trace(record, spec, dy, needs))
    if not isinstance(entry, GradientProgram) or entry.spec is not spec:
        return None
    return entry.run([dy._data, *[t._data for t in saved_values(record, spec)]], backend)


def _trace(record: Record, spec: GradientSpec, dy: Tensor, needs: list[bool]) -> Traced:
    """Trace ``spec``'s gradient of ``record`` into a program (or say it runs as written), with the gradients the
    trace computed (their values are the ops', as they ran)."""
    backend = dy._backend
    tracer = Tracer(f"gradient of {record.kernel_name}", backend)
    inputs = record.inputs
    saved = saved_values(record, spec)
    slots: list[int] = []
    leaves: list[Tensor] = []
    state.tracer = tracer
    try:
        with observing(tracer):
            upstream = tracer.argument(dy)
            written = call_gradient(record, spec, upstream, tuple(tracer.argument(t) for t in saved))
            for value, g, needed in zip(inputs.values(), written, needs, strict=True):
                if needed and g is not None and callable(g) and not isinstance(g, Tensor):
                    g = g()
                if not needed or g is None:
                    slots.append(-1)
                    continue
                if not isinstance(g, Tensor) or g._backend is not backend:
                    return _AS_WRITTEN, None
                if g._data.shape != value._data.shape or g.dtype != value.dtype:
                    return _AS_WRITTEN, None  # run as written, the backward pass says what is wrong
                slots.append(len(leaves))
                leaves.append(g)
            outputs = [tracer._input(g._data) for g in leaves]
    except Exception:
        return _AS_WRITTEN, None  # run as written, the error is raised where the gradient runs
    finally:
        state.tracer = None
    gradients: list[Tensor | None] = [None if slot < 0 else _untraced(leaves[slot]) for slot in slots]
    built = _built(tracer, leaves, outputs)
    if built is None:
        return _AS_WRITTEN, gradients
    return GradientProgram(spec, *built, tuple(slots), tuple(g.dtype for g in leaves)), gradients


def _built(tracer: Tracer, leaves: list[Tensor], outputs: list[int]) -> tuple[Program, Callable[..., Any]] | None:
    """The program of a finished trace of gradients ``leaves`` (registers ``outputs``) and its replay; None when
    it is not one to replay: the trace failed or gave no gradient, or the program updates variables, reads host
    values or has guards, or its lowering failed or would return shared storage."""
    if tracer.failure is not None or not leaves:
        return None
    program = build(tracer, outputs)
    if program.updates or program.host or program.guards:
        return None
    replay = lower(program, GRADIENT).replay
    return None if replay is None else (program, replay)


def _untraced(t: Tensor) -> Tensor:
    """A gradient the trace computed, as the backward pass hands it on: a tensor on no tape."""
    return wrap_storage(t._data, t._backend, t.dtype)


# -- the whole backward pass of a tape ---------------------------------------------------------------------------


def replay_backward(
    records: list[Record], xs: Sequence[Tensor], y: Tensor, dy: Tensor | None
) -> list[Tensor | None] | None:
    """The gradients of ``y`` with respect to each of ``xs`` from one program for the whole backward pass of a
    tape that watched ``xs`` only (traced at the second sighting of its signature: each record's gradient spec
    and attrs, which tensor each input is, every tensor's shape and dtype), for the upstream gradient ``dy``
    (None: ones like ``y``, made by the program from ``y``'s storage, its first argument then); None when it is
    to be walked record by record (a record whose gradient is not the core's own, or with list inputs or several
    outputs)."""
    first = y if dy is None else dy  # argument 0: the seed, or what the program makes it from
    backend = first._backend
    if backend is not engine.active or backend.lazy or not WHOLE_PASSES:
        return None
    tensors: list[Tensor] = [first, *xs]
    register = {id(t): i for i, t in enumerate(tensors)}
    key: list[Any] = [backend, dy is None, first._data.shape, first.dtype]
    if len(register) != len(tensors):
        return None  # an argument twice, or as the seed: the walk tells them apart by identity
    if dy is None:
        del register[id(y)]  # y is the output of a record, registered there
    for x in xs:
        if x._backend is not backend:
            return None
        key += (x._data.shape, x.dtype)
    replayable = _replayable
    for name, inputs, attrs, outputs, spec in records:  # a Record's fields, unpacked: one step per record
        if spec is None:
            spec = replayable.get(name, _UNKNOWN)
            if spec is _UNKNOWN:
                spec = _replayable_spec(name)
            if spec is None:
                return None
        elif not spec.replay or spec.grad is None:
            return None
        if type(outputs) is not tuple:
            return None
        if attrs:
            keyed = attrs_key(attrs)
            if keyed is None:
                return None
            key += (id(spec), keyed)
        else:
            key += (id(spec), ())
        for value in inputs.values():
            reg = register.get(id(value))
            if reg is None:
                if type(value) is list or type(value) is tuple or value._backend is not backend:
                    return None
                reg = register[id(value)] = len(tensors)
                tensors.append(value)
                key += (reg, value._data.shape, value._dtype or value.dtype)  # read, not made by a record: its spec
            else:
                key.append(reg)
        out = outputs[0]
        register[id(out)] = len(tensors)
        tensors.append(out)
        key += (out._data.shape, out._dtype or out.dtype)
    y_register = register.get(id(y))
    if y_register is None:
        return None
    key.append(y_register)
    signature = tuple(key)
    entry = _programs.get(signature)
    if entry is None:
        ones = dy is None
        return _sighted(signature, lambda: _trace_backward(records, tensors, register, len(xs), y_register, ones))
    if not isinstance(entry, BackwardProgram):
        return None
    return entry.run([t._data for t in tensors], backend)  # None: walked record by record, raising what it raises


def _trace_backward(
    records: list[Record], tensors: list[Tensor], register: dict[int, int], count: int, y_register: int, ones: bool
) -> Traced:
    """Trace the backward pass of ``records`` (``tensors``: the seed, or with ``ones`` what the seed is made of,
    ones like it; the ``count`` arguments; then every other tensor the records read or make) walked record by
    record, as written, on stand-ins of every tensor."""
    dy = tensors[0]
    backend = dy._backend
    tracer = Tracer("backward pass", backend)
    state.tracer = tracer
    try:
        with observing(tracer):  # so the walk calls every gradient as written, and the tracer sees each kernel
            copies = [tracer.argument(t) for t in tensors]
            stand_ins = [
                Record(
                    record.kernel_name,
                    {name: copies[register[id(value)]] for name, value in record.inputs.items()},
                    record.attrs,
                    (copies[register[id(record.outputs[0])]],),
                    record.grad,
                )
                for record in records
            ]
            xs = copies[1 : count + 1]
            seed = ones_like(copies[0]) if ones else copies[0]
            written = _backprop(stand_ins, xs, copies[y_register], seed, own_tape=True)
            leaves = [g for g in written if g is not None]
            outputs = [tracer._input(g._data) for g in leaves]
    except Exception:
        return _AS_WRITTEN, None  # walked record by record, raising what it raises
    finally:
        state.tracer = None
    slots, position = [], 0
    for g in written:
        slots.append(-1 if g is None else position)
        position += g is not None
    gradients: list[Tensor | None] = [None if g is None else _untraced(g) for g in written]
    built = _built(tracer, leaves, outputs)
    if built is None:
        return _AS_WRITTEN, gradients
    return BackwardProgram(*built, tuple(slots), tuple(g.dtype for g in leaves)), gradients
