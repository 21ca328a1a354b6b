"""How ONNX writes Swish (imported at the first ONNX export of a program that calls it, with ``onnx``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tensorplug_onnx import Graph, StepView


def swish(graph: Graph, step: StepView) -> str:
    """``x * Sigmoid(beta * x)`` with ONNX's default-domain operators: any ONNX runtime runs it."""
    x = step.x("x")
    beta = graph.const(step.attrs["beta"], step.dtype("x"))
    return str(graph.op("Mul", x, graph.op("Sigmoid", graph.op("Mul", x, beta))))
