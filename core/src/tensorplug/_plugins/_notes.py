"""What became of each plugin (:class:`PluginInfo`), and what is said about the plugins as a whole: entry-point
names that several distributions declare, no backend because the environment kept the plugins out, and, once
every plugin has loaded, kernels for backends nobody registers, gradients for kernels nobody has (misspelled), and
fallbacks nobody registers. See ``tensorplug._plugins._loading``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from tensorplug._plugins._entry_points import EntryPoint, normalize
from tensorplug._plugins._env import ENV_ALLOW, ENV_DISABLE, Settings
from tensorplug._runtime._engine import INSTALL_HINT, engine
from tensorplug._runtime._errors import warn
from tensorplug._runtime._registry import close_kernel_names, kernel_registry
from tensorplug._runtime._spec_types import Fields
from tensorplug.kernel_names import CATALOGUE

_CATALOGUE = frozenset(CATALOGUE)

Status = Literal["loaded", "blocked", "failed"]


@dataclass(init=False, repr=False, eq=False)  # (its methods written out: generating them costs ~0.8 ms at import)
class PluginInfo(Fields):
    """What became of one plugin: where it comes from, whether it loaded, what it registered.

    ``unknown_backends`` names the backends its kernels are declared for
    that no loaded plugin registers (the kernels are kept, and run if such a
    backend is registered later); ``shares_name_with`` lists the other
    distributions declaring an entry point of the same name;
    ``refused_backends`` the backend names it claimed that belong to another
    distribution (the plugin then failed: see ``error``); ``unknown_gradients``
    the kernel names its gradients are declared for that no kernel has and
    that are close to a known kernel's (misspelled, most likely: they warn);
    ``exporters`` the formats it adds to ``tp.export``; ``decompositions`` the
    kernels it says how to decompose; ``translations`` the kernels it says
    how an exporter writes (``"Swish (onnx)"``); ``contract`` the version of the plugin
    contract its module declares it was written for (``TENSORPLUG_CONTRACT``;
    None: none, as before the contract had one).
    """

    name: str
    distribution: str
    version: str
    module: str
    status: Status
    error: str | None = None
    backends: list[str] = field(default_factory=list)
    kernels: int = 0
    gradients: int = 0
    gradient_sets: list[str] = field(default_factory=list)
    unknown_backends: list[str] = field(default_factory=list)
    shares_name_with: list[str] = field(default_factory=list)
    refused_backends: list[str] = field(default_factory=list)
    unknown_gradients: list[str] = field(default_factory=list)
    exporters: list[str] = field(default_factory=list)
    decompositions: list[str] = field(default_factory=list)
    translations: list[str] = field(default_factory=list)
    contract: str | None = None

    def __init__(
        self,
        name: str,
        distribution: str,
        version: str,
        module: str,
        status: Status,
        error: str | None = None,
        backends: list[str] | None = None,
        kernels: int = 0,
        gradients: int = 0,
        gradient_sets: list[str] | None = None,
        unknown_backends: list[str] | None = None,
        shares_name_with: list[str] | None = None,
        refused_backends: list[str] | None = None,
        unknown_gradients: list[str] | None = None,
        exporters: list[str] | None = None,
        decompositions: list[str] | None = None,
        translations: list[str] | None = None,
        contract: str | None = None,
    ) -> None:
        self.name, self.distribution, self.version, self.module = name, distribution, version, module
        self.status, self.error = status, error
        self.backends = [] if backends is None else backends
        self.kernels, self.gradients = kernels, gradients
        self.gradient_sets = [] if gradient_sets is None else gradient_sets
        self.unknown_backends = [] if unknown_backends is None else unknown_backends
        self.shares_name_with = [] if shares_name_with is None else shares_name_with
        self.refused_backends = [] if refused_backends is None else refused_backends
        self.unknown_gradients = [] if unknown_gradients is None else unknown_gradients
        self.exporters = [] if exporters is None else exporters
        self.decompositions = [] if decompositions is None else decompositions
        self.translations = [] if translations is None else translations
        self.contract = contract


def no_backend_hint(settings: Settings, infos: list[PluginInfo]) -> str | None:
    """What the first op says when no backend is registered because the environment kept plugins out, or None."""
    blocked = [f"{info.name} ({info.distribution})" for info in infos if info.status == "blocked"]
    if engine.specs or (not settings.disabled and not blocked):
        return None
    if settings.disabled:
        why, undo = f"{ENV_DISABLE} is set, so no plugin was loaded", f"unset {ENV_DISABLE}"
    else:
        why, undo = f"{ENV_ALLOW}={os.environ.get(ENV_ALLOW, '')!r} does not name them", f"name them in {ENV_ALLOW}"
    if not blocked:
        return f"{why}, and none is installed: {INSTALL_HINT}."
    return (
        f"{why} (installed and not loaded: {', '.join(blocked)}). To load the installed backends, {undo}; "
        "or register a backend in this process with tp.register_backend(name, factory)."
    )


def note_shared_names(found: list[EntryPoint], infos: list[PluginInfo], settings: Settings) -> None:
    """Record entry-point names that several distributions declare, and warn once per name when several load.

    Every such plugin is loaded (unless blocked) and listed: a plugin's
    identity is its distribution and its name, so none is dropped.
    """
    by_name: dict[str, list[PluginInfo]] = {}
    loading: dict[str, int] = {}
    for ep, info in zip(found, infos, strict=True):
        key = normalize(info.name)
        by_name.setdefault(key, []).append(info)
        loading[key] = loading.get(key, 0) + (settings.blocks(ep) is None)
    for key, group in by_name.items():
        dists = sorted({info.distribution for info in group})
        if len(dists) < 2:
            continue
        for info in group:
            info.shares_name_with = [d for d in dists if d != info.distribution]
        if loading[key] < 2:
            continue
        listing = ", ".join(f"{info.distribution} {info.version} ({info.module})" for info in group)
        warn(
            f"tensorplug: the plugin name {group[0].name!r} is declared by {len(dists)} distributions: {listing}. "
            f"All of them load; in {ENV_ALLOW} the name {group[0].name!r} selects all of them, a distribution "
            "name selects one.",
            stacklevel=3,
        )


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
