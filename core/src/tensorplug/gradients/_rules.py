"""One-line gradient rules: the ``GradientSpec`` of a simple kernel from a formula, as HIPS autograd's ``defvjp``.

A rule is the formula of the gradient as a function of ``dy`` and what it needs:

>>> from tensorplug import kernel_names as K
>>> from tensorplug.ops import mul, square, sub
>>> spec = unary(K.TANH, lambda dy, y: mul(dy, sub(1.0, square(y))), saves="y")
>>> spec.kernel_name, spec.inputs_to_save, spec.outputs_to_save
('Tanh', (), (0,))

``unary`` saves the input ``x`` (``saves="x"``), the output ``y``
(``saves="y"``) or nothing (the rule takes ``dy`` alone); ``binary`` saves
both inputs and sums each input's gradient back to that input's shape
(broadcasting), computing it only when that input needs one. The result is
a plain ``GradientSpec``, the same as one written by hand: what it saves, the
ops it runs and where it is registered do not depend on how it was written.
A gradient that needs ``attrs``, a shared intermediate or several outputs is
written as a ``grad(dy, saved, attrs)`` function instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from tensorplug._runtime._registry import GradientSpec
from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import sum_to_shape

__all__ = ["binary", "unary"]

_SAVES: dict[str | None, tuple[tuple[str, ...], tuple[int, ...]]] = {
    None: ((), ()),
    "x": (("x",), ()),
    "y": ((), (0,)),
}


def unary(
    kernel: str,
    rule: Callable[..., Tensor],
    *,
    saves: Literal["x", "y"] | None = None,
    override: bool = False,
) -> GradientSpec:
    """The gradient of the one-input kernel ``kernel`` (input ``x``, output ``y``): ``rule(dy, x)`` or ``rule(dy, y)``
    as ``saves`` says, or ``rule(dy)`` when it saves nothing. ``rule`` is written with ops (so that it can be
    differentiated again) and returns the gradient with respect to ``x``."""
    if saves not in _SAVES:
        raise ValueError(f"unary({kernel!r}): saves={saves!r}; it is 'x' (the input), 'y' (the output) or None")
    inputs_to_save, outputs_to_save = _SAVES[saves]

    def grad(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
        return (rule(dy, *saved),)

    _name(grad, kernel)
    return GradientSpec(kernel, grad, inputs_to_save, outputs_to_save, override=override)


def binary(
    kernel: str,
    rule_a: Callable[[Tensor, Any, Any], Tensor],
    rule_b: Callable[[Tensor, Any, Any], Tensor],
    *,
    inputs: tuple[str, str] = ("a", "b"),
    override: bool = False,
) -> GradientSpec:
    """The gradient of the broadcasting two-input kernel ``kernel``: ``rule_a(dy, a, b)`` for the first input and
    ``rule_b(dy, a, b)`` for the second (``inputs`` names them), each summed back to its input's shape and computed
    only when that input needs a gradient."""

    def grad(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, Any]:
        a, b = saved
        return lambda: sum_to_shape(rule_a(dy, a, b), a.shape), lambda: sum_to_shape(rule_b(dy, a, b), b.shape)

    _name(grad, kernel)
    return GradientSpec(kernel, grad, inputs, override=override)


def _name(grad: Callable[..., Any], kernel: str) -> None:
    """Name the function after its kernel, so that a traceback or a listing of gradients says which it is."""
    grad.__name__ = f"grad_{kernel}"
    grad.__qualname__ = f"{grad.__qualname__.rpartition('.<locals>.')[0]}({kernel!r})"
