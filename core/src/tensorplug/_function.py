"""``tp.function``: trace a function once per input signature, then replay its flat program of kernel calls.

The first call with a new signature runs ``f`` eagerly while a :class:`Tracer` (a kernel observer of this
thread, see :mod:`tensorplug._observe`) records every kernel call it makes, forward and backward, as a
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
import linecache
import os
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, ParamSpec, TypeVar

from tensorplug._backend import Backend
from tensorplug._engine import engine
from tensorplug._errors import (
    FunctionWarning,
    InvalidArgumentError,
    KernelError,
    TensorplugError,
    warn,
)
from tensorplug._lazy import persist_lazy
from tensorplug._observe import KernelCall, everywhere, observing
from tensorplug._registry import gradient_registry, kernel_registry
from tensorplug._signature import aliases, flatten, rebuild, signature, unflatten
from tensorplug._state import state
from tensorplug._tensor import Tensor, Variable, describe, spec_text, tracing_variables, wrap_storage

__all__ = ["Assign", "Function", "Program", "Step", "Tracer", "function", "generate_replay"]

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_MAX_TRACES = 8
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


# -- the program: plain data ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Step:
    """One kernel call: ``outputs = function(inputs, attrs, backend)``, inputs and outputs named by register.

    ``inputs`` maps each input name to a register, or to a tuple of registers for a list input;
    ``sequence`` says whether the kernel returns a list or tuple of outputs (else one raw output);
    ``free`` lists the registers whose last use this step is (released right after it); ``error``, when
    the op that made the call turns the kernel's failure into an error of its own (indexing turns an index
    out of range into an IndexingError), does the same for a replay: ``error(kernel_error)`` is raised.
    """

    kernel: str
    backend: str
    function: Any
    inputs: tuple[tuple[str, int | tuple[int, ...]], ...]
    attrs: dict[str, Any]
    outputs: tuple[int, ...]
    sequence: bool
    gradient_of: str | None
    free: tuple[int, ...] = ()
    error: Callable[[KernelError], Exception] | None = None


@dataclass(frozen=True, eq=False)
class Assign:
    """``variables[variable]`` takes the value of ``register`` (a ``Variable.assign`` made during the trace)."""

    variable: int
    register: int
    free: tuple[int, ...] = ()


@dataclass(frozen=True, eq=False)
class HostInput:
    """Run ``compute()`` at the start of each replay, in trace order; with a ``dtype``, it returns Python
    numbers that become the storage of ``registers`` (a callback that returns nothing has no registers).
    ``undo()``, if given, takes back what ``compute()`` did to host state when the replay fails."""

    compute: Callable[[], Any]
    dtype: str | None
    registers: tuple[int, ...]
    undo: Callable[[], Any] | None = None
    last: list[Any] = field(default_factory=lambda: [None])  # [(values, storage)] of the latest call: reused


@dataclass(frozen=True, eq=False)
class Program:
    """The flat program of one trace: what a replay runs, as plain data (a backend may lower it).

    Registers are ints. ``arguments[i]`` is the register of the i-th tensor argument (nested arguments
    flattened in order; Variables passed as arguments are read as variables); ``reads`` are
    ``(variable index, register)`` pairs read from ``variables`` at the start; ``constants`` are
    ``(register, raw)`` pairs; ``host`` runs first; then ``steps``; ``outputs`` are the registers of the
    tensors ``f`` returned, in order. ``specs`` describes each register (``float32[2, 3]``) and ``kinds``
    says where its value comes from (argument, variable, constant, host, step). ``guards`` are checked
    before a replay: one that returns False means host state the trace depends on changed (an optimizer's
    ``use_nesterov``, say), and the call traces again.
    """

    name: str
    backend: Backend
    arguments: tuple[int, ...]
    variables: tuple[weakref.ref[Variable], ...]
    variable_names: tuple[str, ...]
    reads: tuple[tuple[int, int], ...]
    constants: tuple[tuple[int, Any], ...]
    host: tuple[HostInput, ...]
    steps: tuple[Step | Assign, ...]
    outputs: tuple[int, ...]
    specs: tuple[str, ...]
    kinds: tuple[str, ...]
    guards: tuple[Callable[[], bool], ...] = ()

    @property
    def kernel_steps(self) -> list[Step]:
        """The kernel calls, in order (the assignments left out)."""
        return [s for s in self.steps if isinstance(s, Step)]

    def __str__(self) -> str:
        lines = [
            f"tp.function program of {self.name!r} on backend {self.backend.name!r}: {len(self.arguments)} "
            f"tensor arguments, {len(self.reads)} variables read, {len(self.constants)} constants, "
            f"{len(self.kernel_steps)} kernel calls"
        ]
        for i, reg in enumerate(self.arguments):
            lines.append(f"  r{reg} = argument {i}: {self.specs[reg]}")
        for index, reg in self.reads:
            lines.append(f"  r{reg} = variable {self.variable_names[index]!r}: {self.specs[reg]}")
        for reg, _ in self.constants:
            lines.append(f"  r{reg} = constant {self.specs[reg]}")
        for entry in self.host:
            if entry.registers:
                names = ", ".join(f"r{r}" for r in entry.registers)
                lines.append(f"  {names} = host values {entry.dtype}, computed at each call")
            else:
                lines.append("  (a host callback runs at each call)")
        for step in self.steps:
            if isinstance(step, Assign):
                lines.append(f"  assign variable {self.variable_names[step.variable]!r} = r{step.register}")
                continue
            outs = ", ".join(f"r{r}" for r in step.outputs)
            ins = ", ".join(f"{name}={_register_text(r)}" for name, r in step.inputs)
            attrs = f" {step.attrs}" if step.attrs else ""
            phase = f"  [backward:{step.gradient_of}]" if step.gradient_of else ""
            specs = ", ".join(self.specs[r] for r in step.outputs)
            lines.append(f"  {outs} = {step.kernel}({ins}){attrs} -> {specs}{phase}")
        lines.append(f"  return {', '.join(f'r{r}' for r in self.outputs) or '(no tensors)'}")
        return "\n".join(lines)


def _register_text(r: int | tuple[int, ...]) -> str:
    if isinstance(r, tuple):
        return "[" + ", ".join(f"r{i}" for i in r) + "]"
    return f"r{r}"


# -- the tracer ----------------------------------------------------------------------------------------------


class Tracer:
    """Records the kernel calls of one trace (a kernel observer of the tracing thread).

    Code that keeps state on the host between calls tells it what a replay must redo: ``on_replay(fn, undo)``
    runs ``fn`` at the start of each replay (and ``undo`` if the replay fails), ``host_values(compute,
    values, dtype)`` makes per-call scalars (the optimizers use both for their step count and their
    hyper-parameters), ``guard(check)`` makes a replay trace again when ``check()`` turns False.
    """

    synchronize = False

    def __init__(self, name: str, backend: Backend) -> None:
        self.name = name
        self.backend = backend
        self.register_of: dict[int, int] = {}  # id(raw) -> register
        self.kinds: list[str] = []
        self.specs: list[str] = []
        self.keep: list[Any] = []  # every object seen, so that their ids stay theirs during the trace
        self.views: dict[int, Any] = {}  # id(variable) -> the storage this thread sees for it (Variable._data)
        self.pending: dict[int, Variable] = {}  # id(stand-in) -> its Variable, until the trace first reads it
        self.arguments: list[int] = []
        self.constants: list[tuple[int, Any]] = []
        self.variables: list[Variable] = []
        self.variable_index: dict[int, int] = {}
        self.reads: list[tuple[int, int]] = []
        self.host: list[HostInput] = []
        self.guards: list[Callable[[], bool]] = []
        self.steps: list[Step | Assign] = []
        self.error: Callable[[KernelError], Exception] | None = None  # see translate_errors
        self.failure: str | None = None

    # -- registers

    def _register(self, raw: Any, kind: str) -> int:
        reg = len(self.kinds)
        self.kinds.append(kind)
        backend = self.backend
        try:
            self.specs.append(spec_text(backend.dtype_of(raw), backend.shape_of(raw)))
        except Exception:
            self.specs.append(type(raw).__name__)
        self.register_of[id(raw)] = reg
        self.keep.append(raw)
        return reg

    def _input(self, raw: Any) -> int:
        reg = self.register_of.get(id(raw))
        if reg is not None:
            return reg
        variable = self.pending.pop(id(raw), None)
        if variable is not None:
            reg = self._register(raw, "variable")
            self.reads.append((self._variable(variable), reg))
            return reg
        reg = self._register(raw, "constant")
        self.constants.append((reg, raw))
        return reg

    def _variable(self, v: Variable) -> int:
        index = self.variable_index.get(id(v))
        if index is None:
            index = len(self.variables)
            self.variables.append(v)
            self.variable_index[id(v)] = index
        return index

    def argument(self, t: Tensor) -> Tensor:
        """A tensor with ``t``'s values over a fresh storage object: the trace's view of argument ``t``."""
        copy = wrap_storage(t._backend.alias(t._data), t._backend, t._dtype)
        self.arguments.append(self._register(copy._data, "argument"))
        return copy

    # -- what Variables report (Variable._data, assign) in the tracing thread

    def variable_storage(self, v: Variable) -> Any:
        """``v``'s storage as the tracing thread sees it: at the first read, a fresh storage object over ``v``'s
        values, which the trace reads as ``v`` when a kernel takes it (see the module doc); after an ``assign``
        in this thread, the value assigned. ``v`` itself and other threads are left alone."""
        view = self.views.get(id(v))
        if view is not None:
            return view
        raw = v._value
        if v._backend is not self.backend:  # another backend (or disposed): a kernel taking it moves it, and fails
            return raw
        view = self.backend.alias(raw)
        self.keep.extend((v, raw, view))
        self.views[id(v)] = view
        self.pending[id(view)] = v
        return view

    def assigned(self, v: Variable, raw: Any) -> None:
        """``v.assign`` gave ``v`` the storage ``raw`` in this thread: a replay assigns it too."""
        self.keep.append(v)
        self.views[id(v)] = raw  # the rest of the trace reads v as the value assigned (eagerly too)
        if self.failure is not None:
            return
        if v._backend is not self.backend:
            self.fail(f"variable {v.name!r} was assigned a value on backend {v._backend.name!r}")
            return
        self.steps.append(Assign(self._variable(v), self._input(raw)))

    def variable_changed(self, v: Variable) -> None:
        """``v``'s storage was replaced other than by ``assign`` (moved, disposed): no replay can redo that."""
        self.views.pop(id(v), None)
        self.fail(f"variable {v.name!r} was moved or disposed")

    # -- what the engine and tensors report

    def kernel_ran(self, call: KernelCall) -> None:
        if self.failure is not None:
            return
        if call.backend is not self.backend:
            self.fail(f"kernel {call.kernel!r} ran on backend {call.backend.name!r}, not {self.backend.name!r}")
            return
        inputs: list[tuple[str, int | tuple[int, ...]]] = []
        seen: set[int] = set()
        for name, raw in call.inputs.items():
            if type(name) is not str:  # the plain replay is generated source: only a str's repr goes into it
                self.fail(f"kernel {call.kernel!r} was given an input named {name!r}, not a str")
                return
            if type(raw) is list or type(raw) is tuple:
                regs = tuple(self._input(r) for r in raw)
                seen.update(id(r) for r in raw)
                inputs.append((name, regs))
            else:
                inputs.append((name, self._input(raw)))
                seen.add(id(raw))
        outputs = []
        for raw in call.outputs:
            if id(raw) in self.register_of and id(raw) not in seen:
                self.fail(
                    f"kernel {call.kernel!r} returned a storage object the trace has seen before and that is none "
                    f"of its inputs (a shared object, such as NumPy's True scalar), so its uses cannot be told apart"
                )
                return
            outputs.append(self._register(raw, "step"))
        attrs = dict(call.attrs)
        self.steps.append(
            Step(
                call.kernel,
                call.backend.name,
                call.function,
                tuple(inputs),
                attrs,
                tuple(outputs),
                call.sequence,
                call.gradient_of,
                error=self.error,
            )
        )

    def read_back(self, t: Tensor, why: str) -> None:
        """``t``'s value is leaving the tensor world (read to Python, exported, moved): fine for a constant."""
        if self.failure is not None:
            return
        raw = t._data
        reg = self.register_of.get(id(raw))
        if reg is None:
            if id(raw) not in self.pending:
                return  # a constant: the same at every call
            kind = "a variable"
        else:
            kind = {"argument": "an argument", "variable": "a variable", "host": "a per-call host value"}.get(
                self.kinds[reg], "computed by the function"
            )
            if self.kinds[reg] == "constant":
                return
        self.fail(f"{describe(t)} ({kind}): {why}{_user_location()}")

    def fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason

    # -- what ops and stateful host code tell the tracer

    def translate_errors(
        self, error: Callable[[KernelError], Exception] | None
    ) -> Callable[[KernelError], Exception] | None:
        """From now on, a replay whose recorded kernel call fails raises ``error(kernel_error)`` (None: the
        KernelError itself), as the op that makes the calls does eagerly; returns the previous setting, which
        the op puts back when it returns."""
        previous = self.error
        self.error = error
        return previous

    def on_replay(self, callback: Callable[[], Any], undo: Callable[[], Any] | None = None) -> None:
        """Run ``callback()`` at the start of every replay (in trace order): host state a call advances.
        ``undo()`` takes it back when the replay fails (so that a failed call leaves the state as it was)."""
        self.host.append(HostInput(callback, None, (), undo))

    def host_values(self, compute: Callable[[], Sequence[Any]], values: Sequence[Any], dtype: str) -> list[Tensor]:
        """``values`` as tensors of ``dtype`` that a replay makes again from ``compute()`` (same length)."""
        from tensorplug.ops import tensor

        tensors = [tensor(v, dtype) for v in values]
        registers = []
        for t in tensors:
            registers.append(self._register(t._data, "host"))
        self.host.append(HostInput(compute, dtype, tuple(registers)))
        return tensors

    def guard(self, check: Callable[[], bool]) -> None:
        """Before each replay, ``check()``: False means what the trace took from the host changed, so trace again."""
        self.guards.append(check)


