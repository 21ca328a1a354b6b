"""The core's gradients, registered as the built-in plugin through the same hook as everyone's.

Each family module holds a ``GRADIENTS`` table; this module is the plugin.
"""

from __future__ import annotations

from tensorplug._registry import GradientSpec
from tensorplug.gradients import _binary, _indexing, _linalg, _nn, _reduction, _shape, _unary
from tensorplug.hookspecs import hookimpl


@hookimpl
def tensorplug_gradients() -> list[GradientSpec]:
    """The gradient of every core kernel (or its explicit not-differentiable entry)."""
    return [
        *_unary.GRADIENTS,
        *_binary.GRADIENTS,
        *_reduction.GRADIENTS,
        *_linalg.GRADIENTS,
        *_shape.GRADIENTS,
        *_indexing.GRADIENTS,
        *_nn.GRADIENTS,
    ]
