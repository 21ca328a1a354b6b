"""Running a ``tp.function`` program: its replay generated as Python, the replay that observers see, and
what a replay does when it fails (the error it raises, the state it puts back)."""

from __future__ import annotations

import itertools
import linecache
import time
import types
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tensorplug._runtime._errors import KernelError, TensorplugError
from tensorplug._runtime._observe import KernelCall, everywhere
from tensorplug._runtime._program import HostInput, Program, Replay, Step
from tensorplug._runtime._state import state
from tensorplug._tracing._passes import Plan

if TYPE_CHECKING:
    pass

__all__ = ["replay_observed", "write_replay"]


_codes = itertools.count()

_line_steps: weakref.WeakKeyDictionary[types.CodeType, dict[int, int]] = weakref.WeakKeyDictionary()
"""The code of each generated replay -> {line: step index}, so that an error names the step that raised it."""


def write_replay(program: Program, plan: Plan | None = None, *, label: str = "replay") -> Replay:
    """The replay of ``program`` as generated Python, with the calling convention of :data:`~tensorplug.Replay`.

    Each kernel step is one line: ``r3 = k3({"a": r1, "b": r2}, t3, be)``, the kernel call, or with a
    ``plan`` (see :func:`~tensorplug._tracing._pipeline.plan`) the backend's direct call ``r3 = s3(r1,
    r2)``, its call into a dead buffer ``r3 = i3(r1, r1, r2)``, the input itself for a multiplication by ones
    (``r3 = r1``), or nothing for a folded or dropped step. A fused group is one line, at its last step's place,
    that calls the group's lowering on the group's inputs (``r5 = s5(r1, r2)``: ``r3`` and ``r4`` are never made).
    Registers are deleted after their last use (``step.free``). An exception raised on a step's line becomes
    a KernelError naming that step's kernel, backend and input shapes.
    """
    plan = plan or Plan()
    constants = {reg for reg, _ in program.constants} | plan.folded.keys()
    steps = program.steps
    unmade = {r for i in plan.dropped if isinstance(step := steps[i], Step) for r in step.outputs}  # never assigned

    def ref(reg: int) -> str:
        return f"c{reg}" if reg in constants else f"r{reg}"

    def refs(r: int | tuple[int, ...]) -> str:
        return "[" + ", ".join(ref(i) for i in r) + "]" if isinstance(r, tuple) else ref(r)

    namespace: dict[str, Any] = {"be": program.backend}
    for reg, raw in [*program.constants, *plan.folded.items()]:
        namespace[f"c{reg}"] = raw
    lines = ["def replay(A, V, H):"]
    for i, reg in enumerate(program.arguments):
        lines.append(f"    r{reg} = A[{i}]")
    for index, reg in program.reads:
        lines.append(f"    r{reg} = V[{index}]")
    for position, reg in enumerate(program.host_registers):
        lines.append(f"    r{reg} = H[{position}]")
    line_steps: dict[int, int] = {}
    inside = {r for i in plan.absorbed if isinstance(step := steps[i], Step) for r in step.outputs}  # never made
    group_end = {i: last for last, group in plan.fused.items() for i in group.chain[:-1]}
    waiting: dict[int, list[int]] = {}  # a group's last step -> the registers its other steps free, freed after it
    for i, step in enumerate(program.steps):
        if i in group_end:
            waiting.setdefault(group_end[i], []).extend(step.free)
            continue
        if isinstance(step, Step) and i not in plan.dropped and not all(r in plan.folded for r in step.outputs):
            outs = ", ".join(f"r{r}" for r in step.outputs)
            if step.sequence:
                outs += "," if len(step.outputs) == 1 else ""
            group = plan.fused.get(i)
            if i in plan.aliases:
                expression = ref(plan.aliases[i])
            elif group is not None or i in plan.calls:
                lowering = group.lowering if group is not None else plan.calls[i]
                args = [ref(r) for r in group.inputs] if group is not None else [refs(r) for _, r in step.inputs]
                for j, value in enumerate(lowering.args):
                    namespace[f"a{i}_{j}"] = value
                    args.append(f"a{i}_{j}")
                for key, value in lowering.kwargs.items():
                    namespace[f"a{i}_{key}"] = value
                    args.append(f"{key}=a{i}_{key}")
                if i in plan.into:
                    namespace[f"i{i}"] = lowering.into
                    expression = f"i{i}(r{plan.into[i]}, {', '.join(args)})"
                else:
                    namespace[f"s{i}"] = lowering.call
                    expression = f"s{i}({', '.join(args)})"
            else:
                namespace[f"k{i}"] = step.function
                namespace[f"t{i}"] = step.attrs
                inputs = ", ".join(f"{name!r}: {refs(r)}" for name, r in step.inputs)
                expression = f"k{i}({{{inputs}}}, t{i}, be)"
            lines.append(f"    {outs or '_'} = {expression}")
            line_steps[len(lines)] = i
        free = (*waiting.pop(i, ()), *step.free)
        dead = [r for r in free if r not in constants and r not in unmade and r not in inside]
        if dead:
            lines.append(f"    del {', '.join(f'r{r}' for r in dead)}")
    outputs = "".join(ref(r) + ", " for r in program.outputs)
    updates = "".join(ref(r) + ", " for _, r in program.updates)
    lines.append(f"    return ({outputs}), ({updates})")
    source = "\n".join(lines) + "\n"
    filename = f"<tp.function {program.name} {label} #{next(_codes)}>"
    code = compile(source, filename, "exec")
    exec(code, namespace)
    replay: Replay = namespace.pop("replay")  # no cycle
    _line_steps[replay.__code__] = line_steps
    # Tracebacks show the source while the replay lives; it goes from linecache with the replay (its trace).
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(replay, linecache.cache.pop, filename, None).atexit = False
    return replay