def _user_location() -> str:
    """`` at file:line (`source`)``: the first frame outside tensorplug, for messages."""
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return ""
    filename, line = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, line).strip()
    return f" at {os.path.basename(filename)}:{line}" + (f" (`{source}`)" if source else "")


# -- building the program and its replay ---------------------------------------------------------------------


def _build(tracer: Tracer, output_registers: list[int]) -> Program:
    """The program of a finished trace: unused kernel calls dropped, each register released after its last use."""
    live = set(output_registers)
    kept: list[Step | Assign] = []
    for step in reversed(tracer.steps):
        if isinstance(step, Assign):
            kept.append(step)
            live.add(step.register)
        elif any(r in live for r in step.outputs):
            kept.append(step)
            for _, r in step.inputs:
                live.update(r if isinstance(r, tuple) else (r,))
    kept.reverse()
    last_use: dict[int, int] = {}
    for i, step in enumerate(kept):
        if isinstance(step, Assign):
            last_use[step.register] = i
        else:
            for _, r in step.inputs:
                for reg in r if isinstance(r, tuple) else (r,):
                    last_use[reg] = i
            for reg in step.outputs:
                last_use.setdefault(reg, i)  # an output nothing reads goes right away
    constants = {reg for reg, _ in tracer.constants if reg in live}
    keep_alive = set(output_registers) | constants
    frees: dict[int, list[int]] = {}
    for reg, i in last_use.items():
        if reg not in keep_alive:
            frees.setdefault(i, []).append(reg)
    steps: list[Step | Assign] = []
    for i, step in enumerate(kept):
        free = tuple(sorted(frees.get(i, ())))
        if isinstance(step, Assign):
            steps.append(Assign(step.variable, step.register, free))
        else:
            steps.append(
                Step(
                    step.kernel,
                    step.backend,
                    step.function,
                    step.inputs,
                    step.attrs,
                    step.outputs,
                    step.sequence,
                    step.gradient_of,
                    free,
                    step.error,
                )
            )
    used_variables = sorted(
        {i for i, reg in tracer.reads if reg in live} | {s.variable for s in kept if isinstance(s, Assign)}
    )
    renumber = {old: new for new, old in enumerate(used_variables)}
    steps = [Assign(renumber[s.variable], s.register, s.free) if isinstance(s, Assign) else s for s in steps]
    return Program(
        name=tracer.name,
        backend=tracer.backend,
        arguments=tuple(tracer.arguments),
        variables=tuple(weakref.ref(tracer.variables[i]) for i in used_variables),
        variable_names=tuple(tracer.variables[i].name for i in used_variables),
        reads=tuple((renumber[i], reg) for i, reg in tracer.reads if reg in live),
        constants=tuple((reg, raw) for reg, raw in tracer.constants if reg in live),
        host=tuple(tracer.host),
        steps=tuple(steps),
        outputs=tuple(output_registers),
        specs=tuple(tracer.specs),
        kinds=tuple(tracer.kinds),
        guards=tuple(tracer.guards),
    )


