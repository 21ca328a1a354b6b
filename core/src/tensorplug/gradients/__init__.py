"""The core's gradients, registered as the built-in plugin through the same hook as everyone's.

Each kernel's gradient is stated on its kernel reference entry (``grad``: formulas, or a function of the family
modules here); ``_table`` is generated from the entries, and this module is the plugin that returns it, with the
decompositions of the kernels that are composites of others (``_decompositions``, generated too). It also
offers the one-line rules the table is made of, to plugins too: :func:`unary` and :func:`binary` make a
``GradientSpec`` from a formula of ``dy`` and the saved input or output, as HIPS autograd's ``defvjp``::

    from tensorplug.gradients import unary
    from tensorplug.ops import mul, sub, square

    GRADIENTS = [unary("Tanh", lambda dy, y: mul(dy, sub(1.0, square(y))), saves="y", override=True)]
"""

from __future__ import annotations

from tensorplug._runtime._registry import DecompositionSpec, GradientSpec
from tensorplug.gradients import _decompositions, _table
from tensorplug.gradients._rules import binary, unary
from tensorplug.hookspecs import hookimpl

__all__ = ["binary", "tensorplug_decompositions", "tensorplug_gradients", "unary"]


@hookimpl
def tensorplug_gradients() -> list[GradientSpec]:
    """The gradient of every core kernel (or its explicit not-differentiable entry): written with ops alone, from
    what it saves and its attrs, so replayed (as a plugin's declared gradients are unless they say otherwise)."""
    return list(_table.GRADIENTS)


@hookimpl
def tensorplug_decompositions() -> list[DecompositionSpec]:
    """The decomposition of each catalogue kernel whose reference entry states one (a composite of other kernels):
    a backend that lacks the kernel runs it so, before any fallback."""
    return list(_decompositions.DECOMPOSITIONS)
