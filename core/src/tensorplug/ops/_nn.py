"""Neural-network ops: softmax (a kernel) and the numerically stable composites."""

from __future__ import annotations

from typing import Any

from tensorplug import kernel_names as K
from tensorplug._engine import dispatch
from tensorplug._state import no_grad
from tensorplug._tensor import Tensor
from tensorplug.ops._binary import sub
from tensorplug.ops._convert import as_tensor, check_float, normalize_axes, normalize_axis
from tensorplug.ops._reduction import max as max_
from tensorplug.ops._reduction import sum as sum_
from tensorplug.ops._shape import reshape
from tensorplug.ops._unary import exp, log

__all__ = ["softmax", "log_sum_exp", "log_softmax"]


def softmax(logits: Any, axis: int = -1) -> Tensor:
    """exp(logits) normalised to sum to 1 along ``axis``."""
    logits = as_tensor(logits)
    check_float("softmax", logits)
    dim = normalize_axis("softmax", axis, logits.ndim)
    return dispatch(K.SOFTMAX, {"logits": logits}, {"dim": dim})


def log_sum_exp(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """log(sum(exp(x), axis)), computed stably by subtracting the maximum first."""
    x = as_tensor(x)
    check_float("log_sum_exp", x)
    axes = normalize_axes("log_sum_exp", axis, x.ndim)
    with no_grad():  # the shift is a constant: its gradient cancels exactly
        shift = max_(x, axes, keepdims=True)
    shifted = sub(x, shift)
    result = log(sum_(exp(shifted), axes, keepdims=True)) + shift
    if keepdims:
        return result
    return reshape(result, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def log_softmax(logits: Any, axis: int = -1) -> Tensor:
    """log(softmax(logits)), computed stably as (x - max) - log(sum(exp(x - max)))."""
    logits = as_tensor(logits)
    check_float("log_softmax", logits)
    dim = normalize_axis("log_softmax", axis, logits.ndim)
    with no_grad():  # log_softmax does not change when every logit shifts: no gradient flows here
        shift = max_(logits, dim, keepdims=True)
    shifted = sub(logits, shift)
    return sub(shifted, log(sum_(exp(shifted), dim, keepdims=True)))