_codes = itertools.count()

LowerStep = Callable[[int, Step, Callable[[int], str], dict[str, Any]], "str | None"]
"""``lower_step(index, step, ref, namespace)``: a Python expression computing ``step``'s output (its tuple of
outputs for a sequence step) from the registers ``ref(register)`` names, or None for the kernel call; names
the expression uses go into ``namespace`` (see :func:`generate_replay`)."""

_line_steps: weakref.WeakKeyDictionary[types.CodeType, dict[int, int]] = weakref.WeakKeyDictionary()
"""The code of each generated replay -> {line: step index}, so that an error names the step that raised it."""


def generate_replay(
    program: Program, lower_step: LowerStep | None = None, *, label: str = "replay"
) -> Callable[[list[Any], list[Any], list[Any]], tuple[Any, ...]]:
    """The replay of ``program`` as generated Python, ``replay(A, V, H)`` (the arguments' storage, the
    Variables, the host values) returning the outputs' storage: what :meth:`Backend.lower` returns.

    Each kernel step is one line, ``outputs = k3({"a": r1, "b": r2}, t3, be)``, unless ``lower_step(index,
    step, ref, namespace)`` returns a Python expression to compute it instead (``"np.add(r1, r2)"``): ``ref(r)``
    names register ``r`` in the source, and ``namespace`` takes what the expression uses (``namespace["np"] =
    numpy``). Registers are deleted after their last use (``step.free``), as in the plain replay. An exception
    raised on a step's line becomes a KernelError naming that step's kernel, backend and input shapes.

    >>> import tensorplug as tp
    >>> f = tp.function(lambda x: -x)
    >>> program = f.program(tp.tensor([1.0]))
    >>> replay = tp.generate_replay(program, lambda i, step, ref, ns: f"(- {ref(step.inputs[0][1])})")
    >>> replay([tp.tensor([2.0]).raw], [], [])[0].tolist()
    [-2.0]
    """
    constants = {reg for reg, _ in program.constants}

    def ref(reg: int) -> str:
        return f"c{reg}" if reg in constants else f"r{reg}"

    def refs(r: int | tuple[int, ...]) -> str:
        return "[" + ", ".join(ref(i) for i in r) + "]" if isinstance(r, tuple) else ref(r)

    namespace: dict[str, Any] = {"be": program.backend}
    for reg, raw in program.constants:
        namespace[f"c{reg}"] = raw
    lines = ["def replay(A, V, H):"]
    for i, reg in enumerate(program.arguments):
        lines.append(f"    r{reg} = A[{i}]")
    for index, reg in program.reads:
        lines.append(f"    r{reg} = V[{index}]._value")
    position = 0
    for entry in program.host:
        for reg in entry.registers:
            lines.append(f"    r{reg} = H[{position}]")
            position += 1
    line_steps: dict[int, int] = {}
    for i, step in enumerate(program.steps):
        if isinstance(step, Assign):
            lines.append(f"    V[{step.variable}]._value = {ref(step.register)}")
        else:
            outs = ", ".join(f"r{r}" for r in step.outputs)
            if step.sequence:
                outs += "," if len(step.outputs) == 1 else ""
            expression = None if lower_step is None else lower_step(i, step, ref, namespace)
            if expression is None:
                namespace[f"k{i}"] = step.function
                namespace[f"t{i}"] = step.attrs
                inputs = ", ".join(f"{name!r}: {refs(r)}" for name, r in step.inputs)
                expression = f"k{i}({{{inputs}}}, t{i}, be)"
            lines.append(f"    {outs or '_'} = {expression}")
        line_steps[len(lines)] = i
        if step.free:
            lines.append(f"    del {', '.join(f'r{r}' for r in step.free)}")
    lines.append(f"    return ({''.join(ref(r) + ', ' for r in program.outputs)})")
    source = "\n".join(lines) + "\n"
    filename = f"<tp.function {program.name} {label} #{next(_codes)}>"
    code = compile(source, filename, "exec")
    exec(code, namespace)
    replay: Callable[[list[Any], list[Any], list[Any]], tuple[Any, ...]] = namespace.pop("replay")  # no cycle
    _line_steps[replay.__code__] = line_steps
    # Tracebacks show the source while the replay lives; it goes from linecache with the replay (its trace).
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(replay, linecache.cache.pop, filename, None).atexit = False
    return replay


