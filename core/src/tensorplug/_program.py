"""The program of a ``tp.function`` trace, as plain data: what a replay runs, and what a backend may lower.

See :mod:`tensorplug._function` for how a trace makes it and what its registers are.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tensorplug._errors import KernelError

if TYPE_CHECKING:
    from tensorplug._backend import Backend
    from tensorplug._variable import Variable

__all__ = ["Assign", "HostInput", "Program", "Step"]


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
