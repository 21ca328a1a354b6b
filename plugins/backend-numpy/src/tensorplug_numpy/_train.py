"""The optimizers' fused updates (``ApplyGradientDescent``, ``ApplyMomentum``, ``ApplyAdam``; see
``tensorplug.train._fused``): the NumPy calls the optimizers' ops would make, in their order, so the same bits,
each result written into a buffer the kernel allocated itself. The inputs are never written."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import quiet


def _into(ufunc: np.ufunc, a: Any, b: Any, out: Any) -> Any:
    """``ufunc(a, b)`` written into ``out``, a fresh array of the result's shape and dtype (a 0-d result is a
    NumPy scalar, which cannot be written: then a new one)."""
    if isinstance(out, np.ndarray):
        return ufunc(a, b, out=out)
    return ufunc(a, b)


@quiet
def apply_gradient_descent(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    step = np.multiply(inputs["delta"], inputs["alpha"])
    return _into(np.subtract, inputs["var"], step, step)


@quiet
def apply_momentum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad, momentum = inputs["grad"], inputs["momentum"]
    accum = np.multiply(inputs["accum"], momentum)
    accum = _into(np.add, accum, grad, accum)
    if attrs["use_nesterov"]:
        direction = np.multiply(accum, momentum)
        direction = _into(np.add, grad, direction, direction)
        step = _into(np.multiply, direction, inputs["lr"], direction)
    else:
        step = np.multiply(accum, inputs["lr"])
    return [_into(np.subtract, inputs["var"], step, step), accum]


@quiet
def apply_adam(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad = inputs["grad"]
    m = np.multiply(inputs["m"], inputs["beta1"])
    scratch = np.multiply(grad, inputs["one_minus_beta1"])
    m = _into(np.add, m, scratch, m)
    v = np.multiply(inputs["v"], inputs["beta2"])
    scratch = np.square(grad, out=scratch) if isinstance(scratch, np.ndarray) else np.square(grad)
    scratch = _into(np.multiply, scratch, inputs["one_minus_beta2"], scratch)
    v = _into(np.add, v, scratch, v)
    scratch = np.sqrt(v, out=scratch) if isinstance(scratch, np.ndarray) else np.sqrt(v)
    scratch = _into(np.add, scratch, inputs["epsilon"], scratch)
    scratch = _into(np.divide, m, scratch, scratch)
    scratch = _into(np.multiply, scratch, inputs["step_size"], scratch)
    return [_into(np.subtract, inputs["var"], scratch, scratch), m, v]