def failed_step(exc: BaseException) -> int | None:
    """The index of the step whose line of a generated replay raised ``exc`` (None if none did)."""
    tb = exc.__traceback__
    index = None
    while tb is not None:
        table = _line_steps.get(tb.tb_frame.f_code)
        if table is not None:
            index = table.get(tb.tb_lineno, index)
        tb = tb.tb_next
    return index


def replay_observed(
    program: Program, arguments: Sequence[Any], variables: Sequence[Any], host: Sequence[Any]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The replay that tp.profile and debug mode see: each step a KernelCall to this thread's observers."""
    observers = (*(state.observers or ()), *everywhere)
    synchronize = any(o.synchronize for o in observers)
    backend = program.backend
    regs = program.bind(arguments, variables, host)
    for i, step in enumerate(program.steps):
        if isinstance(step, Step):
            inputs = step.input_values(regs)
            if synchronize:
                backend.synchronize()
            start = time.perf_counter()
            try:
                out = step.function(inputs, step.attrs, backend)
            except TensorplugError:
                raise
            except Exception as exc:
                raise step_error(program, i, exc) from exc
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
    return tuple(regs[r] for r in program.outputs), tuple(regs[r] for _, r in program.updates)


def persist_step(
    program: Program, outputs: tuple[Any, ...], updates: tuple[Any, ...]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """On a lazy backend: the replay's outputs and the variables' new values, persisted as one graph (the step
    is computed once, and the next step's graph starts from its results)."""
    raws = program.backend.persist([*outputs, *updates])
    return tuple(raws[: len(outputs)]), tuple(raws[len(outputs) :])


def lowered_failure_message(program: Program, exc: BaseException) -> str:
    return (
        f"the replay of tp.function {program.name!r} lowered by backend {program.backend.name!r} failed: "
        f"{type(exc).__name__}: {exc} (tp.function(lower=False) runs the plain replay, whose errors name the kernel)"
    )


def step_error(program: Program, index: int, exc: BaseException) -> Exception:
    """The error a replay raises when step ``index`` raised ``exc``: what the op that made the call raises."""
    error = KernelError(_failure_message(program, index, exc))
    step = program.steps[index]
    if isinstance(step, Step) and step.error is not None:
        return step.error(error)
    return error


def _failure_message(program: Program, index: int, exc: BaseException) -> str:
    step = program.steps[index]
    assert isinstance(step, Step)
    specs = program.specs
    parts = ", ".join(
        f"{name}=[{', '.join(str(specs[j]) for j in r)}]" if isinstance(r, tuple) else f"{name}={specs[r]}"
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


def host_storage(h: HostInput, values: Sequence[Any]) -> list[Any]:
    """The storage of a replay's host values: those of the previous call when the values are the same (the
    hyper-parameters that rarely change), for values that convert alike (no zero, whose sign ``==`` ignores)."""
    last = h.last[0]
    if last is not None and last[0] == values and 0 not in values:
        return last[1]  # type: ignore[no-any-return]
    from tensorplug.ops import tensor

    raws = [tensor(value, h.dtype)._data for value in values]
    h.last[0] = (values, raws)
    return raws


def roll_back(program: Program, ran: int) -> None:
    """A replay failed (before any Variable took a new value): the host callbacks that ran are undone."""
    for h in reversed(program.host[:ran]):
        if h.undo is not None:
            h.undo()
