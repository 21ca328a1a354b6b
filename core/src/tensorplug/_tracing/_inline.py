"""Inline decompositions into a program: each step of a given kernel becomes the steps of its decomposition.

An exporter that has no translation for a kernel asks for this (``ExportRequest.decomposed``), and so does the
lowering pipeline for a backend that prefers decompositions (``Backend.prefers_decompositions``): the decomposition
is traced with ``tp.function`` on tensors of the step's dtypes and shapes (the constant's value where the input is
a constant), and its steps take the step's place, its arguments read from the step's input registers, its
constants added to the program's, its outputs written to the registers the step wrote (a decomposition that
returns one of its inputs as it is makes later steps read that input). Decompositions that call other kernels
with decompositions are inlined in turn.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorplug._runtime._errors import ExportError, FunctionWarning, TensorplugError
from tensorplug._runtime._program import Assign, Program, Step, TensorSpec
from tensorplug._runtime._registry import DecompositionSpec, decomposition_registry, resolve
from tensorplug._runtime._tensor import Tensor, wrap_storage

if TYPE_CHECKING:
    from tensorplug._tracing._export import ExportRequest

__all__ = ["inline", "inline_decompositions"]

_DEPTH = 16  # decompositions within decompositions, at most


def inline_decompositions(request: ExportRequest, kernels: Collection[str]) -> ExportRequest:
    """``request`` with every step of ``kernels`` that has a decomposition replaced by its decomposition's steps."""
    program = inline(request.program, kernels, where=request.where(), error=ExportError, dynamic=request.dynamic)
    added = {reg: raw for reg, raw in program.constants if reg not in request.constant_values}
    values = {
        **request.constant_values,
        **{reg: np.asarray(program.backend.to_host(raw)) for reg, raw in added.items()},
    }
    return dataclasses.replace(request, program=program, constant_values=values)


def inline(
    program: Program,
    kernels: Collection[str],
    *,
    where: str,
    error: type[TensorplugError] = TensorplugError,
    dynamic: Mapping[int, Any] | None = None,
) -> Program:
    """``program`` with every step of ``kernels`` that has a decomposition replaced by its decomposition's steps
    (again for the kernels of ``kernels`` those steps call). ``where`` starts messages, raised as ``error``;
    a step reading a register of ``dynamic`` (whose sizes are not fixed) is refused."""
    wanted = {k for k in kernels if decomposition_registry.get(k) is not None}
    inlined: set[str] = set()
    for _ in range(_DEPTH):
        todo = {s.kernel for s in program.kernel_steps if s.kernel in wanted and s.gradient_of is None}
        if not todo:
            return program
        inlined |= todo
        program = _inline_once(_Builder(program, where, error, dynamic or {}), wanted)
    left = sorted({s.kernel for s in program.kernel_steps if s.kernel in wanted})
    raise error(
        f"{where}: the decompositions of {', '.join(map(repr, sorted(inlined)))} call each other in a "
        f"cycle (after {_DEPTH} rounds of inlining, {', '.join(map(repr, left))} is still called). Register a "
        "translation for one of them, or write one decomposition with other ops"
    )


class _Builder:
    """The program being rebuilt: its steps, registers and constants so far."""

    def __init__(self, program: Program, where: str, error: type[TensorplugError], dynamic: Mapping[int, Any]) -> None:
        self.program, self.where, self.error, self.dynamic = program, where, error, dynamic
        self.steps: list[Step | Assign] = []
        self.specs = list(program.specs)
        self.kinds = list(program.kinds)
        self.constants = list(program.constants)
        self.renamed: dict[int, int] = {}  # a register of the old program -> the register holding its value now

    def register(self, spec: TensorSpec, kind: str) -> int:
        self.specs.append(spec)
        self.kinds.append(kind)
        return len(self.specs) - 1

    def name(self, register: int) -> int:
        return self.renamed.get(register, register)


def _inline_once(out: _Builder, wanted: set[str]) -> Program:
    program = out.program
    for index, step in enumerate(program.steps):
        if isinstance(step, Assign):
            out.steps.append(dataclasses.replace(step, register=out.name(step.register)))
            continue
        step = _read_through(step, out)
        spec = decomposition_registry.get(step.kernel) if step.kernel in wanted else None
        if spec is None or step.gradient_of is not None:
            out.steps.append(step)
            continue
        _inline_step(out, index, step, spec)
    return dataclasses.replace(
        program,
        steps=tuple(out.steps),
        constants=tuple(out.constants),
        specs=tuple(out.specs),
        kinds=tuple(out.kinds),
        outputs=tuple(out.name(r) for r in program.outputs),
        updates=tuple((v, out.name(r)) for v, r in program.updates),
    )


