"""The core's gradients, registered as the built-in plugin through the same hook as everyone's.

Each family module holds a ``GRADIENTS`` table; this module is the plugin. It also offers the one-line rules
the tables are written with, to plugins too: :func:`unary` and :func:`binary` make a ``GradientSpec`` from a
formula of ``dy`` and the saved input or output, as HIPS autograd's ``defvjp``::

    from tensorplug.gradients import unary
    from tensorplug.ops import mul, sub, square

    GRADIENTS = [unary("Tanh", lambda dy, y: mul(dy, sub(1.0, square(y))), saves="y", override=True)]
"""

from __future__ import annotations

from dataclasses import replace

from tensorplug._runtime._registry import GradientSpec
from tensorplug.gradients import _binary, _indexing, _linalg, _nn, _reduction, _shape, _unary
from tensorplug.gradients._rules import binary, unary
from tensorplug.hookspecs import hookimpl

__all__ = ["binary", "tensorplug_gradients", "unary"]


@hookimpl
def tensorplug_gradients() -> list[GradientSpec]:
    """The gradient of every core kernel (or its explicit not-differentiable entry), each declared replayable:
    written with ops alone, from what it saves and its attrs."""
    specs = [
        *_unary.GRADIENTS,
        *_binary.GRADIENTS,
        *_reduction.GRADIENTS,
        *_linalg.GRADIENTS,
        *_shape.GRADIENTS,
        *_indexing.GRADIENTS,
        *_nn.GRADIENTS,
    ]
    return [replace(spec, replay=True) for spec in specs]
