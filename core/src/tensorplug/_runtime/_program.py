"""The program of a ``tp.function`` trace, as plain data, and the contract a backend lowers it by.

A :class:`Program` is what a replay runs: registers (ints) holding raw storage, and :class:`Step`\\ s
(kernel calls) and :class:`Assign`\\ s between them. Each register's dtype and shape is a
:class:`TensorSpec`. A backend makes replays faster in one of two ways (see ``docs/authoring.md``):

- per step, through ``Backend.lower_step(program, index)``: a :class:`StepLowering` (a direct library
  call for the step, what the step may share with its inputs, whether it is pure) or a
  :class:`Constant`; the core's passes fold, free and reuse buffers, and generate the replay;
- for the whole program, through ``Backend.compile(program)``: a :data:`Replay` of its own.

Every replay has one calling convention, ``replay(arguments, variables, host) -> (outputs, updates)``:
three lists of raw storage in, two tuples of raw storage out, nothing else touched.
:meth:`Program.bind` maps the three lists to the registers they fill.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from tensorplug import kernel_names as K
from tensorplug._runtime._errors import KernelError

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend

__all__ = ["Assign", "Constant", "HostInput", "Program", "Replay", "Step", "StepLowering", "TensorSpec"]

Replay = Callable[[Sequence[Any], Sequence[Any], Sequence[Any]], "tuple[tuple[Any, ...], tuple[Any, ...]]"]
"""``replay(arguments, variables, host) -> (outputs, updates)``, the calling convention of every replay.

``arguments``: the raw storage of the tensor arguments, in the order of ``Program.arguments``;
``variables``: what each Variable of ``Program.variables`` holds when the call starts, in that order;
``host``: the per-call host values, the registers of ``Program.host`` entries in order (flattened).
It returns the raw storage of ``Program.outputs`` and of ``Program.updates``' registers, in order; the
core then gives each updated Variable its new storage (so a replay that raises changes no Variable). A
replay never writes into storage it was given, nor into constants: see :class:`StepLowering`."""

_RANDOM = frozenset(K.RANDOM)


class TensorSpec(NamedTuple):
    """A register's dtype and shape, as the trace saw them: ``TensorSpec("float32", (2, 3))``.

    ``str()`` gives the form messages use, ``float32[2, 3]``. A register whose storage the backend could
    not describe (a kernel returned something else) has dtype and shape None.
    """

    dtype: str | None
    shape: tuple[int, ...] | None

    @property
    def size(self) -> int:
        """The element count (0 when the shape is unknown)."""
        return math.prod(self.shape) if self.shape is not None else 0

    def __str__(self) -> str:
        if self.dtype is None or self.shape is None:
            return "(unknown)"
        return f"{self.dtype}[{', '.join(str(d) for d in self.shape)}]"


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

    @property
    def random(self) -> bool:
        """Whether the step draws random values at each call: a random kernel with ``seed=None``, which draws
        from the backend's own generator (a seeded one gives the same values at every call, as eagerly)."""
        return self.kernel in _RANDOM and self.attrs.get("seed") is None

    def input_values(self, registers: Mapping[int, Any]) -> dict[str, Any]:
        """The step's inputs as its kernel takes them, ``{name: raw}`` (a list for a list input), read from
        ``registers`` (``{register: raw}``, as :meth:`Program.bind` starts it)."""
        return {name: [registers[j] for j in r] if isinstance(r, tuple) else registers[r] for name, r in self.inputs}

    @property
    def input_registers(self) -> tuple[int, ...]:
        """Every register the step reads, list inputs flattened, in input order."""
        regs: list[int] = []
        for _, r in self.inputs:
            regs.extend(r if isinstance(r, tuple) else (r,))
        return tuple(regs)


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
class StepLowering:
    """How a backend runs one step of a program (what ``Backend.lower_step`` returns).

    ``call(*inputs, *args, **kwargs)`` computes the step from its inputs' raw storage, positionally in
    ``Step.inputs`` order (a list for a list input), then ``args`` and ``kwargs`` (what the step's attrs
    become: ``StepLowering(np.add.reduce, kwargs={"axis": (0,)})``), returning what the kernel returns (a
    tuple for a sequence step). It must give the kernel's values (bit for bit where the same library calls
    run). None keeps the kernel call, which the other fields still describe.

    The rest tells the core's passes what they may do:

    - ``pure``: the result depends on the inputs and attrs only (no random draw, no host state), so a step
      whose inputs are all constants is computed once, when lowering;
    - ``fresh``: ``call`` returns new storage, never an input nor a view of one;
    - ``reads_only``: the step keeps no reference to its inputs (no view, no input returned as it is);
    - ``into(out, *inputs, *args, **kwargs)``: computes the step into ``out``, dead storage the replay made
      itself that has the output's dtype and shape, and returns the result (``out``, or fresh storage where it
      cannot write into ``out``). The core passes ``out`` only when it is the output of a ``fresh`` step, read by
      ``reads_only`` steps alone, neither returned nor assigned, and this step is its last use.
    """

    call: Callable[..., Any] | None = None
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    pure: bool = False
    fresh: bool = False
    reads_only: bool = False
    into: Callable[..., Any] | None = None


