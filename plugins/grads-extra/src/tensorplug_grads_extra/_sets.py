"""The named override sets: factories that ``tp.use_gradients(name, **params)`` calls to get GradientSpecs.

Off until enabled, and then only for the kernels recorded inside the
``with`` block, in that thread (the core's scoping).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import tensorplug as tp
from tensorplug import GradientSpec, RegistrationError, Tensor
from tensorplug import kernel_names as K
from tensorplug.ops import abs, clip_by_value, greater, less_equal, logical_and, mul, sigmoid, sub, where

GradFunc = Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]

# -- straight_through -----------------------------------------------------------


def grad_identity(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """Straight through: the kernel is treated as the identity (Round, Floor, Ceil, Sign)."""
    return (dy,)


def grad_step_hardtanh(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """The hard-tanh straight-through estimator: dy where |x| <= 1, else 0 (``alpha`` is ignored)."""
    (x,) = saved
    return (where(less_equal(abs(x), 1.0), dy, 0.0),)


def straight_through() -> list[GradientSpec]:
    """Identity gradients for Round, Floor, Ceil and Sign; the hard-tanh estimator for Step.

    The quantisation-aware-training trick (Bengio et al. 2013): the forward
    pass rounds, the backward pass acts as if it had not. Step gets the
    estimator of binarised networks (Hubara et al. 2016), which passes the
    gradient only where |x| <= 1, so that weights far outside stop moving.
    """
    identity = [GradientSpec(name, grad_identity) for name in (K.ROUND, K.FLOOR, K.CEIL, K.SIGN)]
    return [*identity, GradientSpec(K.STEP, grad_step_hardtanh, inputs_to_save=("x",))]


# -- guided_backprop ------------------------------------------------------------


def grad_guided_relu(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    """dy where both the input was positive and dy is positive, else 0."""
    (x,) = saved
    return (where(logical_and(greater(x, 0.0), greater(dy, 0.0)), dy, 0.0),)


def guided_backprop() -> list[GradientSpec]:
    """Relu passes only positive gradients, and only where its input was positive (Springenberg et al. 2015).

    The interpretability trick: the gradient of a class score with respect
    to an image, with every negative signal stopped at each Relu, gives a
    sharp saliency map. It is not a gradient of anything: do not train with it.
    """
    return [GradientSpec(K.RELU, grad_guided_relu, inputs_to_save=("x",))]


# -- sigmoid_surrogate ----------------------------------------------------------


def sigmoid_surrogate(slope: float = 5.0) -> list[GradientSpec]:
    """Step and Sign differentiated as if they were the sigmoid ``sigmoid(slope * x)``, scaled to their jump.

    The surrogate gradient of spiking networks (Neftci, Mostafa & Zenke 2019): the
    derivative of ``sigmoid(slope * x)`` is ``slope * s * (1 - s)``, a bump of
    area 1 around 0. Step jumps by ``1 - alpha``, Sign by 2, so their
    gradients are that bump times the jump. ``slope`` sets how sharp the bump
    is (larger: closer to the true, zero-almost-everywhere derivative).
    """
    if not (isinstance(slope, int | float) and math.isfinite(slope) and slope > 0):
        raise RegistrationError(f"sigmoid_surrogate: slope must be a finite number > 0, got {slope!r}")
    sharpness = float(slope)

    def bump(x: Tensor) -> Tensor:
        s = sigmoid(mul(x, sharpness))
        return mul(mul(s, sub(1.0, s)), sharpness)

    def grad_step(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
        (x,) = saved
        return (mul(dy, mul(bump(x), 1.0 - attrs["alpha"])),)

    def grad_sign(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
        (x,) = saved
        return (mul(dy, mul(bump(x), 2.0)),)

    return [
        GradientSpec(K.STEP, grad_step, inputs_to_save=("x",)),
        GradientSpec(K.SIGN, grad_sign, inputs_to_save=("x",)),
    ]


# -- clip -----------------------------------------------------------------------


def clip(min: float, max: float, kernels: Sequence[str] | None = None) -> list[GradientSpec]:
    """The gradients of ``kernels`` (default: every kernel with a gradient) clipped elementwise to [min, max].

    Each kernel keeps the gradient that is active where the set is enabled
    (the core's, an always-on override, or an enclosing scope's, so
    ``clip`` inside ``straight_through`` clips the straight-through
    gradients) and its saved tensors; every entry it returns for a float
    input, lazy ones included (evaluated only when needed, as before), goes
    through ``tp.clip_by_value``. The clipped gradient is still written with
    ops, so it can be differentiated again.
    """
    for bound, value in (("min", min), ("max", max)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RegistrationError(f"clip: {bound} must be a number, got {value!r}")
    lo, hi = float(min), float(max)
    if not lo <= hi:
        raise RegistrationError(f"clip: min ({lo!r}) must be less than or equal to max ({hi!r})")
    if kernels is None:
        names = [row.kernel for row in tp.coverage().rows if row.differentiable]
    else:
        names = [kernels] if isinstance(kernels, str) else list(kernels)
    specs = []
    for name in names:
        spec = tp.get_gradient(name)
        if spec is None or spec.grad is None:
            state = "has no gradient" if spec is None else f"is declared not differentiable by {spec.source}"
            raise RegistrationError(f"clip: kernel {name!r} {state}, so there is no gradient to clip")
        clipped = _clipped(_resolve(spec.grad, name), lo, hi)
        specs.append(GradientSpec(name, clipped, spec.inputs_to_save, spec.outputs_to_save))
    return specs


def _clipped(grad: GradFunc, lo: float, hi: float) -> GradFunc:
    """``grad`` with every entry of its result clipped to [lo, hi]."""

    def clipped_grad(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        result = grad(dy, saved, attrs)
        if isinstance(result, dict):
            return {name: _clip_entry(entry, lo, hi) for name, entry in result.items()}
        if isinstance(result, Tensor) or result is None:
            result = (result,)
        return tuple(_clip_entry(entry, lo, hi) for entry in result)

    return clipped_grad


def _clip_entry(entry: Any, lo: float, hi: float) -> Any:
    """One entry of a gradient's result, clipped: a Tensor, None, a list (list inputs) or a lazy callable."""
    if isinstance(entry, Tensor):
        return clip_by_value(entry, lo, hi) if entry.dtype in (tp.float32, tp.float64) else entry
    if isinstance(entry, list | tuple):
        return [_clip_entry(item, lo, hi) for item in entry]
    if callable(entry):
        return lambda: _clip_entry(entry(), lo, hi)
    return entry  # None, or something malformed that the tape will report


def _resolve(grad: GradFunc | str, kernel_name: str) -> GradFunc:
    """A gradient function, importing it first when it is a lazy ``"module:attr"`` name."""
    if not isinstance(grad, str):
        return grad
    module_name, _, attr = grad.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    if not callable(value):
        raise RegistrationError(f"clip: the gradient of {kernel_name!r} ({grad!r}) is not callable")
    return value  # type: ignore[no-any-return]
