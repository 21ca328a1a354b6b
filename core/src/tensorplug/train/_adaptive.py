"""Optimizers that scale each coordinate by its gradients' history: :class:`Adam`, :class:`RMSProp`
and :class:`Adagrad`."""

from __future__ import annotations

import math
from typing import Any

from tensorplug._runtime._tensor import Tensor
from tensorplug._runtime._variable import Variable
from tensorplug.ops import add, div, fill, mul, sqrt, square, sub
from tensorplug.train._fused import APPLY_ADAGRAD, APPLY_ADAM, APPLY_RMS_PROP, fused_update
from tensorplug.train._optimizer import FLOAT_EPSILON, Optimizer, Update, _decay_rate, _flag, _non_negative, _positive

__all__ = ["Adagrad", "Adam", "RMSProp"]


class Adam(Optimizer):
    """Adam (Kingma and Ba): moving averages ``m`` of the gradient and ``v`` of its square, bias-corrected.

    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g**2``, then at step ``t``
    ``w -= learning_rate * m_hat / (sqrt(v_hat) + epsilon)`` with ``m_hat = m / (1 - beta1**t)`` and
    ``v_hat = v / (1 - beta2**t)``. The bias corrections are folded into two host scalars per step
    (``w -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon * sqrt(1 - beta2**t))``,
    the same quantity rearranged), so each variable costs no extra kernel for them.

    >>> import tensorplug as tp
    >>> w = tp.variable([1.0, -1.0], name="adam_doc_w")
    >>> _ = tp.train.Adam(0.1).minimize(lambda: tp.sum(w * w), [w])
    >>> [round(x, 4) for x in w.tolist()]
    [0.9, -0.9]
    """

    slot_names = ("m", "v")
    _hyper_parameters = ("learning_rate", "beta1", "beta2", "epsilon")

    def __init__(
        self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = FLOAT_EPSILON
    ) -> None:
        super().__init__()
        self.learning_rate = _non_negative("Adam", "learning_rate", learning_rate)
        self.beta1 = _decay_rate("Adam", "beta1", beta1)
        self.beta2 = _decay_rate("Adam", "beta2", beta2)
        self.epsilon = _non_negative("Adam", "epsilon", epsilon)

    def _corrections(self, step: int) -> tuple[float, float]:
        """The step size and epsilon of step ``step``, bias corrections folded in (host float64)."""
        root_correction2 = math.sqrt(1.0 - self.beta2**step)
        return self.learning_rate * root_correction2 / (1.0 - self.beta1**step), self.epsilon * root_correction2

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.beta1, 1.0 - self.beta1, self.beta2, 1.0 - self.beta2)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        by_step: dict[str, tuple[float | Tensor, ...]] = {}
        fused = fused_update(APPLY_ADAM)
        for variable, g, slots in updates:
            b1, rest1, b2, rest2 = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            step_size, epsilon = self._scalars(by_step, variable.dtype, step, self._corrections)
            if fused is not None:
                tensors = {"var": variable, "m": slots[0], "v": slots[1], "grad": g}
                new, slots[0], slots[1] = fused(tensors, (b1, rest1, b2, rest2, step_size, epsilon))
                variable.assign(new)
                continue
            m = add(mul(slots[0], b1), mul(g, rest1))
            v = add(mul(slots[1], b2), mul(square(g), rest2))
            slots[0], slots[1] = m, v
            variable.assign(sub(variable, mul(div(m, add(sqrt(v), epsilon)), step_size)))


