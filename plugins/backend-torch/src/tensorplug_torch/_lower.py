"""How the torch backend runs each step of a ``tp.function`` program (``TorchBackend.lower_step``).

Written against the published lowering contract alone (``tp.Program``, ``tp.Step``, ``tp.TensorSpec``,
``tp.StepLowering``, ``tp.Constant``): the core does the folding, the freeing and the code generation. What
goes is the kernel wrapper around each call (its inputs dict and attrs lookups): an elementwise kernel made
with ``kernel_factories.unary`` / ``binary`` runs as the torch function it applies (``kernel.applies``), and
the float matmul, the reductions over some axes and reshapes as the torch calls their kernels make, so the
values are the kernel's bit for bit. A kernel registered by anyone else that declares the function it applies
(``kernel.applies``) runs as that function. Every other step (a fallback, integer matmuls, which take another
path on accelerators) calls its kernel. Nothing writes into a buffer: ``into`` is not offered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

import tensorplug as tp
from tensorplug.kernel_factories import applied_function, applied_functions
from tensorplug_torch import _binary, _linalg, _reduction, _shape, _unary

ELEMENTWISE = applied_functions(_unary, _binary)
"""This plugin's elementwise kernels made by the core's factories -> the torch function each applies."""

REDUCTIONS: dict[Any, tuple[Callable[..., Any], bool]] = {
    _reduction.sum_: (torch.sum, True),  # the kernel passes dtype=x.dtype (torch would widen integer sums)
    _reduction.max_: (torch.amax, False),
    _reduction.min_: (torch.amin, False),
}


def _torch_dtype(spec: tp.TensorSpec) -> torch.dtype:
    dtype = getattr(torch, spec.dtype or "")
    assert isinstance(dtype, torch.dtype)
    return dtype


def lower_step(program: tp.Program, index: int) -> tp.StepLowering | tp.Constant | None:
    step = program.steps[index]
    assert isinstance(step, tp.Step)
    function = step.function
    fn = ELEMENTWISE.get(function)
    if fn is not None:
        return tp.StepLowering(fn, pure=True, fresh=True, reads_only=True)
    declared = applied_function(function)  # another's kernel that declares the function it applies: a user's
    if declared is not None:
        return tp.StepLowering(declared)  # called as the kernel would call it; nothing more is known of it
    if function in REDUCTIONS and step.attrs["axis"]:  # no axis: the kernel returns x itself
        reduce, keep_dtype = REDUCTIONS[function]
        kwargs: dict[str, Any] = {"keepdim": step.attrs["keep_dims"]}
        if keep_dtype:
            kwargs["dtype"] = _torch_dtype(program.specs[step.input_registers[0]])
        return tp.StepLowering(reduce, args=(step.attrs["axis"],), kwargs=kwargs, pure=True, reads_only=True)
    if function is _linalg.batch_mat_mul and (program.specs[step.input_registers[0]].dtype or "").startswith("float"):
        return tp.StepLowering(_matmul(step.attrs["transpose_a"], step.attrs["transpose_b"]), pure=True)
    if function is _shape.reshape:
        return tp.StepLowering(torch.Tensor.reshape, args=(step.attrs["shape"],), pure=True)
    if function is _shape.ones_like or function is _shape.zeros_like:
        spec = program.specs[step.outputs[0]]
        if spec.shape is not None and len(spec.shape) <= 1:  # the seed of every gradient: made once
            make = torch.ones if function is _shape.ones_like else torch.zeros
            return tp.Constant(make(spec.shape, dtype=_torch_dtype(spec), device=program.backend.device))
    return None


def _matmul(transpose_a: bool, transpose_b: bool) -> Callable[..., Any]:
    if not (transpose_a or transpose_b):
        return torch.matmul

    def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.mT if transpose_a else a, b.mT if transpose_b else b)

    return matmul
