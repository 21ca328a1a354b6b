"""The lowering pipeline: the passes that turn a trace into a program and a program into its replay, in order.

Every traced program goes through here: ``tp.function``'s, eager backprop's gradient programs, ``tp.export``'s.
``build`` runs the build passes (``BUILD_PASSES``) on a finished trace and makes its :class:`Program`;
``lower`` makes the program's replay for one :class:`Purpose`: the backend's whole-program compiler when the
purpose allows it and the backend has one, else the plan passes (``PLAN_PASSES``) over the backend's step
lowerings and the replay generated from the plan (``_replay.write_replay``).

A new pass is one function over a :class:`~tensorplug._tracing._passes.Draft` (build) or a
:class:`~tensorplug._tracing._passes.Lowering` (plan) and one row in its tuple; docs/architecture.md shows both
tables (``pipeline_table()`` writes them, and a test keeps the page equal to it).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._contract import removed_methods
from tensorplug._runtime._errors import FunctionWarning, warn
from tensorplug._runtime._program import Assign, Program, Replay
from tensorplug._tracing._passes import (
    Draft,
    FuseSteps,
    Lowering,
    LowerStep,
    Plan,
    alias_times_one,
    ask_backend,
    direct_calls,
    drop_unread,
    fold_constants,
    fuse_chains,
    prune_steps,
    release_registers,
    reuse_buffers,
    updates,
)
from tensorplug._tracing._replay import write_replay
from tensorplug._tracing._tracer import Tracer

__all__ = [
    "BUILD_PASSES",
    "FUNCTION",
    "GRADIENT",
    "PLAIN",
    "PLAN_PASSES",
    "Lowered",
    "Pass",
    "Purpose",
    "build",
    "generate_replay",
    "lower",
    "pipeline_table",
    "plan",
]


@dataclass(frozen=True)
class Pass:
    """One row of the pipeline: a name, and the function that runs the pass (its docstring says what it does)."""

    name: str
    run: Callable[[Any], None]

    @property
    def what(self) -> str:
        return " ".join((self.run.__doc__ or "").split())


BUILD_PASSES: tuple[Pass, ...] = (
    Pass("prune", prune_steps),
    Pass("release", release_registers),
)
"""The passes that make a finished trace's program, in order (each a function of a ``Draft``)."""

PLAN_PASSES: tuple[Pass, ...] = (
    Pass("ask the backend", ask_backend),
    Pass("fold", fold_constants),
    Pass("direct calls", direct_calls),
    Pass("drop unread", drop_unread),
    Pass("times one", alias_times_one),
    Pass("fuse", fuse_chains),
    Pass("reuse buffers", reuse_buffers),
)
"""The passes that plan a program's replay from the backend's step lowerings, in order (each a function of a
``Lowering``)."""


@dataclass(frozen=True)
class Purpose:
    """What a program is lowered for, and the rules that follow from it."""

    name: str
    label: str
    """Names a replay generated from a plan in tracebacks, after the backend's name (``"numpy lowering"``)."""
    plain_label: str
    """Names the plain replay (each kernel called in turn) in tracebacks."""
    lowers: bool
    """The backend lowers the program (False: the plain replay, as ``tp.function(..., lower=False)`` asks)."""
    compile: bool
    """The backend's whole-program compiler (``Backend.compile``) may take the program."""
    constants: bool
    """A step may become storage shared by every call (a ``Constant``, a folded step, an output that is one);
    False: every call's results are fresh storage (a gradient hands its results on to the caller's code)."""
    fails_to_plain: bool
    """When lowering raises: the plain replay runs and the failure is reported (True), or there is no replay
    and the caller runs the program's code as written (False)."""
    contract: bool
    """Warn once per backend type that still defines a method the contract removed."""
    decomposes: bool = False
    """A backend that prefers decompositions (``Backend.prefers_decompositions``) gets the program with the steps
    of every kernel that has one replaced by the decomposition's steps."""


