"""Kernels a backend names by convention but does not define: not registered, rather than broken.

``catalogue_kernels`` names every catalogue kernel lazily, by convention, with
``KernelSpec(optional=True)``; a backend written before the catalogue grew
then names functions its modules lack. Nothing is imported at discovery, nor
when the backend is initialised (its kernel modules are imported one by one,
as its kernels first run). An optional spec is checked when its kernel first
runs, and when the kernels of an initialised backend are listed
(``tp.get_kernel``, ``tp.kernels_for_backend``, ``tp.coverage``: its library
is imported by then). One whose module is not there, or does not define the
function, is taken out of the registry: the kernel is then not registered for
the backend, as if it had never been declared, so its fallback backend serves
it, ``tp.coverage()`` lists it as missing, the conformance suite skips it as
missing, and the "not registered" error says why. A module that raises on
import is left in place, so that the kernel's first run reports that error.
"""

from __future__ import annotations

import importlib
import sys

from tensorplug._runtime._registry import RUNTIME, KernelSpec, kernel_registry

absent: dict[tuple[str, str], tuple[str, str, str]] = {}
"""(kernel, backend) -> (source, lazy name, why it does not exist) of each declared kernel taken out. Kept after the
fact; read through :func:`absent_note` and :func:`absent_now`, which skip keys registered again since."""
_present: set[str] = set()  # lazy names found to exist: not checked again


def missing_target(target: str) -> str | None:
    """Why the lazy ``"module:attr"`` name ``target`` does not exist, or None if it does.

    A module that is found but raises on import raises here (that is an error to report, not an absence).
    """
    module_name, _, attr = target.partition(":")
    try:
        value: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:  # the module is there, but something it imports is not
            raise
        return f"there is no module {module_name}"
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            return f"{module_name} defines no {attr}"
    return None


def check(backend_name: str, kernel: str | None = None) -> None:
    """Take out the optional specs for ``backend_name`` (for ``kernel`` only, if given) whose lazy kernel does not
    exist. This imports their modules: call it for an initialised backend, whose library is imported already."""
    keys = [(kernel, backend_name)] if kernel is not None else kernel_registry.keys()
    broken: set[str] = set()  # modules that raised on import: tried once, then left to the kernels' first run
    for key in keys:
        if not isinstance(key, tuple) or key[1] != backend_name:
            continue
        for spec in kernel_registry.stack(key):
            if not spec.optional or not isinstance(spec.kernel, str) or spec.kernel in _present:
                continue
            module_name = spec.kernel.partition(":")[0]
            if module_name in broken:
                continue
            try:
                why = missing_target(spec.kernel)
            except Exception:
                broken.add(module_name)
                continue
            if why is None:
                _present.add(spec.kernel)
            else:
                _drop(spec, why)


def drop_if_absent(spec: KernelSpec) -> bool:
    """True (and ``spec`` taken out) when it names by convention a lazy kernel that does not exist."""
    if not spec.optional or not isinstance(spec.kernel, str):
        return False
    try:
        why = missing_target(spec.kernel)
    except Exception:
        return False
    if why is None:
        return False
    _drop(spec, why)
    return True


def _drop(spec: KernelSpec, why: str) -> None:
    assert isinstance(spec.kernel, str)
    absent[spec.key] = (spec.source, spec.kernel, why)
    kernel_registry.discard(spec)


def absent_note(kernel: str, backend: str) -> str | None:
    """Why ``kernel`` is not registered for ``backend``, when a spec naming it by convention was taken out."""
    found = absent.get((kernel, backend))
    if found is None or kernel_registry.get((kernel, backend)) is not None:
        return None
    source, target, why = found
    who = "a runtime registration" if source == RUNTIME else source
    return f"{who} names it {target} by convention (catalogue_kernels), but {why}"


def absent_now() -> list[tuple[str, str, str]]:
    """(backend, kernel, why it does not exist) of each kernel taken out that nothing is registered for now."""
    found = list(absent.items())
    return sorted((b, k, why) for (k, b), (_, _, why) in found if kernel_registry.get((k, b)) is None)


def declares_optional(backend_name: str) -> bool:
    """Whether some kernel of ``backend_name`` is named by convention (checked only once the backend is initialised)."""
    return any(spec.optional for spec in kernel_registry if spec.backend_name == backend_name)


def known_absent(spec: KernelSpec) -> bool:
    """Whether ``spec`` names by convention a function that its module, already imported, does not define."""
    if not spec.optional or not isinstance(spec.kernel, str) or spec.kernel.partition(":")[0] not in sys.modules:
        return False
    try:
        return missing_target(spec.kernel) is not None
    except Exception:
        return False
