"""A fused computation of the core as one record on the tape, with a gradient of what it saves.

Imports the runtime alone, so that ops (``log_softmax``) and losses (softmax cross-entropy) can both use it.
"""

from __future__ import annotations

from typing import Any

from tensorplug._runtime._registry import GradientSpec
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor, wrap_call

_NO_ATTRS: dict[str, Any] = {}


def record_gradient(
    spec: GradientSpec, inputs: dict[str, Tensor], value: Tensor, attrs: dict[str, Any] = _NO_ATTRS
) -> Tensor:
    """``value`` as the output of one record whose gradient is ``spec`` (``grad(dy, saved, attrs)`` of the inputs
    and outputs it saves), when this thread's tape watches any of ``inputs``; else ``value`` itself. A fused
    computation of the core whose gradient, unlike a ``custom_grad`` closure, depends on what it saves and on
    ``attrs`` alone, so that backprop can replay it from a gradient program
    (``tensorplug._tracing._gradient_programs``). ``value`` is computed with no tape recording: its ops are the
    record."""
    tape = state.tape
    if tape is None or not any(tape.is_watching(x) for x in inputs.values()):
        return value
    output: Tensor = wrap_call(
        value._data, value._backend, value._dtype, tape, spec.kernel_name, dict(inputs), attrs, spec
    )
    return output