def _read_through(step: Step, out: _Builder) -> Step:
    """``step`` reading the registers that hold its inputs' values now."""
    if not out.renamed:
        return step
    inputs = tuple(
        (name, tuple(map(out.name, reg)) if isinstance(reg, tuple) else out.name(reg)) for name, reg in step.inputs
    )
    return dataclasses.replace(step, inputs=inputs)


def _inline_step(out: _Builder, index: int, step: Step, spec: DecompositionSpec) -> None:
    where = f"{out.where}: step {index}, the kernel {step.kernel!r} (as its decomposition, from {spec.source})"
    dynamic = [r for r in step.input_registers if r in out.dynamic]
    if dynamic:
        raise out.error(
            f"{where}: its input r{dynamic[0]} ({out.specs[dynamic[0]]}) has dynamic axes, and a decomposition is "
            "traced for fixed sizes. Export with fixed sizes, or register a translation of the kernel for this format"
        )
    sub = _trace(out, where, step, spec)
    if sub.reads or sub.host or any(isinstance(s, Assign) for s in sub.steps):
        raise out.error(f"{where}: the decomposition reads or assigns Variables or host values; it must compute "
                          "the kernel's outputs from its inputs with ops")  # fmt: skip
    unique = list(dict.fromkeys(step.input_registers))
    mapping = dict(zip(sub.arguments, unique, strict=True))
    for reg, raw in sub.constants:
        mapping[reg] = new = out.register(sub.specs[reg], "constant")
        out.constants.append((new, raw))
    if len(sub.outputs) != len(step.outputs):
        raise out.error(f"{where}: the decomposition returns {len(sub.outputs)} tensors, the kernel "
                          f"{len(step.outputs)}")  # fmt: skip
    # Each output that the decomposition's steps make is written to the register the kernel's step wrote; one that
    # is an input or a constant returned as it is (or an output returned twice) stands for that register instead.
    written: dict[int, int] = {}
    aliased: list[tuple[int, int]] = []  # (the step's register, the decomposition's register holding its value)
    for reg, parent in zip(sub.outputs, step.outputs, strict=True):
        if reg in mapping or reg in written:
            aliased.append((parent, reg))
        else:
            written[reg] = parent
    mapping.update(written)
    steps = sub.kernel_steps
    for position, sub_step in enumerate(steps):
        for reg in sub_step.outputs:
            if reg not in mapping:
                mapping[reg] = out.register(sub.specs[reg], "step")
        inputs = tuple(
            (name, tuple(mapping[r] for r in reg) if isinstance(reg, tuple) else mapping[reg])
            for name, reg in sub_step.inputs
        )
        outputs = tuple(mapping[reg] for reg in sub_step.outputs)
        last = position == len(steps) - 1
        out.steps.append(dataclasses.replace(sub_step, inputs=inputs, outputs=outputs,
                                             free=step.free if last else ()))  # fmt: skip
    for parent, reg in aliased:
        out.renamed[parent] = mapping[reg]


def _trace(out: _Builder, where: str, step: Step, spec: DecompositionSpec) -> Program:
    """The decomposition's program, traced on tensors of the step's inputs' dtypes and shapes."""
    from tensorplug._tracing._function import Function

    backend = out.program.backend
    unique = list(dict.fromkeys(step.input_registers))
    constants = dict(out.constants)
    tensors: list[Tensor] = []
    for reg in unique:
        raw = constants.get(reg)
        if raw is None:  # an example of the register's dtype and shape: a decomposition's program depends on no value
            tensor_spec = out.specs[reg]
            assert tensor_spec.dtype is not None
            assert tensor_spec.shape is not None
            raw = backend.from_host(np.ones(tensor_spec.shape, dtype=np.dtype(tensor_spec.dtype)))
        tensors.append(wrap_storage(raw, backend))
    position = {reg: i for i, reg in enumerate(unique)}
    fn = resolve(spec.fn, f"decomposition of {step.kernel!r} (from {spec.source})")
    attrs = dict(step.attrs)

    def decomposition(*flat: Tensor) -> Any:
        inputs: dict[str, Any] = {
            name: [flat[position[r]] for r in reg] if isinstance(reg, tuple) else flat[position[reg]]
            for name, reg in step.inputs
        }
        return fn(inputs, attrs)

    traced: Function[..., Any] = Function(decomposition, max_traces=1, lower=False)
    traced.__name__ = f"decomposition of {step.kernel}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FunctionWarning)
        try:
            return traced.program(*tensors)
        except TensorplugError as exc:
            raise out.error(f"{where}: the decomposition cannot be traced: {exc}") from exc
