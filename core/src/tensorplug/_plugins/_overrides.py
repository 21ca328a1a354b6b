"""Scoped gradient overrides: change how kernels recorded inside a ``with`` block are differentiated.

TensorFlow.js has no way to override a gradient for one region of code
(tfjs issue #2659; TF1 had ``gradient_override_map``). Here:

- ``with tp.gradient_overrides({"Relu": my_relu_grad}): ...`` overrides the
  gradient of every Relu *recorded* inside the block, whenever the backward
  pass runs;
- ``with tp.use_gradients("straight_through"): ...`` enables a named set of
  overrides that a plugin (or user code) registered.

Scopes are per thread, nest (the innermost wins for a kernel both name),
and are undone on exit, exceptions included.

A misspelled kernel name would override nothing, silently, so names are
checked (:func:`kernel_name_problem`): a scope may only name a kernel that
exists (a kernel on some backend, or a gradient), and ``register_gradient``
refuses a name that differs only in case from a known one, or a new name
close to a known one unless told ``new_kernel=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tensorplug._plugins import _front
from tensorplug._plugins._front import GRADIENT_SETS, source_of
from tensorplug._plugins._provenance import caller
from tensorplug._runtime._errors import RegistrationError
from tensorplug._runtime._install import pip_install
from tensorplug._runtime._registry import (
    GradFunc,
    GradientSet,
    GradientSpec,
    close_kernel_names,
    exact,
    gradient_registry,
    gradient_set_registry,
    kernel_registry,
    resolve,
)
from tensorplug._runtime._state import state
from tensorplug.kernel_names import CATALOGUE

SCOPE = "scope"


_CATALOGUE = frozenset(CATALOGUE)


def kernel_name_problem(name: object, *, new_kernel: bool = False, existing: bool = False) -> str | None:
    """Why ``name`` is not a kernel name to attach a gradient to, or None.

    The known names are the catalogue's, every kernel registered on any
    backend and every kernel that has a gradient. A known name is fine. A
    name differing from a known one only in case is always refused. With
    ``existing`` (override scopes: there must be something to override) an
    unknown name is refused; otherwise (a gradient for a new kernel, maybe
    registered before the kernel) an unknown name is refused only when it is
    close to a known one, unless ``new_kernel`` says it is new.
    """
    if not isinstance(name, str) or not name:
        return f"a kernel name must be a non-empty str, not {name!r}"
    if name in _CATALOGUE or gradient_registry.get(name) is not None:
        return None
    known = {*_CATALOGUE, *(s.kernel_name for s in gradient_registry), *(s.kernel_name for s in kernel_registry)}
    if name in known:
        return None
    by_case = {str(k).lower(): str(k) for k in known}
    same = by_case.get(name.lower())
    if same is not None:
        return f"{name!r} differs from the kernel name {same!r} only in case (kernel names are case-sensitive)"
    if new_kernel and not existing:
        return None
    close = close_kernel_names(name, known)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    if existing:
        return (
            f"no kernel {name!r} is registered on any backend and it has no gradient, so there is nothing to "
            f"override. {hint}tp.kernel_names lists the core's kernels, tp.coverage() every registered one"
        )
    if not close:
        return None
    return (
        f"{name!r} is not a known kernel (none is registered on any backend, and it has no gradient); {hint}"
        "If it is a new kernel, register the kernel first, or pass new_kernel=True"
    )


def _as_spec(kernel_name: str, value: GradFunc | GradientSpec | str | None, source: str, replay: bool) -> GradientSpec:
    if isinstance(value, GradientSpec):
        if value.kernel_name != kernel_name:
            raise RegistrationError(
                f"gradient_overrides: the entry for {kernel_name!r} is a GradientSpec for {value.kernel_name!r}"
            )
        return replace(value, source=source, replay=replay if value.replay is None else value.replay)
    if value is not None and not (callable(value) or isinstance(value, str)):
        raise RegistrationError(
            f"gradient_overrides: the override for {kernel_name!r} must be a gradient function, a GradientSpec "
            f"or None (not differentiable), got {type(value).__name__}"
        )
    # A bare function gets the same saved tensors as the gradient it replaces (all inputs if there is none).
    current = gradient_registry.get(kernel_name)
    if current is not None:
        return GradientSpec(kernel_name, value, current.inputs_to_save, current.outputs_to_save, True, source, replay)
    return GradientSpec(kernel_name, value, source=source, override=True, replay=replay)


class gradient_overrides:  # noqa: N801 - used like a function, as tp.no_grad
    """Context manager: kernels recorded inside it are differentiated with these gradients.

    Values are gradient functions ``grad(dy, saved, attrs)`` (they get the
    same ``saved`` as the gradient they replace), GradientSpecs, or None to
    make a kernel not differentiable inside the scope. They run as written
    at every backprop, unless ``replay=True`` declares that each is a
    function of ``dy``, ``saved`` and ``attrs`` alone, made of ops: eager
    backprop then replays the program it traced, as it does the core's (a
    GradientSpec's own ``replay``, when not None, holds for it).

    >>> import tensorplug as tp
    >>> guided = lambda dy, saved, attrs: (tp.where((saved[0] > 0) & (dy > 0), dy, tp.zeros_like(dy)),)
    >>> x = tp.tensor([-1.0, 2.0, 3.0])
    >>> with tp.gradient_overrides({"Relu": guided}):
    ...     g = tp.grad(lambda x: tp.sum(tp.relu(x) * tp.tensor([1.0, -1.0, 1.0])))(x)
    >>> g.tolist()
    [0.0, 0.0, 1.0]
    """

    def __init__(
        self,
        overrides: Mapping[str, GradFunc | GradientSpec | str | None],
        *,
        source: str = SCOPE,
        replay: bool = False,
    ) -> None:
        for name in overrides:
            problem = kernel_name_problem(name, existing=True)
            if problem is not None:
                raise RegistrationError(f"gradient_overrides({{{name!r}: ...}}): {problem}")
        self.specs = {name: _as_spec(name, value, source, replay) for name, value in overrides.items()}

    def __enter__(self) -> gradient_overrides:
        outer = state.overrides
        state.outer_overrides.append(outer)  # per thread: the same scope may be active in several threads
        state.overrides = {**outer, **self.specs} if outer else dict(self.specs)
        return self

    def __exit__(self, *exc: object) -> None:
        state.overrides = state.outer_overrides.pop()


def use_gradients(name: str, **params: Any) -> gradient_overrides:
    """Enable the named override set ``name`` (with ``params``) inside a ``with`` block.

    ``tp.gradient_sets()`` lists the sets installed plugins provide (for
    example ``straight_through``, ``guided_backprop`` and ``clip`` from
    tensorplug-grads-extra); ``tp.register_gradient_set`` adds your own.
    """
    gset = gradient_set_registry.get(name)
    if gset is None:
        known = sorted(s.name for s in gradient_set_registry)
        hint = (
            f"known sets: {', '.join(known)}"
            if known
            else f"no set is registered ({pip_install('tensorplug-grads-extra')})"
        )
        raise RegistrationError(f"use_gradients({name!r}): no gradient set of that name; {hint}")
    factory = resolve(gset.factory, f"gradient set {name!r}")
    try:
        specs = list(factory(**params))
    except TypeError as exc:
        raise RegistrationError(f"use_gradients({name!r}, ...): bad parameters for this set: {exc}") from exc
    for spec in specs:
        problem = kernel_name_problem(spec.kernel_name, existing=True)
        if problem is not None:
            raise RegistrationError(f"use_gradients({name!r}): the set (from {gset.source}) overrides {problem}")
    source = f"{gset.source} ({name})"
    return gradient_overrides({s.kernel_name: s for s in specs}, source=source, replay=bool(gset.replay))


def register_gradient_set(
    name: str,
    factory: Callable[..., Sequence[GradientSpec]] | str,
    description: str = "",
    *,
    override: bool = False,
    replay: bool = False,
) -> None:
    """Register a named override set for :func:`use_gradients` from user code.

    As for kernels, ``source`` is the distribution of the calling plugin's code when known, and shadowing
    another distribution's set warns (see ``tensorplug._plugins._front``). Its gradients run as written unless
    ``replay=True`` (or their own GradientSpec's ``replay``) declares them replayable (see ``gradient_overrides``).
    """
    who = caller()
    spec = GradientSet(exact(name), exact(factory), exact(description), source_of(who), replay=replay)
    _front.register(GRADIENT_SETS, spec, override, who)


def unregister_gradient_set(name: str, source: str | None = None) -> GradientSet:
    """Remove the active set named ``name`` (or the topmost from ``source``); a shadowed one comes back."""
    removed: GradientSet = _front.unregister(GRADIENT_SETS, exact(name), source)
    return removed


def gradient_sets() -> list[GradientSet]:
    """The active gradient set of every name, sorted by name."""
    return _front.listing(GRADIENT_SETS)


def active_gradient(kernel_name: str) -> GradientSpec | None:
    """The gradient that applies to ``kernel_name`` recorded now in this thread (scopes first)."""
    overrides = state.overrides
    if overrides is not None and kernel_name in overrides:
        spec: GradientSpec = overrides[kernel_name]
        return spec
    return gradient_registry.get(kernel_name)
