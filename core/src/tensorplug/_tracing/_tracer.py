"""The tracer of ``tp.function``: records one trace's kernel calls, then ``_pipeline.build`` makes its :class:`Program`.

See :mod:`tensorplug._tracing._function` for the registers a trace names and what makes a trace not replayable.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._errors import KernelError
from tensorplug._runtime._observe import KernelCall
from tensorplug._runtime._program import Assign, HostInput, Step, TensorSpec
from tensorplug._runtime._tensor import Tensor, describe, wrap_storage
from tensorplug._runtime._variable import Variable

__all__ = ["Tracer"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tensorplug/


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
        self.specs: list[TensorSpec] = []
        self.keep: list[Any] = []  # every object seen, so that their ids stay theirs during the trace
        self.views: dict[int, Any] = {}  # id(variable) -> the storage this thread sees for it (Variable._data)
        self.pending: dict[int, Variable] = {}  # id(stand-in) -> its Variable, until the trace first reads it
        self.arguments: list[int] = []
        self.originals: dict[int, Any] = {}  # id(storage) -> storage, of each argument the trace copied
        self.captured: list[Any] = []  # those storages, met again as constants: the function captures them too
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
            self.specs.append(TensorSpec(str(backend.dtype_of(raw)), tuple(int(d) for d in backend.shape_of(raw))))
        except Exception:
            self.specs.append(TensorSpec(None, None))
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
        if id(raw) in self.originals and not any(r is raw for r in self.captured):
            self.captured.append(raw)
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
        self.originals[id(t._data)] = t._data
        return copy

    def argument_itself(self, t: Tensor) -> Tensor:
        """``t`` itself as an argument of the trace: a tensor the function also captures, which must be one tensor
        with the argument (its gradients are one); where its storage is some other argument's too, a copy."""
        if id(t._data) in self.register_of:
            return self.argument(t)
        self.arguments.append(self._register(t._data, "argument"))
        return t

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
