"""The public registry API for kernels and gradients: register, unregister and look them up at run time.

Each function is a thin row over the registration front (``tensorplug._plugins._front``), which holds the
precedence, the explicit overrides and the provenance of every kind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from tensorplug._plugins import _front
from tensorplug._plugins._front import GRADIENTS, KERNELS, source_of
from tensorplug._plugins._overrides import active_gradient, kernel_name_problem
from tensorplug._plugins._provenance import caller
from tensorplug._runtime._absent_kernels import check as check_declared
from tensorplug._runtime._engine import _call_kernel_hook, engine
from tensorplug._runtime._errors import RegistrationError
from tensorplug._runtime._registry import (
    GradFunc,
    GradientSpec,
    KernelFunc,
    KernelSpec,
    exact,
    gradient_registry,
    kernel_registry,
)

F = TypeVar("F", bound=Callable[..., Any])


@overload
def register_kernel(
    kernel_name: str,
    backend_name: str,
    kernel: None = None,
    *,
    setup: Any = None,
    dispose: Any = None,
    override: bool = False,
) -> Callable[[F], F]: ...
@overload
def register_kernel(
    kernel_name: str, backend_name: str, kernel: F, *, setup: Any = None, dispose: Any = None, override: bool = False
) -> F: ...
def register_kernel(
    kernel_name: str,
    backend_name: str,
    kernel: Any = None,
    *,
    setup: Callable[[Any], None] | None = None,
    dispose: Callable[[Any], None] | None = None,
    override: bool = False,
) -> Any:
    """Register ``kernel(inputs, attrs, backend)`` for (kernel_name, backend_name); usable as a decorator.

    ``setup(backend)`` and ``dispose(backend)`` run when the backend is
    initialised and disposed (at once, if it already is).

    >>> import numpy as np, tensorplug as tp
    >>> @tp.register_kernel("Cube", "numpy")
    ... def cube(inputs, attrs, backend):
    ...     return inputs["x"] ** 3
    >>> tp.run_kernel("Cube", {"x": tp.tensor([2.0])}).tolist()
    [8.0]
    >>> _ = tp.unregister_kernel("Cube", "numpy")
    """

    name, backend_name = exact(kernel_name), exact(backend_name)

    def register(fn: F) -> F:
        if not (callable(fn) or isinstance(fn, str)):
            raise RegistrationError(f"register_kernel({name!r}, {backend_name!r}): kernel must be callable")
        who = caller()
        spec = KernelSpec(name, backend_name, exact(fn), setup, dispose, override, source_of(who))

        def set_up() -> None:  # on a backend already initialised, before the kernel can be dispatched
            backend = engine.instances.get(backend_name)
            if backend is not None and setup is not None:
                _call_kernel_hook(spec, "setup", backend)

        _front.register(KERNELS, spec, override, who, set_up)
        return fn

    return register if kernel is None else register(kernel)


def unregister_kernel(kernel_name: str, backend_name: str, source: str | None = None) -> KernelSpec:
    """Remove the active kernel for the key (or the topmost from ``source``); what it shadowed comes back."""
    kernel_name, backend_name = exact(kernel_name), exact(backend_name)
    spec: KernelSpec = _front.unregister(KERNELS, (kernel_name, backend_name), source)
    backend = engine.instances.get(backend_name)
    if backend is not None and spec.dispose is not None:
        _call_kernel_hook(spec, "dispose", backend)
    return spec


def get_kernel(kernel_name: str, backend_name: str | None = None) -> KernelSpec | None:
    """The active KernelSpec for (kernel_name, backend_name), the active backend by default; None if absent.

    On an initialised backend, a kernel named by convention (``catalogue_kernels``) whose function its module
    does not define is absent: not registered there.
    """
    if backend_name is None:
        backend_name = engine.ensure_active().name
    if backend_name in engine.instances:  # initialised: a kernel named by convention can be checked cheaply
        check_declared(backend_name, kernel_name)
    return kernel_registry.get((kernel_name, backend_name))


def kernels_for_backend(backend_name: str) -> list[KernelSpec]:
    """The active KernelSpec of every kernel registered for ``backend_name``, sorted by kernel name.

    On an initialised backend, the kernels named by convention are checked first, as :func:`get_kernel` does.
    """
    if backend_name in engine.instances:
        check_declared(backend_name)
    return _front.listing(KERNELS, lambda spec: spec.backend_name == backend_name)


_DECORATOR: Any = object()  # register_gradient(name) with no grad: used as a decorator


@overload
def register_gradient(
    kernel_name: str,
    *,
    inputs_to_save: Sequence[str] = (),
    outputs_to_save: Sequence[int] = (),
    override: bool = False,
    new_kernel: bool = False,
    replay: bool = False,
) -> Callable[[F], F]: ...
@overload
def register_gradient(
    kernel_name: str,
    grad: F | None,
    *,
    inputs_to_save: Sequence[str] = (),
    outputs_to_save: Sequence[int] = (),
    override: bool = False,
    new_kernel: bool = False,
    replay: bool = False,
) -> F: ...
def register_gradient(
    kernel_name: str,
    grad: Any = _DECORATOR,
    *,
    inputs_to_save: Sequence[str] = (),
    outputs_to_save: Sequence[int] = (),
    override: bool = False,
    new_kernel: bool = False,
    replay: bool = False,
) -> Any:
    """Register ``grad(dy, saved, attrs)`` as the gradient of ``kernel_name``; usable as a decorator.

    ``saved`` holds the inputs named in ``inputs_to_save`` then the outputs
    at the indices in ``outputs_to_save``. Return one gradient per input (a
    tuple in input order, or a dict by input name), None for no gradient; an
    entry may be a zero-argument callable, computed only if that input needs
    a gradient (as TensorFlow.js's gradient functions are).
    ``grad=None`` declares the kernel not differentiable. It runs as written
    at every backprop, unless ``replay=True`` declares that it is a function
    of ``dy``, ``saved`` and ``attrs`` alone, made of ops (no Python state,
    no values read back): eager backprop then traces it once per signature
    and replays the program, as it does the core's gradients.

    A misspelled kernel name would do nothing, so it is refused: a name
    differing only in case from a known kernel, and a name no kernel or
    gradient has yet that is close to a known one (``"Rleu"``), unless
    ``new_kernel=True`` says it names a new kernel (or its kernel is
    registered first).

    >>> import tensorplug as tp
    >>> @tp.register_gradient("Relu", inputs_to_save=["x"], override=True)
    ... def leaky_relu_grad(dy, saved, attrs):
    ...     (x,) = saved
    ...     return (tp.where(x > 0, dy, dy * 0.01),)
    >>> round(tp.grad(tp.relu)(tp.tensor(-1.0)).item(), 6)
    0.01
    >>> _ = tp.unregister_gradient("Relu")
    """

    name = exact(kernel_name)

    def register(fn: Any) -> Any:
        if fn is not None and not (callable(fn) or isinstance(fn, str)):
            raise RegistrationError(f"register_gradient({name!r}): grad must be callable or None")
        problem = kernel_name_problem(name, new_kernel=new_kernel)
        if problem is not None:
            raise RegistrationError(f"register_gradient({name!r}): {problem}")
        who = caller()
        saved = tuple(exact(n) for n in inputs_to_save)
        outputs = tuple(int(i) for i in outputs_to_save)
        spec = GradientSpec(name, exact(fn), saved, outputs, override, source_of(who), bool(replay))
        _front.register(GRADIENTS, spec, override, who)
        return fn

    return register if grad is _DECORATOR else register(grad)


def unregister_gradient(kernel_name: str, source: str | None = None) -> GradientSpec:
    """Remove the active gradient of ``kernel_name`` (or the topmost from ``source``); the shadowed one returns."""
    kernel_name = exact(kernel_name)
    spec: GradientSpec = _front.unregister(GRADIENTS, kernel_name, source)
    return spec


def get_gradient(kernel_name: str) -> GradientSpec | None:
    """The gradient that applies to ``kernel_name`` here and now, or None.

    Inside a ``tp.gradient_overrides`` / ``tp.use_gradients`` scope that
    names the kernel, that override; otherwise the registry's active entry.
    Its ``source`` names the distribution (``runtime``, or ``scope`` / the
    set's distribution for scoped overrides); ``tp.gradient_stack`` lists
    what it shadows.
    """
    return active_gradient(kernel_name)


def gradient_stack(kernel_name: str) -> list[GradientSpec]:
    """Every gradient registered for ``kernel_name``, lowest precedence first (the last is active)."""
    return gradient_registry.stack(kernel_name)


def kernel_stack(kernel_name: str, backend_name: str) -> list[KernelSpec]:
    """Every kernel registered for the key, lowest precedence first (the last is active)."""
    return kernel_registry.stack((kernel_name, backend_name))


__all__ = [
    "GradFunc", "KernelFunc", "get_gradient", "get_kernel", "gradient_stack", "kernel_stack",
    "kernels_for_backend", "register_gradient", "register_kernel", "unregister_gradient", "unregister_kernel",
]  # fmt: skip