def _failed_step(exc: BaseException) -> int | None:
    """The index of the step whose line of a generated replay raised ``exc`` (None if none did)."""
    tb = exc.__traceback__
    index = None
    while tb is not None:
        table = _line_steps.get(tb.tb_frame.f_code)
        if table is not None:
            index = table.get(tb.tb_lineno, index)
        tb = tb.tb_next
    return index


def _lower(program: Program) -> tuple[Callable[..., Any] | None, str | None]:
    """The backend's lowering of ``program`` (None: the plain replay), and why it failed if it raised."""
    try:
        lowered = program.backend.lower(program)
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if lowered is not None and not callable(lowered):
        return None, f"it returned a {type(lowered).__name__}, not a callable or None"
    return lowered, None


def _replay_observed(
    program: Program, arguments: list[Any], variables: list[Variable], host: list[Any]
) -> tuple[Any, ...]:
    """The replay that tp.profile and debug mode see: each step a KernelCall to this thread's observers."""
    observers = (*(state.observers or ()), *everywhere)
    synchronize = any(o.synchronize for o in observers)
    backend = program.backend
    regs: dict[int, Any] = dict(program.constants)
    for reg, raw in zip(program.arguments, arguments, strict=True):
        regs[reg] = raw
    for index, reg in program.reads:
        regs[reg] = variables[index]._value
    position = 0
    for entry in program.host:
        for reg in entry.registers:
            regs[reg] = host[position]
            position += 1
    for i, step in enumerate(program.steps):
        if isinstance(step, Assign):
            variables[step.variable]._value = regs[step.register]
        else:
            inputs = {name: [regs[j] for j in r] if isinstance(r, tuple) else regs[r] for name, r in step.inputs}
            if synchronize:
                backend.synchronize()
            start = time.perf_counter()
            try:
                out = step.function(inputs, step.attrs, backend)
            except TensorplugError:
                raise
            except Exception as exc:
                raise _step_error(program, i, exc) from exc
            if synchronize:
                backend.synchronize()
            seconds = time.perf_counter() - start
            outputs = tuple(out) if step.sequence else (out,)
            ran_on = getattr(step.function, "target", None)
            call = KernelCall(
                step.kernel,
                backend,
                inputs,
                step.attrs,
                outputs,
                seconds,
                step.gradient_of,
                ran_on,
                step.function,
                step.sequence,
            )
            for observer in observers:
                replaced = observer.kernel_ran(call)
                if replaced is not None:
                    call = call._replace(outputs=replaced)
                    outputs = replaced
            for reg, raw in zip(step.outputs, outputs, strict=True):
                regs[reg] = raw
        for reg in step.free:
            del regs[reg]
    return tuple(regs[r] for r in program.outputs)


