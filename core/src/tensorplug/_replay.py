"""Running a ``tp.function`` program: its replay generated as Python, the replay that observers see, and
what a replay does when it fails (the error it raises, the state it puts back)."""

from __future__ import annotations

import itertools
import linecache
import time
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from tensorplug._errors import KernelError, TensorplugError
from tensorplug._observe import KernelCall, everywhere
from tensorplug._program import Assign, HostInput, Program, Step
from tensorplug._state import state
from tensorplug._variable import Variable

__all__ = ["LowerStep", "generate_replay"]


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


def lower_program(program: Program) -> tuple[Callable[..., Any] | None, str | None]:
    """The backend's lowering of ``program`` (None: the plain replay), and why it failed if it raised."""
    try:
        lowered = program.backend.lower(program)
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if lowered is not None and not callable(lowered):
        return None, f"it returned a {type(lowered).__name__}, not a callable or None"
    return lowered, None


def replay_observed(
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
    return tuple(regs[r] for r in program.outputs)


def assigned_indices(program: Program) -> list[int]:
    """The indices of the variables the program assigns, each once, in order."""
    return list(dict.fromkeys(s.variable for s in program.steps if isinstance(s, Assign)))


def persist_step(program: Program, variables: list[Variable], outputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """On a lazy backend: the replay's outputs and the variables it assigned, persisted as one graph (the step
    is computed once, and the next step's graph starts from its results)."""
    assigned = [variables[i] for i in assigned_indices(program)]
    raws = program.backend.persist([*outputs, *(v._data for v in assigned)])
    for v, raw in zip(assigned, raws[len(outputs) :], strict=True):
        v._value = raw
    return tuple(raws[: len(outputs)])


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


def roll_back(program: Program, variables: list[Variable], saved: list[Any], ran: int) -> None:
    """A replay failed: its variables take back the storage they had, and the host callbacks that ran are undone."""
    for v, raw in zip(variables, saved, strict=True):
        v._value = raw
    for h in reversed(program.host[:ran]):
        if h.undo is not None:
            h.undo()
