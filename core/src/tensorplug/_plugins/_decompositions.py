"""Decompositions from user code: ``tp.register_decomposition``, ``tp.unregister_decomposition``,
``tp.decompositions`` (a plugin declares them with the ``tensorplug_decompositions`` hook).

A decomposition says how a kernel is computed with ops, ``fn(inputs, attrs)``: the kernel convention one level up,
with Tensors instead of raw storage. The engine runs it as the kernel on a backend that has none of its own, before
any fallback (``tensorplug._runtime._engine._decomposed``), and backprop differentiates through it where the kernel
has no gradient (``tensorplug._autodiff._backward``).
"""

from __future__ import annotations

from typing import Any

from tensorplug._plugins import _front
from tensorplug._plugins._front import DECOMPOSITIONS, source_of
from tensorplug._plugins._provenance import caller
from tensorplug._runtime._errors import RegistrationError
from tensorplug._runtime._registry import DecompositionSpec, exact

__all__ = ["decomposition_stack", "decompositions", "register_decomposition", "unregister_decomposition"]

_DECORATOR: Any = object()


def register_decomposition(kernel_name: str, fn: Any = _DECORATOR, *, override: bool = False) -> Any:
    """Register ``fn(inputs, attrs)`` as the decomposition of ``kernel_name``; usable as a decorator.

    ``inputs`` are the kernel's inputs as Tensors by name, ``attrs`` its attrs; ``fn`` returns the kernel's
    output computed with ops. On a backend that has no kernel of that name it runs as the kernel (the data
    stays on the backend: no fallback, no ``FallbackWarning``), and backprop differentiates through it where
    the kernel has no gradient (to any order).

    >>> import numpy as np
    >>> import tensorplug as tp
    >>> swish_numpy = lambda inputs, attrs, backend: inputs["x"] / (1 + np.exp(-inputs["x"]))
    >>> _ = tp.register_kernel("Swish", "numpy", swish_numpy)
    >>> @tp.register_decomposition("Swish")
    ... def swish(inputs, attrs):
    ...     return inputs["x"] * tp.sigmoid(inputs["x"])
    >>> round(tp.grad(lambda x: tp.run_kernel("Swish", {"x": x}))(tp.tensor(1.0)).item(), 6)  # no gradient: through it
    0.927671
    >>> _ = tp.unregister_decomposition("Swish"); _ = tp.unregister_kernel("Swish", "numpy")
    """
    name = exact(kernel_name)

    def register(decomposition: Any) -> Any:
        if not (callable(decomposition) or isinstance(decomposition, str)):
            raise RegistrationError(
                f"register_decomposition({name!r}): the decomposition must be callable (fn(inputs, attrs)) or a "
                f"'module:attribute' name, got {type(decomposition).__name__}"
            )
        if not isinstance(name, str) or not name:
            raise RegistrationError(f"register_decomposition({kernel_name!r}): the kernel name must be a non-empty str")
        who = caller()
        spec = DecompositionSpec(name, exact(decomposition), source_of(who))
        _front.register(DECOMPOSITIONS, spec, override, who)
        return decomposition

    return register if fn is _DECORATOR else register(fn)


def unregister_decomposition(kernel_name: str, source: str | None = None) -> DecompositionSpec:
    """Remove the active decomposition of ``kernel_name`` (or the topmost from ``source``); a shadowed one returns."""
    removed: DecompositionSpec = _front.unregister(DECOMPOSITIONS, exact(kernel_name), source)
    return removed


def decompositions() -> list[DecompositionSpec]:
    """The active decomposition of every kernel that has one, sorted by kernel name."""
    return _front.listing(DECOMPOSITIONS)


def decomposition_stack(kernel_name: str) -> list[DecompositionSpec]:
    """Every decomposition registered for ``kernel_name``, lowest precedence first (the last is active)."""
    return DECOMPOSITIONS.registry.stack(kernel_name)