FUNCTION = Purpose(
    "tp.function",
    "lowering",
    "replay",
    lowers=True,
    compile=True,
    constants=True,
    fails_to_plain=True,
    contract=True,
    decomposes=True,
)
"""A ``tp.function`` program: compiled, or planned from the step lowerings; a failure warns, the plain replay runs."""

GRADIENT = Purpose(
    "gradient",
    "gradient",
    "gradient",
    lowers=True,
    compile=False,
    constants=False,
    fails_to_plain=False,
    contract=False,
)
"""Eager backprop's gradient program: planned only (its replay must give eager's bits), fresh results at every
call, and no program at all when lowering fails (the gradient runs as written)."""

PLAIN = Purpose(
    "plain replay", "replay", "replay", lowers=False, compile=False, constants=True, fails_to_plain=True, contract=False
)
"""A program run kernel by kernel (``tp.function(..., lower=False)``, ``tp.export``'s trace)."""


@dataclass(frozen=True)
class Lowered:
    """What ``lower`` made: the replay (None: none, the caller runs as written), whether the backend lowered it
    (its compiler or a non-empty plan), and why lowering failed, if it raised."""

    replay: Replay | None
    lowered: bool = False
    failure: str | None = None


def build(tracer: Tracer, output_registers: list[int]) -> Program:
    """The program of a finished trace: the build passes over its steps, then its variables, reads and constants
    narrowed to what the kept steps use."""
    draft = Draft(list(tracer.steps), list(output_registers), {reg for reg, _ in tracer.constants})
    for row in BUILD_PASSES:
        row.run(draft)
    kept, live = draft.steps, draft.live

    def used(reg: int) -> bool:
        return live is None or reg in live

    new_values = updates(kept)
    used_variables = sorted(
        {i for i, reg in tracer.reads if used(reg)} | {s.variable for s in kept if isinstance(s, Assign)}
    )
    renumber = {old: new for new, old in enumerate(used_variables)}
    steps = [Assign(renumber[s.variable], s.register, s.free) if isinstance(s, Assign) else s for s in kept]
    return Program(
        name=tracer.name,
        backend=tracer.backend,
        arguments=tuple(tracer.arguments),
        variables=tuple(weakref.ref(tracer.variables[i]) for i in used_variables),
        variable_names=tuple(tracer.variables[i].name for i in used_variables),
        reads=tuple((renumber[i], reg) for i, reg in tracer.reads if used(reg)),
        constants=tuple((reg, raw) for reg, raw in tracer.constants if used(reg)),
        host=tuple(tracer.host),
        steps=tuple(steps),
        outputs=tuple(output_registers),
        specs=tuple(tracer.specs),
        kinds=tuple(tracer.kinds),
        guards=tuple(tracer.guards),
        updates=tuple((renumber[v], reg) for v, reg in new_values),
    )


def plan(program: Program, lower_step: LowerStep, *, constants: bool = True, fuse: FuseSteps | None = None) -> Plan:
    """The plan passes over ``program`` with ``lower_step`` and ``fuse`` answering for the backend."""
    lowering = Lowering(program, lower_step, constants, fuse)
    for row in PLAN_PASSES:
        row.run(lowering)
    return lowering.plan


_legacy_warned: weakref.WeakSet[type] = weakref.WeakSet()


def lower(program: Program, purpose: Purpose = FUNCTION) -> Lowered:
    """The replay of ``program`` (on its backend) for ``purpose``: the backend's compiled program, or the replay
    generated from the plan passes' plan, or the plain replay when the backend lowers nothing."""
    backend: Backend = program.backend
    if purpose.contract:
        _warn_removed(backend)
    if not purpose.lowers:
        return Lowered(write_replay(program, label=purpose.plain_label))
    try:
        if purpose.decomposes and backend.prefers_decompositions:
            program = _decomposed(program)
        if purpose.compile:
            compiled = backend.compile(program)
            if compiled is not None:
                if not callable(compiled):
                    failure = f"compile returned a {type(compiled).__name__}, not a callable or None"
                    return _failed(program, purpose, failure)
                return Lowered(compiled, True)
        steps = plan(program, backend.lower_step, constants=purpose.constants, fuse=backend.fuse)
        if not purpose.constants:
            shared = {reg for reg, _ in program.constants} | steps.folded.keys()
            if any(reg in shared for reg in program.outputs):
                return Lowered(None)  # an output would be storage shared between calls
        if not steps:
            return Lowered(write_replay(program, label=purpose.plain_label))
        replay = write_replay(program, steps, label=f"{backend.name} {purpose.label}")
        return Lowered(backend.wrap_replay(replay), True)
    except Exception as exc:
        return _failed(program, purpose, f"{type(exc).__name__}: {exc}")