@dataclass(frozen=True, eq=False)
class Constant:
    """What ``Backend.lower_step`` returns for a one-output step whose value is the same at every call
    (``OnesLike`` of a shape the trace fixes): ``value`` is used as the step's output, never written into."""

    value: Any


@dataclass(frozen=True, eq=False)
class Program:
    """The flat program of one trace: what a replay runs, as plain data (a backend may lower it).

    Registers are ints. ``arguments[i]`` is the register of the i-th tensor argument (nested arguments
    flattened in order; Variables passed as arguments are read as variables); ``reads`` are
    ``(variable index, register)`` pairs read from ``variables`` at the start; ``constants`` are
    ``(register, raw)`` pairs; ``host`` runs first; then ``steps``; ``outputs`` are the registers of the
    tensors ``f`` returned, in order; ``updates`` are ``(variable index, register)`` pairs, the value each
    assigned Variable holds after the call (its last ``Assign``), in order of first assignment. ``specs``
    gives each register's :class:`TensorSpec` and ``kinds`` says where its value comes from (argument,
    variable, constant, host, step). ``guards`` are checked before a replay: one that returns False means
    host state the trace depends on changed (an optimizer's ``use_nesterov``, say), and the call traces
    again.
    """

    name: str
    backend: Backend
    arguments: tuple[int, ...]
    variables: tuple[weakref.ref[Any], ...]  # weak references to the Variables (typed loosely: Variable's module
    # names this one's classes through the thread state)
    variable_names: tuple[str, ...]
    reads: tuple[tuple[int, int], ...]
    constants: tuple[tuple[int, Any], ...]
    host: tuple[HostInput, ...]
    steps: tuple[Step | Assign, ...]
    outputs: tuple[int, ...]
    specs: tuple[TensorSpec, ...]
    kinds: tuple[str, ...]
    guards: tuple[Callable[[], bool], ...] = ()
    updates: tuple[tuple[int, int], ...] = ()

    @property
    def kernel_steps(self) -> list[Step]:
        """The kernel calls, in order (the assignments left out)."""
        return [s for s in self.steps if isinstance(s, Step)]

    @property
    def host_registers(self) -> tuple[int, ...]:
        """The registers the ``host`` list of a replay fills, in order."""
        return tuple(reg for entry in self.host for reg in entry.registers)

    def chain_inputs(self, chain: Sequence[int]) -> tuple[int, ...]:
        """The registers a fused chain of steps (see ``Backend.fuse``) takes: every register its steps read that
        none of them makes, in the order the steps read them, each once."""
        made: set[int] = set()
        inputs: dict[int, None] = {}
        for index in chain:
            step = self.steps[index]
            assert isinstance(step, Step)
            for reg in step.input_registers:
                if reg not in made:
                    inputs.setdefault(reg)
            made.update(step.outputs)
        return tuple(inputs)

    def bind(self, arguments: Sequence[Any], variables: Sequence[Any], host: Sequence[Any]) -> dict[int, Any]:
        """The registers a replay starts from, ``{register: raw}``: the constants, then the three lists of the
        calling convention (see :data:`Replay`) in their registers."""
        regs: dict[int, Any] = dict(self.constants)
        for reg, raw in zip(self.arguments, arguments, strict=True):
            regs[reg] = raw
        for index, reg in self.reads:
            regs[reg] = variables[index]
        for reg, raw in zip(self.host_registers, host, strict=True):
            regs[reg] = raw
        return regs

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
            specs = ", ".join(str(self.specs[r]) for r in step.outputs)
            lines.append(f"  {outs} = {step.kernel}({ins}){attrs} -> {specs}{phase}")
        lines.append(f"  return {', '.join(f'r{r}' for r in self.outputs) or '(no tensors)'}")
        return "\n".join(lines)


def _register_text(r: int | tuple[int, ...]) -> str:
    if isinstance(r, tuple):
        return "[" + ", ".join(f"r{i}" for i in r) + "]"
    return f"r{r}"
