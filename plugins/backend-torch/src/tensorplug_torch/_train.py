"""The optimizers' fused updates (``ApplyGradientDescent``, ``ApplyMomentum``, ``ApplyAdam``; see
``tensorplug.train._fused``): the torch calls the optimizers' ops would make, in their order, so the same bits,
each result written into a tensor the kernel allocated itself. The inputs are never written."""

from __future__ import annotations

from typing import Any

import torch


def apply_gradient_descent(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    step = torch.mul(inputs["delta"], inputs["alpha"])
    return torch.sub(inputs["var"], step, out=step)


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
