"""What is said once every plugin has loaded: kernels for backends nobody registers, gradients for kernels nobody
has (misspelled), and fallbacks nobody registers. See ``tensorplug._plugins._loading``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import warn
from tensorplug._runtime._registry import close_kernel_names, kernel_registry
from tensorplug.kernel_names import CATALOGUE

if TYPE_CHECKING:
    from tensorplug._plugins._loading import PluginInfo

_CATALOGUE = frozenset(CATALOGUE)


def note_missing_fallbacks() -> None:
    """Warn about each backend whose fallback no plugin registered (kernels it lacks would fail when used)."""
    for name, spec in engine.specs.items():
        if spec.fallback is not None and spec.fallback not in engine.specs:
            warn(
                f"tensorplug: backend {name!r} (from {spec.source}) falls back to {spec.fallback!r}, which no plugin "
                f"registers: a kernel {name!r} lacks will fail until a backend {spec.fallback!r} is registered "
                f"(install it, or tp.register_backend({spec.fallback!r}, ...)).",
                stacklevel=5,
            )


def note_unknown_backends(infos: list[PluginInfo], kernel_backends: dict[int, set[str]]) -> None:
    """Record, per loaded plugin, the backends its kernels name that no plugin registered."""
    registered = set(engine.specs)
    for info in infos:
        declared = kernel_backends.pop(id(info), set())
        info.unknown_backends = sorted(declared - registered)


def note_unknown_gradients(infos: list[PluginInfo], gradient_names: dict[int, list[str]]) -> None:
    """Warn about each gradient declared for a kernel that no plugin registers and whose name is close to a known
    kernel's (``"Rleu"``): misspelled, it would never be used. Not closer to any: a new kernel, maybe registered
    later (as ``tp.register_gradient`` allows)."""
    kernels: set[str] | None = None
    for info in infos:
        for name in gradient_names.pop(id(info), ()):
            if name in _CATALOGUE:
                continue
            if kernels is None:  # only when a plugin declares a gradient for a kernel the core does not have
                kernels = {*CATALOGUE, *(spec.kernel_name for spec in kernel_registry)}
            if name in kernels:
                continue
            close = close_kernel_names(name, kernels)
            if not close:
                continue
            info.unknown_gradients.append(name)
            warn(
                f"tensorplug: plugin {info.name!r} from {info.distribution} {info.version} declares a gradient for "
                f"{name!r}, which is not a known kernel (none is registered on any backend); did you mean "
                f"{' or '.join(map(repr, close))}? As it is, it is never used. If {name!r} is a new kernel, declare "
                "its KernelSpec too.",
                stacklevel=5,
            )
