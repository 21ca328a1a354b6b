"""The core's decomposition of the catalogue kernels that are composites of others, in catalogue order (the
built-in plugin declares them): a backend without one of these kernels runs the decomposition in its place.

Generated from the kernel reference's entries (tensorplug/kernel_reference/_<family>.py) by
``python -m tensorplug.kernel_reference --write``: edit the entries, not this file.
"""

from __future__ import annotations

from typing import Any

from tensorplug._runtime._registry import DecompositionSpec
from tensorplug.gradients._unary import SELU_SCALE, SELU_SCALE_ALPHA
from tensorplug.ops import abs, clip_by_value, expm1, relu6, sqrt, square, where


def decompose_elu(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """Elu: where(x > 0.0, x, expm1(x))"""
    x = inputs["x"]
    return where(x > 0.0, x, expm1(x))


def decompose_hard_swish(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """HardSwish: x * relu6(x + 3.0) / 6.0"""
    x = inputs["x"]
    return x * relu6(x + 3.0) / 6.0


def decompose_reciprocal(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """Reciprocal: 1.0 / x"""
    x = inputs["x"]
    return 1.0 / x


def decompose_relu6(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """Relu6: clip_by_value(x, 0, 6)"""
    x = inputs["x"]
    return clip_by_value(x, 0, 6)


def decompose_rsqrt(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """Rsqrt: 1.0 / sqrt(x)"""
    x = inputs["x"]
    return 1.0 / sqrt(x)


def decompose_selu(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """Selu: where(x > 0.0, x * SELU_SCALE, expm1(x) * SELU_SCALE_ALPHA)"""
    x = inputs["x"]
    return where(x > 0.0, x * SELU_SCALE, expm1(x) * SELU_SCALE_ALPHA)


def decompose_softsign(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """Softsign: x / (abs(x) + 1.0)"""
    x = inputs["x"]
    return x / (abs(x) + 1.0)


def decompose_square(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """Square: x * x"""
    x = inputs["x"]
    return x * x


def decompose_leaky_relu(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """LeakyRelu: where(x >= 0.0, x, x * alpha)"""
    x = inputs["x"]
    alpha = attrs["alpha"]
    return where(x >= 0.0, x, x * alpha)


def decompose_squared_difference(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    """SquaredDifference: square(a - b)"""
    a = inputs["a"]
    b = inputs["b"]
    return square(a - b)


DECOMPOSITIONS = [
    DecompositionSpec("Elu", decompose_elu),
    DecompositionSpec("HardSwish", decompose_hard_swish),
    DecompositionSpec("Reciprocal", decompose_reciprocal),
    DecompositionSpec("Relu6", decompose_relu6),
    DecompositionSpec("Rsqrt", decompose_rsqrt),
    DecompositionSpec("Selu", decompose_selu),
    DecompositionSpec("Softsign", decompose_softsign),
    DecompositionSpec("Square", decompose_square),
    DecompositionSpec("LeakyRelu", decompose_leaky_relu),
    DecompositionSpec("SquaredDifference", decompose_squared_difference),
]
