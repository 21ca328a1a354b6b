"""A test backend with a whole-program compiler whose float results are one ulp off eager, as a fusing compiler's
are (XLA contracts ``a * b + c`` to one rounding): numpy storage, every numpy kernel, and ``compile`` running each
step's kernel, then moving every float output of the program one ulp up. ``register(compile_ulps)`` declares the
tolerance; ``lowering="steps"`` makes the same one-ulp error through ``lower_step`` instead, which no tolerance
covers. Used by tests/unit/test_conformance_traced.py and tests/unit/test_pytest_plugin.py (in a subprocess).
"""

from __future__ import annotations

import pkgutil
from typing import Any

import numpy as np

import tensorplug as tp

NAME = "fusing"


def one_ulp_up(raw: Any) -> Any:
    """``raw`` with every float element moved to the next float up (integers and booleans as they are)."""
    array = np.asarray(raw)
    if array.dtype.kind != "f":
        return raw
    return np.nextafter(array, np.array(np.inf, array.dtype))


class FusingBackend(tp.Backend):
    """numpy storage; ``compile`` gives eager's values one ulp up."""

    name = NAME

    def from_host(self, array: np.ndarray) -> Any:
        return np.array(array, copy=True)

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw)

    def dtype_of(self, raw: Any) -> str:
        return str(np.asarray(raw).dtype.name)

    def compile(self, program: tp.Program) -> Any:
        def replay(arguments: Any, variables: Any, host: Any) -> Any:
            regs = program.bind(arguments, variables, host)
            for step in program.kernel_steps:
                out = step.function(step.input_values(regs), step.attrs, program.backend)
                regs.update(zip(step.outputs, out if step.sequence else (out,), strict=True))
            outputs = tuple(one_ulp_up(regs[r]) for r in program.outputs)
            return outputs, tuple(regs[r] for _, r in program.updates)

        return replay


class SteppingBackend(FusingBackend):
    """The same one-ulp error, made by a step lowering (each step's kernel, one ulp up)."""

    def compile(self, program: tp.Program) -> Any:
        return None

    def lower_step(self, program: tp.Program, index: int) -> Any:
        step = program.steps[index]
        if not isinstance(step, tp.Step) or step.sequence:
            return None
        names = [name for name, _ in step.inputs]

        def call(*inputs: Any) -> Any:
            return one_ulp_up(step.function(dict(zip(names, inputs, strict=True)), step.attrs, program.backend))

        return tp.StepLowering(call)


def register(compile_ulps: int, lowering: str = "compile") -> None:
    """Register the backend with every numpy kernel, declaring ``compile_ulps``; ``lowering`` is "compile" (the
    one-ulp error comes from ``compile``) or "steps" (from ``lower_step``)."""
    from tensorplug.kernel_factories import catalogue_kernels

    base = FusingBackend if lowering == "compile" else SteppingBackend
    backend_class = type("DeclaredFusingBackend", (base,), {"compile_ulps": compile_ulps})
    tp.register_backend(NAME, backend_class, priority=-5)
    for spec in catalogue_kernels(NAME, "tensorplug_numpy"):
        fn = pkgutil.resolve_name(spec.kernel) if isinstance(spec.kernel, str) else spec.kernel
        tp.register_kernel(spec.kernel_name, NAME, fn)


def unregister() -> None:
    for spec in tp.kernels_for_backend(NAME):
        tp.unregister_kernel(spec.kernel_name, NAME)
    tp.remove_backend(NAME)
