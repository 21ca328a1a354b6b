"""A tiny export format for testing the exporter conformance kit without any format's library: "numpy-steps".

The exporter writes a program of one-input kernels (``Exp`` and ``Neg``) as a list of NumPy calls on
registers; :func:`run` runs such a list. It refuses float64 with "numpy-steps writes KERNEL for float32 only"
and any other kernel. :func:`runner` makes the kit's runner, with a wrong ``Exp`` or other refusal patterns
when asked. Used by tests/unit/test_export_kit.py, in the test process and in a pytest subprocess (through
``register``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.testing import ExportRunner

FORMAT = "numpy-steps"
FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"Exp": np.exp, "Neg": np.negative}
REFUSALS = {"float32 only": r"numpy-steps writes \w+ for float32 only"}


@dataclass(frozen=True)
class Steps:
    """What the exporter makes: the argument registers, (kernel, input, output) per step, the output registers."""

    arguments: tuple[int, ...]
    constants: Mapping[int, np.ndarray]
    steps: tuple[tuple[str, int, int], ...]
    outputs: tuple[int, ...]


def export(request: tp.ExportRequest) -> Steps:
    steps = []
    for step in request.program.steps:
        if not isinstance(step, tp.Step) or step.kernel not in FUNCTIONS:
            raise tp.ExportError(f"{request.where()}: numpy-steps does not write {step!r}")
        ((_, register),) = step.inputs
        assert isinstance(register, int)
        if request.program.specs[register].dtype == "float64":
            raise tp.ExportError(f"{request.where()}: numpy-steps writes {step.kernel} for float32 only")
        steps.append((step.kernel, register, step.outputs[0]))
    return Steps(request.program.arguments, dict(request.constant_values), tuple(steps), request.program.outputs)


def run(
    program: Steps, inputs: list[np.ndarray], functions: Mapping[str, Callable[[Any], Any]] = FUNCTIONS
) -> list[Any]:
    registers: dict[int, Any] = dict(program.constants)
    registers.update(zip(program.arguments, inputs, strict=True))
    with np.errstate(over="ignore"):
        for kernel, source, target in program.steps:
            registers[target] = functions[kernel](registers[source])
    return [registers[r] for r in program.outputs]


def runner(*, wrong_exp: bool = False, refusals: Mapping[str, str] = REFUSALS) -> ExportRunner:
    """The kit's runner for the format; ``wrong_exp`` computes exp(|x|) for Exp, as a broken runtime would."""
    functions = {**FUNCTIONS, "Exp": lambda x: np.exp(np.abs(x))} if wrong_exp else FUNCTIONS
    return ExportRunner(
        run=lambda program, inputs: run(program, inputs, functions),
        refusals=refusals,
        kernels=frozenset(FUNCTIONS),
        name="numpy-steps' runner",
    )


def register() -> None:
    tp.register_exporter(FORMAT, export, "one-input kernels as NumPy calls, for testing the kit")
