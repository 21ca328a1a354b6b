"""The core's passes over a ``tp.function`` program, the same for every backend.

``prune`` drops kernel calls nothing uses; ``release`` says after which step each register dies; ``plan_steps``
asks the backend how it runs each step (``Backend.lower_step``, see :class:`~tensorplug.StepLowering`)
and works out, from its answers alone, which steps fold into constants and which dead buffers a step may
write into. ``_replay.lower_program`` puts it together: the backend's whole-program compiler if it has one,
else the replay generated from the plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime._program import Assign, Constant, Program, Step, StepLowering

__all__ = ["LowerStep", "Plan", "plan_steps", "prune", "release", "updates"]

LowerStep = Callable[[Program, int], "StepLowering | Constant | None"]
"""``lower_step(program, index)``: how the backend runs step ``index`` (see ``Backend.lower_step``)."""


# -- building a program ------------------------------------------------------------------------------------------


def prune(steps: list[Step | Assign], outputs: list[int]) -> tuple[list[Step | Assign], set[int]]:
    """The steps that compute an output or a Variable's new value, in order, and every register they need."""
    live = set(outputs)
    kept: list[Step | Assign] = []
    for step in reversed(steps):
        if isinstance(step, Assign):
            kept.append(step)
            live.add(step.register)
        elif any(r in live for r in step.outputs):
            kept.append(step)
            live.update(step.input_registers)
    kept.reverse()
    return kept, live


def updates(steps: list[Step | Assign]) -> tuple[tuple[int, int], ...]:
    """``(variable, register)``: the value each assigned Variable ends with, in order of first assignment."""
    last: dict[int, int] = {}
    for step in steps:
        if isinstance(step, Assign):
            last[step.variable] = step.register
    return tuple(last.items())


