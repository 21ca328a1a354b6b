"""What is written with ops, so every backend runs it: the decomposition and the gradient."""

from __future__ import annotations

from typing import Any

import tensorplug as tp


def swish_ops(inputs: dict[str, Any], attrs: dict[str, Any]) -> tp.Tensor:
    """The decomposition: the kernel convention one level up (Tensors in, a Tensor out, computed with ops)."""
    x: tp.Tensor = inputs["x"]
    return x * tp.sigmoid(x * attrs["beta"])


def swish_grad(dy: tp.Tensor, saved: tuple[tp.Tensor, ...], attrs: dict[str, Any]) -> tuple[tp.Tensor]:
    """d/dx x*s(bx) = s(bx) + b*x*s(bx)*(1 - s(bx)), with s the sigmoid."""
    (x,) = saved
    beta = attrs["beta"]
    s = tp.sigmoid(x * beta)
    return (dy * (s + x * beta * s * (1.0 - s)),)
