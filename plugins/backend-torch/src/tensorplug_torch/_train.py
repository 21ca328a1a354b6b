"""The optimizers' fused updates, which the backend offers through ``fused_update`` (``ApplyGradientDescent``,
``ApplyMomentum``, ``ApplyAdam``, ``ApplyRMSProp``, ``ApplyAdagrad``; see ``tensorplug.train._fused``): the torch
calls the optimizers' ops would make, in their order, so the same bits, each result written into a buffer the
update allocated itself. The inputs are never written. ``tp.testing.check_fused_updates`` checks them against each
optimizer's update rule and the ops (the backend's tests run it case by case)."""

from __future__ import annotations

from typing import Any

import torch


def apply_gradient_descent(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    step = torch.mul(inputs["delta"], inputs["alpha"])
    return [torch.sub(inputs["var"], step, out=step)]


def apply_momentum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad, momentum = inputs["grad"], inputs["momentum"]
    accum = torch.mul(inputs["accum"], momentum).add_(grad)
    if attrs["use_nesterov"]:
        direction = torch.mul(accum, momentum)
        step = torch.add(grad, direction, out=direction).mul_(inputs["lr"])
    else:
        step = torch.mul(accum, inputs["lr"])
    return [torch.sub(inputs["var"], step, out=step), accum]


def apply_adam(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad = inputs["grad"]
    m = torch.mul(inputs["m"], inputs["beta1"]).add_(torch.mul(grad, inputs["one_minus_beta1"]))
    scratch = torch.square(grad).mul_(inputs["one_minus_beta2"])
    v = torch.mul(inputs["v"], inputs["beta2"]).add_(scratch)
    scratch = torch.sqrt(v, out=scratch).add_(inputs["epsilon"])
    scratch = torch.div(m, scratch, out=scratch).mul_(inputs["step_size"])
    return [torch.sub(inputs["var"], scratch, out=scratch), m, v]


def apply_rms_prop(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad, rho, rest = inputs["grad"], inputs["rho"], inputs["one_minus_rho"]
    scratch = torch.square(grad).mul_(rest)
    ms = torch.mul(inputs["ms"], rho).add_(scratch)
    new_slots = [ms]
    if attrs["centered"]:
        mg = torch.mul(inputs["mg"], rho).add_(torch.mul(grad, rest, out=scratch))
        scratch = torch.sub(ms, torch.square(mg, out=scratch), out=scratch).add_(inputs["epsilon"])
    else:
        scratch = torch.add(ms, inputs["epsilon"], out=scratch)
    step = torch.mul(grad, inputs["lr"]).div_(scratch.sqrt_())
    if attrs["use_momentum"]:
        step = torch.add(torch.mul(inputs["mom"], inputs["momentum"]), step, out=step)
    new_slots.append(step)
    if attrs["centered"]:
        new_slots.append(mg)
    return [torch.sub(inputs["var"], step, out=scratch), *new_slots]


def apply_adagrad(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    grad = inputs["grad"]
    accum = torch.add(inputs["accum"], torch.square(grad))
    scratch = torch.add(accum, inputs["epsilon"]).sqrt_()
    scratch = torch.div(grad, scratch, out=scratch).mul_(inputs["lr"])
    return [torch.sub(inputs["var"], scratch, out=scratch), accum]


FUSED_UPDATES = {
    "ApplyGradientDescent": apply_gradient_descent,
    "ApplyMomentum": apply_momentum,
    "ApplyAdam": apply_adam,
    "ApplyRMSProp": apply_rms_prop,
    "ApplyAdagrad": apply_adagrad,
}
"""The fused updates by name (``Backend.fused_update``)."""
