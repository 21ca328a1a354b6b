"""Gradient descent without per-coordinate scaling: :class:`SGD` and :class:`Momentum`."""

from __future__ import annotations

from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import add, mul, sub
from tensorplug.train._fused import APPLY_GRADIENT_DESCENT, APPLY_MOMENTUM, fused_update
from tensorplug.train._optimizer import Optimizer, Update, _flag, _non_negative

__all__ = ["SGD", "Momentum"]


class SGD(Optimizer):
    """Plain gradient descent: ``w -= learning_rate * g``.

    >>> import tensorplug as tp
    >>> w = tp.variable(1.0, name="sgd_doc_w")
    >>> tp.train.SGD(0.25).minimize(lambda: w * w, [w]).item(), w.item()
    (1.0, 0.5)
    """

    _hyper_parameters = ("learning_rate",)

    def __init__(self, learning_rate: float) -> None:
        super().__init__()
        self.learning_rate = _non_negative("SGD", "learning_rate", learning_rate)

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate,)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        fused = fused_update(APPLY_GRADIENT_DESCENT)
        for variable, g, _ in updates:
            scalars = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            if fused is not None:
                (new,) = fused({"var": variable, "delta": g}, scalars)
                variable.assign(new)
            else:
                (lr,) = scalars
                variable.assign(sub(variable, mul(g, lr)))


class Momentum(Optimizer):
    """Gradient descent with momentum: ``a = momentum * a + g``, then ``w -= learning_rate * a`` (Nesterov:
    ``w -= learning_rate * (g + momentum * a)``).

    >>> import tensorplug as tp
    >>> tp.train.Momentum(0.1, 0.9)
    Momentum(learning_rate=0.1, momentum=0.9, use_nesterov=False)
    """

    slot_names = ("momentum",)
    _hyper_parameters = ("learning_rate", "momentum", "use_nesterov")

    def __init__(self, learning_rate: float, momentum: float, use_nesterov: bool = False) -> None:
        super().__init__()
        self.learning_rate = _non_negative("Momentum", "learning_rate", learning_rate)
        self.momentum = _non_negative("Momentum", "momentum", momentum)
        self.use_nesterov = _flag("Momentum", "use_nesterov", use_nesterov)

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate, self.momentum)

    def _structure(self) -> tuple[Any, ...]:
        return (self.use_nesterov,)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        (nesterov,) = self._structure()
        fused = fused_update(APPLY_MOMENTUM)
        for variable, g, slots in updates:
            scalars = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            if fused is not None:
                tensors = {"var": variable, "accum": slots[0], "grad": g}
                new, slots[0] = fused(tensors, scalars, {"use_nesterov": nesterov})
                variable.assign(new)
                continue
            lr, m = scalars
            accumulation = add(mul(slots[0], m), g)
            slots[0] = accumulation
            direction = add(g, mul(accumulation, m)) if nesterov else accumulation
            variable.assign(sub(variable, mul(direction, lr)))
