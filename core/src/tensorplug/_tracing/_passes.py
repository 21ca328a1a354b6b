"""The core's passes over a ``tp.function`` program, the same for every backend; ``_pipeline`` lists them in order.

Build passes make the program of a finished trace (a :class:`Draft`): ``prune_steps`` drops kernel calls
nothing uses, ``release_registers`` says after which step each register dies. Plan passes work out how its
replay runs each step (a :class:`Lowering`, whose :class:`Plan` ``write_replay`` follows): ``ask_backend``
asks the backend (``Backend.lower_step``, see :class:`~tensorplug.StepLowering`), and the others decide, from
its answers alone, which steps fold into constants, which run by a direct call, which need not run, which
are their input itself, and which dead buffers a step may write into.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._runtime._program import Assign, Constant, Program, Step, StepLowering

__all__ = [
    "Draft",
    "FuseSteps",
    "Fused",
    "LowerStep",
    "Lowering",
    "Plan",
    "alias_times_one",
    "ask_backend",
    "direct_calls",
    "drop_unread",
    "fold_constants",
    "fuse_chains",
    "prune",
    "prune_steps",
    "release",
    "release_registers",
    "reuse_buffers",
    "updates",
]

LowerStep = Callable[[Program, int], "StepLowering | Constant | None"]
"""``lower_step(program, index)``: how the backend runs step ``index`` (see ``Backend.lower_step``)."""

FuseSteps = Callable[[Program, tuple[int, ...]], "StepLowering | None"]
"""``fuse(program, chain)``: how the backend runs a chain of steps as one call (see ``Backend.fuse``)."""


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


@dataclass
class Draft:
    """What the build passes work on: a finished trace's steps, the registers it returns, the registers of its
    constants, and (once pruned) every register a kept step needs (None: all of them)."""

    steps: list[Step | Assign]
    outputs: list[int]
    constants: set[int]
    live: set[int] | None = None


def prune_steps(draft: Draft) -> None:
    """Drop the kernel calls that no output and no Variable's new value reads."""
    draft.steps, draft.live = prune(draft.steps, draft.outputs)


def release_registers(draft: Draft) -> None:
    """Free each register right after its last use, but the outputs, constants and Variables' new values."""
    constants = draft.constants if draft.live is None else draft.constants & draft.live
    keep = set(draft.outputs) | constants | {reg for _, reg in updates(draft.steps)}
    draft.steps = release(draft.steps, keep)


# -- lowering a program ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fused:
    """A fused group: the chain of steps it runs (its call runs at the last step's line of the replay), the
    registers its call takes (``Program.chain_inputs``), and the backend's lowering of it (``Backend.fuse``)."""

    chain: tuple[int, ...]
    inputs: tuple[int, ...]
    lowering: StepLowering


@dataclass
class Plan:
    """How a replay runs each step, decided once per trace.

    ``calls``: step index -> the backend's lowering of it, when it has a direct call; ``into``: step index ->
    the dead register its ``into`` writes into; ``folded``: register -> the value it has at every call (its
    step does not run); ``dropped``: pure steps that only folded steps read (the loss a gradient's seed was
    shaped after, say), which do not run either; ``aliases``: step index -> the input register its output is,
    for a multiplication by ones (the gradient's seed times the first gradient: ``x * 1`` is ``x``, bit for bit);
    ``fused``: the last step of each fused group -> the group, whose call runs at that step's line; ``absorbed``:
    the other steps of the groups, which have no line of their own.
    """

    calls: dict[int, StepLowering] = field(default_factory=dict)
    into: dict[int, int] = field(default_factory=dict)
    folded: dict[int, Any] = field(default_factory=dict)
    dropped: set[int] = field(default_factory=set)
    aliases: dict[int, int] = field(default_factory=dict)
    fused: dict[int, Fused] = field(default_factory=dict)
    absorbed: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.calls or self.into or self.folded or self.dropped or self.aliases or self.fused)


@dataclass
class Lowering:
    """What the plan passes share while they plan one program's replay: the backend's answers, the registers whose
    value is the same at every call, and the plan they write.

    ``lower_step(program, index)`` is how the backend runs a step (``Backend.lower_step``); with ``constants``
    False a :class:`~tensorplug.Constant` answer counts as no answer (a gradient program's results must be
    fresh storage at every call, never a value shared between calls).
    """

    program: Program
    lower_step: LowerStep
    constants: bool = True
    fuse: FuseSteps | None = None
    answers: dict[int, StepLowering] = field(default_factory=dict)
    known: dict[int, Any] = field(default_factory=dict)
    plan: Plan = field(default_factory=Plan)


