"""Factories for backend authors: most elementwise kernels are one line with them.

The kernel calling convention is ``kernel(inputs, attrs, backend)``;
``unary(np.exp)`` makes the kernel of input ``x``, ``binary(np.add)`` the
kernel of inputs ``a`` and ``b``, for any array library. ``catalogue_kernels``
derives a backend's whole lazy kernel table from the catalogue.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from tensorplug import kernel_names
from tensorplug._runtime._registry import KernelSpec

Kernel = Callable[[dict[str, Any], dict[str, Any], Any], Any]
"""``kernel(inputs, attrs, backend)``: raw storage in, raw storage (or a tuple of them) out."""


def unary(fn: Callable[[Any], Any]) -> Kernel:
    """The kernel applying ``fn`` to input ``x``; ``kernel.applies`` is ``fn`` (a lowering may call it directly),
    and so is ``kernel.direct`` (see :func:`binary`)."""

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["x"])

    kernel.__name__ = getattr(fn, "__name__", "unary")
    kernel.applies = fn  # type: ignore[attr-defined]
    kernel.direct = fn  # type: ignore[attr-defined]
    return kernel


def binary(fn: Callable[[Any, Any], Any]) -> Kernel:
    """The kernel applying ``fn`` to inputs ``a`` and ``b``; ``kernel.applies`` is ``fn``, and so is ``kernel.direct``.

    ``kernel.direct`` is the kernel itself called with its raw inputs in order, ``direct(a, b)`` (``direct(x)``
    for :func:`unary`): exactly what ``kernel({"a": a, "b": b}, attrs, backend)`` gives, whatever the attrs
    and backend. The elementwise ops call it instead of the kernel once they have checked a call (no inputs
    dict to build); a factory of a backend's own sets it likewise (the numpy backend's runs ``fn`` quietly).
    """

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["a"], inputs["b"])

    kernel.__name__ = getattr(fn, "__name__", "binary")
    kernel.applies = fn  # type: ignore[attr-defined]
    kernel.direct = fn  # type: ignore[attr-defined]
    return kernel


def applied_function(kernel: Any) -> Callable[..., Any] | None:
    """The function ``kernel`` declares it applies to its inputs (``kernel.applies``, set by :func:`unary` and
    :func:`binary`), or None: ``kernel(inputs, attrs, backend)`` is that function of the raw inputs in order,
    whoever registered the kernel, so a ``tp.function`` lowering may call it instead."""
    applies = getattr(kernel, "applies", None)
    return applies if callable(applies) else None


def applied_functions(*modules: ModuleType) -> dict[Kernel, Callable[..., Any]]:
    """The kernels of ``modules`` made by :func:`unary` / :func:`binary` (or a factory that sets ``applies``
    likewise) -> the function each applies to its inputs: what a ``tp.function`` lowering may call directly."""
    return {
        kernel: kernel.applies
        for module in modules
        for kernel in vars(module).values()
        if callable(kernel) and callable(getattr(kernel, "applies", None))
    }


def strided_slice_key(attrs: Mapping[str, Any]) -> tuple[Any, ...]:
    """The basic-indexing key of a StridedSlice's canonical attrs, masks included, for libraries that index as
    numpy does (negative steps, clamping and wrapping as TensorFlow.js's strided slice).

    >>> strided_slice_key({"begin": (1, 0), "end": (3, 0), "strides": (1, -1), "begin_mask": 0, "end_mask": 2,
    ...                    "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0})
    (slice(1, 3, 1), slice(0, None, -1))
    """
    key: list[Any] = []
    for i, (b, e, s) in enumerate(zip(attrs["begin"], attrs["end"], attrs["strides"], strict=True)):
        bit = 1 << i
        if attrs["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif attrs["new_axis_mask"] & bit:
            key.append(None)
        elif attrs["shrink_axis_mask"] & bit:
            key.append(b)
        else:
            key.append(slice(None if attrs["begin_mask"] & bit else b, None if attrs["end_mask"] & bit else e, s))
    return tuple(key)


# ---- the kernel table of a backend, derived from the catalogue ----------------------------------------------------


def kernel_function_name(kernel_name: str) -> str:
    """The function a backend's family module defines for ``kernel_name``: snake_case, and a trailing ``_``
    where the name would shadow a Python builtin or keyword.

    >>> [kernel_function_name(k) for k in ("Conv2DBackpropInput", "GatherV2", "AddN", "Sum", "Round")]
    ['conv2d_backprop_input', 'gather_v2', 'add_n', 'sum_', 'round_']
    """
    name = _FUNCTION_NAMES.get(kernel_name)
    if name is None:  # every plugin's table asks for the same names: work each out once per process
        snake = _WORD_BREAK.sub("_", kernel_name).lower()
        name = f"{snake}_" if keyword.iskeyword(snake) or hasattr(builtins, snake) else snake
        _FUNCTION_NAMES[kernel_name] = name
    return name


def catalogue_kernels(
    backend: str,
    package: str,
    *,
    skip: Iterable[str] = (),
    rename: Mapping[str, str] | None = None,
    modules: Mapping[str, str] | None = None,
) -> list[KernelSpec]:
    """Lazy KernelSpecs for every catalogue kernel of ``backend``, named by convention and imported on first use.

    Kernel ``K`` of family ``F`` (``kernel_names.FAMILIES``) is
    ``"{package}._{F}:{kernel_function_name(K)}"``: ``Sqrt`` is
    ``"mypkg._unary:sqrt"``, ``BatchMatMul`` is ``"mypkg._linalg:batch_mat_mul"``.
    ``skip`` leaves kernels out (a declared fallback backend serves them, or
    ``tensorplug check`` lists them as missing); ``rename`` maps a kernel to
    another ``"module:function"`` inside ``package``; ``modules`` maps a
    family to another module name. Nothing is imported here, so a plugin's
    kernel hook can be one line.

    The catalogue grows between releases, so the derived specs are
    ``optional``: a kernel whose module is not there or does not define its
    function is not registered for the backend (checked when the backend is
    first initialised), and is served by its fallback or listed as missing,
    as a skipped one is. A ``rename=`` target must exist: a typo there is a
    ``KernelError`` when the kernel first runs.

    >>> specs = catalogue_kernels("mine", "mypkg", skip=["Erf"], rename={"Round": "_unary:round_half_even"})
    >>> [s.kernel for s in specs if s.kernel_name in ("Sqrt", "Round", "BatchMatMul")]
    ['mypkg._unary:sqrt', 'mypkg._unary:round_half_even', 'mypkg._linalg:batch_mat_mul']
    >>> any(s.kernel_name == "Erf" for s in specs)
    False
    """
    skipped, renamed, family_modules = frozenset(skip), dict(rename or {}), dict(modules or {})
    unknown = sorted((skipped | renamed.keys()) - _CATALOGUE)
    if unknown:
        raise ValueError(
            f"catalogue_kernels({backend!r}): {unknown} are not catalogue kernel names; see "
            f"tensorplug.kernel_names.CATALOGUE (names are PascalCase, as 'BatchMatMul')"
        )
    unknown_families = sorted(family_modules.keys() - kernel_names.FAMILIES.keys())
    if unknown_families:
        raise ValueError(
            f"catalogue_kernels({backend!r}): modules= names unknown families {unknown_families}; "
            f"the families are {sorted(kernel_names.FAMILIES)}"
        )
    specs = []
    for family, names in kernel_names.FAMILIES.items():
        module = family_modules.get(family, f"_{family}")
        for name in names:
            if name in skipped:
                continue
            target = renamed.get(name)
            if target is None:  # by convention: a function the module lacks leaves the kernel unregistered
                conventional = f"{package}.{module}:{kernel_function_name(name)}"
                specs.append(KernelSpec(name, backend, conventional, optional=True))
            else:  # explicitly: a typo is an error when the kernel first runs
                specs.append(KernelSpec(name, backend, f"{package}.{target}"))
    return specs


_WORD_BREAK = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CATALOGUE = frozenset(kernel_names.CATALOGUE)
_FUNCTION_NAMES: dict[str, str] = {}
