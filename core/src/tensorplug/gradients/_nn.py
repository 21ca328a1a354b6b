"""Gradients of the neural-network kernels."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._registry import GradientSpec
from tensorplug._tensor import Tensor
from tensorplug.ops import mul, sub, sum


def grad_softmax(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """dx = y * (dy - sum(dy * y, dim)), from the saved output y."""
    (y,) = saved
    return (mul(y, sub(dy, sum(mul(dy, y), attrs["dim"], keepdims=True))),)


GRADIENTS = [GradientSpec(K.SOFTMAX, grad_softmax, outputs_to_save=(0,))]