def ask_backend(lowering: Lowering) -> None:
    """Ask the backend how it runs each kernel step; a Constant answer folds that step's output at once."""
    program, plan = lowering.program, lowering.plan
    lowering.known.update(program.constants)
    for i, step in enumerate(program.steps):
        if not isinstance(step, Step):
            continue
        answer = lowering.lower_step(program, i)
        if isinstance(answer, Constant):
            if not lowering.constants:
                continue
            if len(step.outputs) != 1 or step.sequence:
                raise TypeError(f"lower_step gave a Constant for step {i} ({step.kernel}), which has several outputs")
            plan.folded[step.outputs[0]] = lowering.known[step.outputs[0]] = answer.value
            continue
        if answer is None:
            continue
        if not isinstance(answer, StepLowering):
            raise TypeError(
                f"lower_step returned a {type(answer).__name__} for step {i} ({step.kernel}), not a "
                "tp.StepLowering, a tp.Constant or None"
            )
        lowering.answers[i] = answer


def fold_constants(lowering: Lowering) -> None:
    """Compute once each pure step whose inputs are all known (constants, or folded before it), in order."""
    program = lowering.program
    for i, answer in lowering.answers.items():
        step = program.steps[i]
        if answer.pure and isinstance(step, Step):
            _fold(program, step, lowering.known, lowering.plan.folded)


def direct_calls(lowering: Lowering) -> None:
    """The steps that still run and that the backend runs by a direct call of its own (``StepLowering.call``)."""
    program, plan = lowering.program, lowering.plan
    for i, answer in lowering.answers.items():
        step = program.steps[i]
        if answer.call is not None and isinstance(step, Step) and not all(r in plan.folded for r in step.outputs):
            plan.calls[i] = answer


def drop_unread(lowering: Lowering) -> None:
    """Pure steps that only folded steps read do not run (the loss a gradient's seed was shaped after, say)."""
    lowering.plan.dropped = _unread(lowering.program, lowering.answers, lowering.plan.folded)


def alias_times_one(lowering: Lowering) -> None:
    """A multiplication by a known all-ones value of the input's dtype (of its shape, or broadcast to it) is the
    input itself."""
    lowering.plan.aliases = _times_one(lowering.program, lowering.answers, lowering.known, lowering.plan)


def fuse_chains(lowering: Lowering) -> None:
    """Chains of pure steps, each step's output read once and by the next step alone, that the backend runs as
    one call (``Backend.fuse``): from each step, the longest chain it answers; the registers inside a chain are
    never made."""
    if lowering.fuse is None:
        return
    program, plan = lowering.program, lowering.plan
    reader = _single_readers(program, lowering.answers, plan)
    for i in range(len(program.steps)):
        if i in plan.absorbed or i in plan.fused:
            continue
        chain: tuple[int, ...] = (i,)
        lowered: StepLowering | None = None
        while chain[-1] in reader:
            end = reader[chain[-1]]
            if end in plan.fused or end in plan.absorbed or not _movable(program, chain, end):
                break  # the step ends another group already, or a step runs between with the last use of an input
            longer = (*chain, end)
            answer = lowering.fuse(program, longer)
            if answer is None:
                break
            if not isinstance(answer, StepLowering) or answer.call is None:
                kernels = ", ".join(program.steps[k].kernel for k in longer)  # type: ignore[union-attr]
                raise TypeError(
                    f"fuse returned {answer!r} for steps {longer} ({kernels}), not a tp.StepLowering with a call, "
                    "or None"
                )
            chain, lowered = longer, answer
        if lowered is not None:
            plan.fused[chain[-1]] = Fused(chain, program.chain_inputs(chain), lowered)
            plan.absorbed.update(chain[:-1])
            for index in chain:
                plan.calls.pop(index, None)


def _movable(program: Program, chain: tuple[int, ...], end: int) -> bool:
    """Whether the steps of ``chain`` may run at step ``end``'s place: no step between them and ``end`` outside
    the chain is the last use of a register they read (that step frees it, or writes into it ``into``)."""
    read = {r for i in chain for r in program.steps[i].input_registers}  # type: ignore[union-attr]
    return not any(read.intersection(program.steps[k].free) for k in range(chain[0] + 1, end) if k not in chain)