def _assigned(program: Program) -> list[int]:
    """The indices of the variables the program assigns, each once, in order."""
    return list(dict.fromkeys(s.variable for s in program.steps if isinstance(s, Assign)))


def _persist_step(program: Program, variables: list[Variable], outputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """On a lazy backend: the replay's outputs and the variables it assigned, persisted as one graph (the step
    is computed once, and the next step's graph starts from its results)."""
    assigned = [variables[i] for i in _assigned(program)]
    raws = program.backend.persist([*outputs, *(v._data for v in assigned)])
    for v, raw in zip(assigned, raws[len(outputs) :], strict=True):
        v._value = raw
    return tuple(raws[: len(outputs)])


def _lowered_failure_message(program: Program, exc: BaseException) -> str:
    return (
        f"the replay of tp.function {program.name!r} lowered by backend {program.backend.name!r} failed: "
        f"{type(exc).__name__}: {exc} (tp.function(lower=False) runs the plain replay, whose errors name the kernel)"
    )


def _step_error(program: Program, index: int, exc: BaseException) -> Exception:
    """The error a replay raises when step ``index`` raised ``exc``: what the op that made the call raises."""
    error = KernelError(_failure_message(program, index, exc))
    step = program.steps[index]
    if isinstance(step, Step) and step.error is not None:
        return step.error(error)
    return error


def _failure_message(program: Program, index: int, exc: BaseException) -> str:
    step = program.steps[index]
    assert isinstance(step, Step)
    parts = ", ".join(
        f"{name}=[{', '.join(program.specs[j] for j in r)}]" if isinstance(r, tuple) else f"{name}={program.specs[r]}"
        for name, r in step.inputs
    )
    phase = f", in the gradient of {step.gradient_of!r}" if step.gradient_of else ""
    return (
        f"kernel {step.kernel!r} on backend {step.backend!r} failed for inputs {parts or '(none)'} and attrs "
        f"{step.attrs!r}: {type(exc).__name__}: {exc} (replaying tp.function {program.name!r}, kernel call "
        f"{sum(isinstance(s, Step) for s in program.steps[: index + 1])} of {len(program.kernel_steps)}{phase}; "
        "the same call runs eagerly if you call the function inside tp.no_grad() after f.clear_cache(), "
        "or without tp.function)"
    )


# -- the signature, and structures of tensors ----------------------------------------------------------------


_version = itertools.count()
_registry_version = next(_version)


def _registries_changed(key: Any) -> None:
    global _registry_version
    _registry_version = next(_version)  # every trace made before is stale: its kernels or gradients changed


kernel_registry.on_change(_registries_changed)
gradient_registry.on_change(_registries_changed)


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
        self._warned_lowering = False
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
        for name in sorted(kwargs):
            key.append(name)
            signature(fname, kwargs[name], key, leaves, f"argument {name!r}")
        n = len(leaves)
        if n > 2 or (n == 2 and leaves[0] is leaves[1]):
            pattern = aliases(leaves)  # the same tensor twice: one argument (its gradients are one)
            if pattern is not None:
                key.append(pattern)
        return tuple(key)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if state.tape is not None or state.tracer is not None:
            # Recorded by an outer gradient scope (so that gradients flow through f), or inside another trace
            # (which records f's kernels as its own): f runs as plain Python.
            return self.python_function(*args, **kwargs)
        backend = engine.active or engine.ensure_active()
        leaves: list[Tensor] = []
        key = self._key(backend, args, kwargs, leaves)
        entry = self._cache.get(key)
        if entry is None:
            return self._trace(key, backend, args, kwargs)
        entry.used = next(_uses)
        if entry.program is None:
            return self.python_function(*args, **kwargs)
        try:
            return self._replay(entry, leaves)  # type: ignore[no-any-return]
        except _Stale:
            with self._lock:
                if self._cache.get(key) is entry:
                    del self._cache[key]
            return self._trace(key, backend, args, kwargs)

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

    def _trace(self, key: tuple[Any, ...], backend: Backend, args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
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
                        copy = copies[id(t)] = tracer.argument(t)
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
            program = _build(tracer, outputs)
            replay, lowered = None, False
            if self.lower:
                replay, failure = _lower(program)
                lowered = replay is not None
                if failure is not None:
                    self._lowering_failed(program, failure)
            if replay is None:
                replay = generate_replay(program)
            dtypes = tuple(t.dtype for t in leaves)
            entry = _Trace(program, None, replay, lowered, structure, dtypes, _returned_variables(program, leaves))
            if backend.lazy:  # the optimizers inside f did not persist while tracing: the step boundary is here
                assigned = [program.variables[i]() for i in _assigned(program)]
                persist_lazy([*leaves, *(v for v in assigned if v is not None)])
        entry.used = next(_uses)
        self._store(key, entry)
        return result

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
            if len(self._cache) > self.max_traces:
                oldest = min(self._cache, key=lambda k: self._cache[k].used)
                del self._cache[oldest]
                warn_now = not self._warned_retracing
                self._warned_retracing = True
            else:
                warn_now = False
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
        backend = program.backend
        if program.guards:
            for guard in program.guards:
                if not guard():
                    raise _Stale
        variables = []
        saved = []  # what the variables hold before the call: a call that raises leaves them so
        for ref in program.variables:
            v = ref()
            if v is None or v._backend is not backend:
                raise _Stale
            variables.append(v)
            saved.append(v._value)
        ran = 0
        try:
            host: list[Any] = []
            if program.host:
                for h in program.host:
                    values = h.compute()
                    ran += 1
                    if h.dtype is not None:
                        host.extend(_host_storage(h, values))
            arguments = [t._data for t in leaves]
            if state.observers is not None or everywhere:
                outputs = _replay_observed(program, arguments, variables, host)
            else:
                try:
                    outputs = entry.replay(arguments, variables, host)  # type: ignore[misc]
                except TensorplugError:
                    raise
                except Exception as exc:
                    index = _failed_step(exc)
                    if index is None:
                        raise KernelError(_lowered_failure_message(program, exc)) from exc
                    raise _step_error(program, index, exc) from exc
            if backend.lazy:
                outputs = _persist_step(program, variables, outputs)
        except BaseException:
            _roll_back(program, variables, saved, ran)
            raise
        dtypes = entry.dtypes
        if entry.structure is None:
            if entry.returned:
                return variables[entry.returned[0][1]]
            return wrap_storage(outputs[0], backend, dtypes[0])
        tensors = [wrap_storage(raw, backend, dtype) for raw, dtype in zip(outputs, dtypes, strict=True)]
        for position, index in entry.returned:
            tensors[position] = variables[index]
        return unflatten(entry.structure, iter(tensors))


def _host_storage(h: HostInput, values: Sequence[Any]) -> list[Any]:
    """The storage of a replay's host values: those of the previous call when the values are the same (the
    hyper-parameters that rarely change), for values that convert alike (no zero, whose sign ``==`` ignores)."""
    last = h.last[0]
    if last is not None and last[0] == values and 0 not in values:
        return last[1]  # type: ignore[no-any-return]
    from tensorplug.ops import tensor

    raws = [tensor(value, h.dtype)._data for value in values]
    h.last[0] = (values, raws)
    return raws


def _roll_back(program: Program, variables: list[Variable], saved: list[Any], ran: int) -> None:
    """A replay failed: its variables take back the storage they had, and the host callbacks that ran are undone."""
    for v, raw in zip(variables, saved, strict=True):
        v._value = raw
    for h in reversed(program.host[:ran]):
        if h.undo is not None:
            h.undo()


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
    new signature (each tensor argument's shape, dtype, backend and device; other arguments by value; the
    active backend and gradient override scopes) runs ``fn`` eagerly and records every kernel it runs,
    forward and backward; later calls replay those kernels on raw storage. Variables are read at the start
    of each replay and ``assign`` is redone, so an optimizer step inside ``fn`` updates them at every call.
    Python side effects (print, making Variables or optimizer slots) happen at trace time only. See the
    README section "Tracing with tp.function" for what cannot be replayed (it then runs eagerly, with a
    ``tp.FunctionWarning``), and how gradient scopes, ``tp.profile`` and ``tp.debug`` behave. A backend may
    lower the program it traced into a faster replay of its own (:meth:`Backend.lower`); ``lower=False`` keeps
    the plain replay (each kernel called in turn).

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
