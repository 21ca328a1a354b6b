"""The optimizers' fused updates, which the backend offers through ``fused_update`` (``ApplyGradientDescent``,
``ApplyMomentum``, ``ApplyAdam``, ``ApplyRMSProp``, ``ApplyAdagrad``; see ``tensorplug.train._fused``): the NumPy
calls the optimizers' ops would make, in their order, so the same bits, each result written into a buffer the
update allocated itself. The inputs are never written. ``tp.testing.check_fused_updates`` checks them against each
optimizer's update rule and the ops (the backend's tests run it case by case)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorplug_numpy._factories import quiet


def _into(ufunc: np.ufunc, *args: Any, out: Any) -> Any:
    """``ufunc(*args)`` written into ``out``, a fresh array of the result's shape and dtype (a 0-d result is a
    NumPy scalar, which cannot be written: then a new one)."""
    if isinstance(out, np.ndarray):
        return ufunc(*args, out=out)
    return ufunc(*args)


@quiet
def apply_gradient_descent(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    step = np.multiply(inputs["delta"], inputs["alpha"])
    return [_into(np.subtract, inputs["var"], step, out=step)]


@quiet
def apply_momentum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad, momentum = inputs["grad"], inputs["momentum"]
    accum = np.multiply(inputs["accum"], momentum)
    accum = _into(np.add, accum, grad, out=accum)
    if attrs["use_nesterov"]:
        direction = np.multiply(accum, momentum)
        direction = _into(np.add, grad, direction, out=direction)
        step = _into(np.multiply, direction, inputs["lr"], out=direction)
    else:
        step = np.multiply(accum, inputs["lr"])
    return [_into(np.subtract, inputs["var"], step, out=step), accum]


@quiet
def apply_adam(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad = inputs["grad"]
    m = np.multiply(inputs["m"], inputs["beta1"])
    scratch = np.multiply(grad, inputs["one_minus_beta1"])
    m = _into(np.add, m, scratch, out=m)
    v = np.multiply(inputs["v"], inputs["beta2"])
    scratch = _into(np.square, grad, out=scratch)
    scratch = _into(np.multiply, scratch, inputs["one_minus_beta2"], out=scratch)
    v = _into(np.add, v, scratch, out=v)
    scratch = _into(np.sqrt, v, out=scratch)
    scratch = _into(np.add, scratch, inputs["epsilon"], out=scratch)
    scratch = _into(np.divide, m, scratch, out=scratch)
    scratch = _into(np.multiply, scratch, inputs["step_size"], out=scratch)
    return [_into(np.subtract, inputs["var"], scratch, out=scratch), m, v]


@quiet
def apply_rms_prop(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad, rho, rest = inputs["grad"], inputs["rho"], inputs["one_minus_rho"]
    ms = np.multiply(inputs["ms"], rho)
    scratch = np.square(grad)
    scratch = _into(np.multiply, scratch, rest, out=scratch)
    ms = _into(np.add, ms, scratch, out=ms)
    new_slots = [ms]
    if attrs["centered"]:
        mg = np.multiply(inputs["mg"], rho)
        mg = _into(np.add, mg, _into(np.multiply, grad, rest, out=scratch), out=mg)
        scratch = _into(np.square, mg, out=scratch)
        scratch = _into(np.subtract, ms, scratch, out=scratch)
        scratch = _into(np.add, scratch, inputs["epsilon"], out=scratch)
    else:
        scratch = _into(np.add, ms, inputs["epsilon"], out=scratch)
    scratch = _into(np.sqrt, scratch, out=scratch)
    step = np.multiply(grad, inputs["lr"])
    step = _into(np.divide, step, scratch, out=step)
    if attrs["use_momentum"]:
        step = _into(np.add, np.multiply(inputs["mom"], inputs["momentum"]), step, out=step)
    new_slots.append(step)
    if attrs["centered"]:
        new_slots.append(mg)
    return [_into(np.subtract, inputs["var"], step, out=scratch), *new_slots]


@quiet
def apply_adagrad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad = inputs["grad"]
    accum = np.square(grad)
    accum = _into(np.add, inputs["accum"], accum, out=accum)
    scratch = np.add(accum, inputs["epsilon"])
    scratch = _into(np.sqrt, scratch, out=scratch)
    scratch = _into(np.divide, grad, scratch, out=scratch)
    scratch = _into(np.multiply, scratch, inputs["lr"], out=scratch)
    return [_into(np.subtract, inputs["var"], scratch, out=scratch), accum]


FUSED_UPDATES = {
    "ApplyGradientDescent": apply_gradient_descent,
    "ApplyMomentum": apply_momentum,
    "ApplyAdam": apply_adam,
    "ApplyRMSProp": apply_rms_prop,
    "ApplyAdagrad": apply_adagrad,
}
"""The fused updates by name (``Backend.fused_update``)."""