def _decomposed(program: Program) -> Program:
    """``program`` with the steps of every kernel that has a decomposition replaced by its decomposition's steps."""
    from tensorplug._tracing._inline import inline

    where = f"tp.function {program.name!r} on backend {program.backend.name!r}, inlining decompositions"
    return inline(program, {step.kernel for step in program.kernel_steps}, where=where)


def _failed(program: Program, purpose: Purpose, failure: str) -> Lowered:
    if purpose.fails_to_plain:
        return Lowered(write_replay(program, label=purpose.plain_label), False, failure)
    return Lowered(None, False, failure)


def _warn_removed(backend: Backend) -> None:
    if type(backend) in _legacy_warned:
        return
    removed = removed_methods(backend)
    if removed:
        _legacy_warned.add(type(backend))
    for method in removed:
        warn(
            f"{method.message(backend.name)}. tp.function runs the plain replay meanwhile, and the conformance "
            "suite (tensorplug check) fails until it is done",
            FunctionWarning,
            stacklevel=6,
        )


def generate_replay(
    program: Program, lower_step: LowerStep | None = None, *, fuse: FuseSteps | None = None, label: str = "replay"
) -> Replay:
    """A replay of ``program`` (see :data:`~tensorplug.Replay` for its calling convention), generated as Python.

    Without ``lower_step``, the plain replay: each kernel called in turn. With it, the replay the core makes
    from a backend's step lowerings (``lower_step(program, index)`` returns a :class:`~tensorplug.StepLowering`,
    a :class:`~tensorplug.Constant` or None, as ``Backend.lower_step`` does), planned by the pipeline's plan
    passes: direct calls, folded steps, fused groups (with ``fuse(program, chain)``, as ``Backend.fuse``), dead
    buffers written into. Registers are released after their last use;
    an exception on a step's line becomes a ``tp.KernelError`` naming that step's kernel, backend and input
    shapes.

    >>> import numpy as np
    >>> import tensorplug as tp
    >>> f = tp.function(lambda x: -x)
    >>> program = f.program(tp.tensor([1.0]))
    >>> replay = tp.generate_replay(program, lambda program, i: tp.StepLowering(np.negative))
    >>> outputs, updates = replay([np.array([2.0], np.float32)], [], [])
    >>> outputs[0].tolist(), updates
    ([-2.0], ())
    """
    steps = None if lower_step is None else plan(program, lower_step, fuse=fuse)
    return write_replay(program, steps, label=label)


def pipeline_table() -> str:
    """The build passes, the plan passes and the purposes as the markdown tables docs/architecture.md shows."""
    lines = ["| build pass | what it does |", "|---|---|"]
    lines += [f"| {row.name} | {row.what} |" for row in BUILD_PASSES]
    lines += ["", "| plan pass | what it does |", "|---|---|"]
    lines += [f"| {row.name} | {row.what} |" for row in PLAN_PASSES]
    lines += [
        "",
        "| lowered for | backend lowers | may compile | decompositions inlined if preferred | shared constants "
        "| when lowering raises |",
    ]
    lines += ["|---|---|---|---|---|---|"]
    for purpose in (FUNCTION, GRADIENT, PLAIN):
        yes = {True: "yes", False: "no"}
        failing = "plain replay, reported" if purpose.fails_to_plain else "no program: runs as written"
        lines.append(
            f"| {purpose.name} | {yes[purpose.lowers]} | {yes[purpose.compile]} | {yes[purpose.decomposes]} "
            f"| {yes[purpose.constants]} | {failing} |"
        )
    return "\n".join(lines) + "\n"
