"""How the numpy backend runs a chain of steps as one call (``NumpyBackend.fuse``).

Two kinds of group, each giving the steps' bits (the same NumPy calls, in the same order):

- **The relu gradient**: ``Step(x, alpha=0)`` then a ``Multiply`` by it becomes ``np.multiply(dy, x > 0)``:
  NumPy casts the comparison's booleans to 1.0 and 0.0 inside the multiplication, which are the values
  ``Step`` makes, so the float mask is never made. An ``x`` holding a NaN (``Step`` keeps NaN) takes the
  kernel's own path at that call.
- **Chains of ufuncs over one temporary**: elementwise steps whose functions are NumPy ufuncs (this plugin's,
  or any kernel's that declares one: ``kernel.applies``) and whose outputs all have the chain's output dtype and
  shape; the first writes a new array (or a dead buffer, ``into``), each next one writes into it (``out=``).
  Worth it from ``MIN_FUSED_SIZE`` elements; when an operand is not C-contiguous at a call, the steps run one by
  one (a new array's memory order follows its operands', and later reductions and matmuls see that order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.kernel_factories import applied_function
from tensorplug_numpy import _unary
from tensorplug_numpy._lower import ELEMENTWISE

MIN_FUSED_SIZE = 1 << 14
"""Elements from which a chain of ufuncs runs over one temporary: below it a new array costs no more than the
check of its operands' layout."""


def fuse(program: tp.Program, chain: tuple[int, ...]) -> tp.StepLowering | None:
    steps = [program.steps[i] for i in chain]
    if not all(isinstance(step, tp.Step) for step in steps):
        return None
    kernel_steps: list[tp.Step] = steps  # type: ignore[assignment]
    inputs = program.chain_inputs(chain)
    return _relu_gradient(program, kernel_steps, inputs) or _ufunc_chain(program, kernel_steps, inputs)


def _ufunc(step: tp.Step) -> np.ufunc | None:
    declared = ELEMENTWISE.get(step.function) or applied_function(step.function)
    return declared if isinstance(declared, np.ufunc) else None


def _relu_gradient(program: tp.Program, steps: list[tp.Step], inputs: tuple[int, ...]) -> tp.StepLowering | None:
    if len(steps) != 2:
        return None
    mask_step, multiply = steps
    if mask_step.function is not _unary.step or mask_step.attrs.get("alpha") != 0:
        return None
    if _ufunc(multiply) is not np.multiply:
        return None
    (x,), (made,) = mask_step.input_registers, mask_step.outputs
    a, b = multiply.input_registers
    specs = program.specs
    spec = specs[multiply.outputs[0]]
    if (
        spec.dtype not in ("float16", "float32", "float64")
        or not spec.shape
        or not spec.size
        or any(specs[r] != spec for r in (x, a, b, made))
    ):
        return None
    mask_first = a == made
    x_at, dy_at = inputs.index(x), inputs.index(b if mask_first else a)
    kernel, attrs, backend = mask_step.function, mask_step.attrs, program.backend

    smallest, greater, product = np.minimum.reduce, np.greater, np.multiply

    def mask(x_raw: np.ndarray) -> Any:
        lowest = smallest(x_raw, None)
        if lowest != lowest:  # a NaN (NaN propagates through the min): Step keeps it, the kernel's own values
            return kernel({"x": x_raw}, attrs, backend)
        return greater(x_raw, 0)

    if mask_first:

        def call(*raws: np.ndarray) -> Any:
            return product(mask(raws[x_at]), raws[dy_at])

    else:

        def call(*raws: np.ndarray) -> Any:
            return product(raws[dy_at], mask(raws[x_at]))

    def into(out: np.ndarray, *raws: np.ndarray) -> Any:
        m, dy = mask(raws[x_at]), raws[dy_at]
        first, second = (m, dy) if mask_first else (dy, m)
        if not (m.flags.c_contiguous and dy.flags.c_contiguous):
            return product(first, second)
        return product(first, second, out=out)

    large = spec.size >= MIN_FUSED_SIZE
    return tp.StepLowering(call, pure=True, fresh=True, reads_only=True, into=into if large else None)


def _ufunc_chain(program: tp.Program, steps: list[tp.Step], inputs: tuple[int, ...]) -> tp.StepLowering | None:
    ufuncs = [_ufunc(step) for step in steps]
    spec = program.specs[steps[-1].outputs[0]]
    if (
        any(u is None for u in ufuncs)
        or spec.size < MIN_FUSED_SIZE
        or any(program.specs[step.outputs[0]] != spec for step in steps)
    ):
        return None
    made = [step.outputs[0] for step in steps]
    # each step's operands: a position among the group's inputs, or None for the previous step's result
    places = [
        tuple(None if k > 0 and r == made[k - 1] else inputs.index(r) for r in step.input_registers)
        for k, step in enumerate(steps)
    ]
    plan = list(zip(ufuncs, places, strict=True))
    return tp.StepLowering(
        _chain_call(plan, fresh=True), pure=True, fresh=True, reads_only=True, into=_chain_call(plan, fresh=False)
    )


Plan = Sequence[tuple[Any, tuple[int | None, ...]]]


def _chain_call(plan: Plan, *, fresh: bool) -> Callable[..., Any]:
    """The group's call (``fresh``: its first step makes a new array) or its ``into`` (the first step writes into
    ``out``); both run the steps one by one, each into a new array, when an operand is not C-contiguous."""
    (first, first_places), rest = plan[0], plan[1:]

    later = [p for _, places in rest for p in places if p is not None]

    def run(out: np.ndarray | None, raws: Sequence[np.ndarray]) -> Any:
        if out is not None and any(raws[p] is out for p in later):
            out = None  # a later step still reads the buffer: the first step makes a new array
        for raw in raws:
            if not raw.flags.c_contiguous:
                t = first(*[raws[p] for p in first_places])  # type: ignore[index]
                for ufunc, places in rest:
                    t = ufunc(*[t if p is None else raws[p] for p in places])
                return t
        t = first(*[raws[p] for p in first_places], out=out)  # type: ignore[index]  # out=None: a new array
        for ufunc, places in rest:
            ufunc(*[t if p is None else raws[p] for p in places], out=t)
        return t

    if fresh:
        return lambda *raws: run(None, raws)
    return lambda out, *raws: run(out, raws)