def _single_readers(program: Program, answers: dict[int, StepLowering], plan: Plan) -> dict[int, int]:
    """Step index -> the step that reads its output, for the steps a chain may link: pure lowered steps of one
    output, which one later such step reads once and nothing else reads (no other step, output or assignment)."""
    readers: dict[int, list[int]] = {}
    for i, step in enumerate(program.steps):
        if isinstance(step, Assign):
            readers.setdefault(step.register, []).append(-1)
            continue
        for _, r in step.inputs:
            for reg in r if isinstance(r, tuple) else (r,):
                readers.setdefault(reg, []).append(-1 if isinstance(r, tuple) else i)
    kept = set(program.outputs) | {reg for _, reg in program.updates} | plan.folded.keys()
    skipped = plan.dropped | plan.aliases.keys()

    def runs_alone(i: int) -> bool:
        answer, step = answers.get(i), program.steps[i]
        return (
            answer is not None
            and answer.pure
            and isinstance(step, Step)
            and not step.random
            and not step.sequence
            and len(step.outputs) == 1
            and i not in skipped
        )

    single: dict[int, int] = {}
    for i, step in enumerate(program.steps):
        if isinstance(step, Step) and runs_alone(i) and step.outputs[0] not in kept:
            users = readers.get(step.outputs[0], [])
            if len(users) == 1 and users[0] > i and runs_alone(users[0]):
                single[i] = users[0]
    return single


def reuse_buffers(lowering: Lowering) -> None:
    """A direct call that may write ``into`` a buffer gets a dead input register of its output's shape and dtype
    whose storage only the replay sees."""
    program, plan = lowering.program, lowering.plan
    owned = _owned(program, lowering.answers, plan)
    for i, source in plan.aliases.items():  # the output is the input's storage: owned while one of them lives
        step = program.steps[i]
        assert isinstance(step, Step)
        (out,) = step.outputs
        if source in owned and source in step.free:
            owned.add(out)
        else:
            owned.difference_update((source, out))
    for i, call in plan.calls.items():
        step = program.steps[i]
        assert isinstance(step, Step)
        if call.into is None or step.sequence or len(step.outputs) != 1 or step.outputs[0] in plan.folded:
            continue
        spec = program.specs[step.outputs[0]]
        for _, r in step.inputs:
            if isinstance(r, int) and r in owned and r in step.free and program.specs[r] == spec:
                plan.into[i] = r
                break
    for i, group in plan.fused.items():
        last = program.steps[i]
        assert isinstance(last, Step)
        if group.lowering.into is None or len(last.outputs) != 1:
            continue
        spec = program.specs[last.outputs[0]]
        dying = {r for index in group.chain for r in program.steps[index].free}
        for r in group.inputs:
            if r in owned and r in dying and program.specs[r] == spec:
                plan.into[i] = r
                break


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
    of the input's dtype, which the output has with the input's shape (the ones broadcast to it, or have it):
    the output is the input itself, bit for bit
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
                and specs[out] == specs[other]
                and specs[one].dtype == specs[out].dtype
                and specs[out].shape is not None
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


def _owned(program: Program, lowerings: dict[int, StepLowering], plan: Plan) -> set[int]:
    """Registers holding storage that only the replay sees: made by a lowered ``fresh`` step (of at least one
    dimension), read only by ``reads_only`` steps, neither returned nor a Variable's new value, nor folded. The
    steps of a fused group are what the group's lowering says."""
    runs = dict(lowerings)
    for group in plan.fused.values():
        runs.update(dict.fromkeys(group.chain, group.lowering))
    owned: set[int] = set()
    for i, lowering in runs.items():
        step = program.steps[i]
        if lowering.fresh and lowering.call is not None and isinstance(step, Step) and i not in plan.absorbed:
            owned.update(r for r in step.outputs if program.specs[r].shape)
    for i, step in enumerate(program.steps):
        if isinstance(step, Assign):
            owned.discard(step.register)
            continue
        reader = runs.get(i)
        if reader is not None and reader.reads_only and reader.call is not None:
            continue
        owned.difference_update(step.input_registers)
    return owned - set(program.outputs) - plan.folded.keys()
