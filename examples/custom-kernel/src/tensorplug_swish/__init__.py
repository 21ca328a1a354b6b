"""Swish, ``x * sigmoid(beta * x)``, as a custom kernel of tensorplug: the worked example of docs/custom-kernels.md.

>>> import tensorplug as tp
>>> import tensorplug_swish
>>> [round(v, 4) for v in tensorplug_swish.swish(tp.tensor([0.0, 1.0]), beta=2.0).tolist()]
[0.0, 0.8808]

The distribution brings, through its plugin module (``tensorplug_swish.plugin``), the kernel for numpy, its
decomposition (which every other backend runs, as its own ops), its gradient, and how ONNX writes it.
"""

from __future__ import annotations

import tensorplug as tp

KERNEL = "Swish"
"""The kernel's name: ``tp.run_kernel("Swish", {"x": x}, {"beta": beta})``."""

__all__ = ["KERNEL", "swish"]


def swish(x: tp.Tensor, beta: float = 1.0) -> tp.Tensor:
    """``x * sigmoid(beta * x)``, elementwise, for float32 and float64 tensors, on any backend."""
    out = tp.run_kernel(KERNEL, {"x": x}, {"beta": float(beta)})
    assert isinstance(out, tp.Tensor)  # (one output)
    return out