def release(steps: list[Step | Assign], keep: set[int]) -> list[Step | Assign]:
    """The steps with ``free`` set: each register not in ``keep`` is released right after its last use (an
    output nothing reads, right after the step that made it)."""
    last_use: dict[int, int] = {}
    for i, step in enumerate(steps):
        if isinstance(step, Assign):
            last_use[step.register] = i
        else:
            for reg in step.input_registers:
                last_use[reg] = i
            for reg in step.outputs:
                last_use.setdefault(reg, i)
    frees: dict[int, list[int]] = {}
    for reg, i in last_use.items():
        if reg not in keep:
            frees.setdefault(i, []).append(reg)
    released: list[Step | Assign] = []
    for i, step in enumerate(steps):
        free = tuple(sorted(frees.get(i, ())))
        if isinstance(step, Assign):
            released.append(Assign(step.variable, step.register, free))
        else:
            released.append(
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
    return released


# -- lowering a program ------------------------------------------------------------------------------------------


@dataclass
class Plan:
    """How a replay runs each step, decided once per trace.

    ``calls``: step index -> the backend's lowering of it, when it has a direct call; ``into``: step index ->
    the dead register its ``into`` writes into; ``folded``: register -> the value it has at every call (its
    step does not run); ``dropped``: pure steps that only folded steps read (the loss a gradient's seed was
    shaped after, say), which do not run either; ``aliases``: step index -> the input register its output is,
    for a multiplication by ones (the gradient's seed times the first gradient: ``x * 1`` is ``x``, bit for bit).
    """

    calls: dict[int, StepLowering] = field(default_factory=dict)
    into: dict[int, int] = field(default_factory=dict)
    folded: dict[int, Any] = field(default_factory=dict)
    dropped: set[int] = field(default_factory=set)
    aliases: dict[int, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.calls or self.into or self.folded or self.dropped or self.aliases)


def plan_steps(program: Program, lower_step: LowerStep) -> Plan:
    """Ask ``lower_step`` about each kernel step, then fold and pick buffers to reuse from its answers."""
    lowerings: dict[int, StepLowering] = {}
    result = Plan()
    known: dict[int, Any] = dict(program.constants)
    for i, step in enumerate(program.steps):
        if not isinstance(step, Step):
            continue
        answer = lower_step(program, i)
        if isinstance(answer, Constant):
            if len(step.outputs) != 1 or step.sequence:
                raise TypeError(f"lower_step gave a Constant for step {i} ({step.kernel}), which has several outputs")
            result.folded[step.outputs[0]] = known[step.outputs[0]] = answer.value
            continue
        if answer is None:
            continue
        if not isinstance(answer, StepLowering):
            raise TypeError(
                f"lower_step returned a {type(answer).__name__} for step {i} ({step.kernel}), not a "
                "tp.StepLowering, a tp.Constant or None"
            )
        lowerings[i] = answer
        if answer.pure and _fold(program, step, known, result.folded):
            continue
        if answer.call is not None:
            result.calls[i] = answer
    result.dropped = _unread(program, lowerings, result.folded)
    result.aliases = _times_one(program, lowerings, known, result)
    owned = _owned(program, lowerings, result.folded)
    for i, source in result.aliases.items():  # the output is the input's storage: owned while one of them lives
        step = program.steps[i]
        assert isinstance(step, Step)
        (out,) = step.outputs
        if source in owned and source in step.free:
            owned.add(out)
        else:
            owned.difference_update((source, out))
    for i, lowering in result.calls.items():
        step = program.steps[i]
        assert isinstance(step, Step)
        if lowering.into is None or step.sequence or len(step.outputs) != 1 or step.outputs[0] in result.folded:
            continue
        spec = program.specs[step.outputs[0]]
        for _, r in step.inputs:
            if isinstance(r, int) and r in owned and r in step.free and program.specs[r] == spec:
                result.into[i] = r
                break
    return result


def _fold(program: Program, step: Step, known: dict[int, Any], folded: dict[int, Any]) -> bool:
    """Compute a pure step whose inputs are all known, once; False when it cannot (or it raises: the replay
    then runs it, and raises the error the kernel gives, at the call)."""
    if step.random or any(reg not in known for reg in step.input_registers):
        return False
    try:  # the kernel itself computes it: the same bits as the replay's kernel call
        value = step.function(step.input_values(known), step.attrs, program.backend)
    except Exception:
        return False
    values = tuple(value) if step.sequence else (value,)
    if len(values) != len(step.outputs):
        return False
    for reg, raw in zip(step.outputs, values, strict=True):
        folded[reg] = known[reg] = raw
    return True


_ONES_CHECKED = 1 << 16
"""Elements up to which a constant is read to see whether it is all ones (the seeds of gradients are 1-d)."""


def _times_one(
    program: Program, lowerings: dict[int, StepLowering], known: dict[int, Any], plan: Plan
) -> dict[int, int]:
    """Multiply steps (whose kernel the backend lowered as pure: its own) of an input by a known all-ones value
    of the same dtype and shape as the input and the output: the output is the input itself, bit for bit
    (``x * 1`` is ``x`` for every float, -0.0, inf and NaN included, for ints, and ``x & True`` for bools)."""
    aliases: dict[int, int] = {}
    specs = program.specs
    for i, lowering in lowerings.items():
        step = program.steps[i]
        if not isinstance(step, Step) or step.kernel != K.MULTIPLY or not lowering.pure or i in plan.dropped:
            continue
        (out,) = step.outputs
        if out in plan.folded:
            continue
        inputs = dict(step.inputs)
        a, b = inputs.get("a"), inputs.get("b")
        for one, other in ((a, b), (b, a)):
            if (
                isinstance(one, int)
                and isinstance(other, int)
                and one in known
                and specs[one] == specs[out] == specs[other]
                and specs[one].size <= _ONES_CHECKED
                and _all_ones(program, known[one])
            ):
                aliases[i] = other
                break
    return aliases


def _all_ones(program: Program, raw: Any) -> bool:
    try:
        host = np.asarray(program.backend.to_host(raw))
    except Exception:
        return False
    return bool(host.dtype.kind in "biuf" and (host == 1).all())


def _unread(program: Program, lowerings: dict[int, StepLowering], folded: dict[int, Any]) -> set[int]:
    """Pure steps none of whose outputs a running step, the outputs or the updates read, once folded steps are
    gone (a step that is not pure, or random, always runs: it may change state)."""
    live = set(program.outputs) | {reg for _, reg in program.updates}
    unread: set[int] = set()
    for i in range(len(program.steps) - 1, -1, -1):
        step = program.steps[i]
        if isinstance(step, Assign):
            live.add(step.register)
            continue
        if all(r in folded for r in step.outputs):
            continue
        lowering = lowerings.get(i)
        if lowering is not None and lowering.pure and not step.random and not any(r in live for r in step.outputs):
            unread.add(i)
            continue
        live.update(step.input_registers)
    return unread


def _owned(program: Program, lowerings: dict[int, StepLowering], folded: dict[int, Any]) -> set[int]:
    """Registers holding storage that only the replay sees: made by a lowered ``fresh`` step (of at least one
    dimension), read only by ``reads_only`` steps, neither returned nor a Variable's new value, nor folded."""
    owned: set[int] = set()
    for i, lowering in lowerings.items():
        step = program.steps[i]
        if lowering.fresh and lowering.call is not None and isinstance(step, Step):
            owned.update(r for r in step.outputs if program.specs[r].shape)
    for i, step in enumerate(program.steps):
        if isinstance(step, Assign):
            owned.discard(step.register)
            continue
        reader = lowerings.get(i)
        if reader is not None and reader.reads_only and reader.call is not None:
            continue
        owned.difference_update(step.input_registers)
    return owned - set(program.outputs) - folded.keys()