class RMSProp(Optimizer):
    """RMSProp: divide the gradient by a moving root-mean-square of recent gradients, with optional momentum.

    ``ms = decay * ms + (1 - decay) * g**2``, ``mom = momentum * mom + learning_rate * g / sqrt(ms + epsilon)``,
    ``w -= mom``. Centered, the mean gradient ``mg`` is tracked too and ``ms - mg**2`` replaces ``ms``:
    ``sqrt(ms - mg**2 + epsilon)``, as TensorFlow has it (TensorFlow.js computes ``sqrt(ms - (mg**2 + epsilon))``,
    which is NaN wherever the gradient has been zero; that is the one place this class differs from it).

    >>> import tensorplug as tp
    >>> tp.train.RMSProp(0.01, centered=True)
    RMSProp(learning_rate=0.01, decay=0.9, momentum=0.0, epsilon=1e-07, centered=True)
    """

    _hyper_parameters = ("learning_rate", "decay", "momentum", "epsilon", "centered")

    def __init__(
        self,
        learning_rate: float,
        decay: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = FLOAT_EPSILON,
        centered: bool = False,
    ) -> None:
        super().__init__()
        self.learning_rate = _non_negative("RMSProp", "learning_rate", learning_rate)
        self.decay = _decay_rate("RMSProp", "decay", decay)
        self.momentum = _non_negative("RMSProp", "momentum", momentum)
        self.epsilon = _non_negative("RMSProp", "epsilon", epsilon)
        self.centered = _flag("RMSProp", "centered", centered)
        self.slot_names = ("rms", "momentum", "mg") if centered else ("rms", "momentum")

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate, self.decay, 1.0 - self.decay, self.momentum, self.epsilon)

    def _structure(self) -> tuple[Any, ...]:
        return (self.centered, bool(self.momentum))

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        centered, with_momentum = self._structure()
        fused = fused_update(APPLY_RMS_PROP)
        for variable, g, slots in updates:
            scalars = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            if fused is not None:
                tensors = {"var": variable, "ms": slots[0], "mom": slots[1], "grad": g}
                if centered:
                    tensors["mg"] = slots[2]
                attrs = {"centered": centered, "use_momentum": with_momentum}
                outputs = fused(tensors, scalars, attrs)
                slots[:] = outputs[1:]
                variable.assign(outputs[0])
                continue
            lr, rho, rest, momentum, epsilon = scalars
            ms = add(mul(slots[0], rho), mul(square(g), rest))
            slots[0] = ms
            if centered:
                mg = add(mul(slots[2], rho), mul(g, rest))
                slots[2] = mg
                ms = sub(ms, square(mg))
            step_direction = div(mul(g, lr), sqrt(add(ms, epsilon)))
            if with_momentum:
                step_direction = add(mul(slots[1], momentum), step_direction)
            slots[1] = step_direction
            variable.assign(sub(variable, step_direction))


class Adagrad(Optimizer):
    """Adagrad: scale each coordinate's step by the root of its summed squared gradients.

    ``acc += g**2``, ``w -= learning_rate * g / sqrt(acc + 1e-7)``, the accumulator starting at
    ``initial_accumulator_value``.

    >>> import tensorplug as tp
    >>> tp.train.Adagrad(0.5)
    Adagrad(learning_rate=0.5, initial_accumulator_value=0.1)
    """

    slot_names = ("accumulator",)
    _hyper_parameters = ("learning_rate", "initial_accumulator_value")

    def __init__(self, learning_rate: float, initial_accumulator_value: float = 0.1) -> None:
        super().__init__()
        self.learning_rate = _non_negative("Adagrad", "learning_rate", learning_rate)
        self.initial_accumulator_value = _positive("Adagrad", "initial_accumulator_value", initial_accumulator_value)

    def _init_slots(self, variable: Variable) -> list[Tensor]:
        return [fill(variable.shape, self.initial_accumulator_value, variable.dtype)]

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate,)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        fused = fused_update(APPLY_ADAGRAD)
        for variable, g, slots in updates:
            scalars = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            if fused is not None:
                new, slots[0] = fused({"var": variable, "accum": slots[0], "grad": g}, (*scalars, FLOAT_EPSILON))
                variable.assign(new)
                continue
            (lr,) = scalars
            accumulator = add(slots[0], square(g))
            slots[0] = accumulator
            variable.assign(sub(variable, mul(div(g, sqrt(add(accumulator, FLOAT_EPSILON))), lr)))
