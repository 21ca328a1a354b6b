"""Plugin discovery: entry points of the group ``tensorplug``, loaded when tensorplug is imported.

Precedence (lowest first): the core's built-in plugin, then plugins sorted
by distribution name and then entry-point name, then runtime calls such as
``tp.register_kernel``. A later registration of the same key shadows the
earlier one. A plugin that fails is rolled back, reported with a warning
naming its distribution, and skipped; the others keep working.

Environment (read before any plugin module is imported):

- ``TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD=1``: load no plugin.
- ``TENSORPLUG_PLUGINS=a,b``: load only these (entry-point or distribution names).
- ``TENSORPLUG_STRICT_PLUGINS=1``: a plugin that fails to load raises PluginError.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, Literal

import pluggy

from tensorplug import hookspecs
from tensorplug._engine import engine
from tensorplug._entry_points import entry_points, normalize
from tensorplug._errors import PluginError, RegistrationError, warn
from tensorplug._overrides import GradientSet, gradient_set_registry
from tensorplug._registry import (
    LAYER_BUILTIN,
    LAYER_PLUGIN,
    BackendSpec,
    GradientSpec,
    KernelSpec,
    LayeredRegistry,
    gradient_registry,
    kernel_registry,
)

ENTRY_POINT_GROUP = "tensorplug"
ENV_DISABLE = "TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD"
ENV_ALLOW = "TENSORPLUG_PLUGINS"
ENV_STRICT = "TENSORPLUG_STRICT_PLUGINS"

Status = Literal["loaded", "blocked", "failed"]


@dataclass
class PluginInfo:
    """What became of one plugin: where it comes from, whether it loaded, what it registered."""

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


manager = pluggy.PluginManager(hookspecs.PROJECT)
manager.add_hookspecs(hookspecs)
_infos: list[PluginInfo] = []
_undo: list[Callable[[], Any]] = []  # how to take back every plugin applied so far, in order


def plugins() -> list[PluginInfo]:
    """Every plugin tensorplug saw at import: loaded, blocked by the environment, or failed."""
    return list(_infos)


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def load_plugins() -> None:
    """Register the built-in plugin, then discover and load the installed ones (called on import)."""
    from tensorplug import __version__
    from tensorplug import gradients as builtin

    builtin_info = PluginInfo("tensorplug", "tensorplug", __version__, builtin.__name__, "loaded")
    _infos.append(builtin_info)
    _load(builtin, builtin_info, LAYER_BUILTIN, 0, strict=True)
    disabled = _truthy(ENV_DISABLE)
    allowed = {normalize(n.strip()) for n in os.environ.get(ENV_ALLOW, "").split(",") if n.strip()}
    strict = _truthy(ENV_STRICT)

    found = sorted(entry_points(ENTRY_POINT_GROUP), key=lambda ep: (normalize(ep.distribution), ep.name))
    for rank, ep in enumerate(found, start=1):
        info = PluginInfo(ep.name, ep.distribution, ep.version, ep.value, "loaded")
        if disabled:
            info.status, info.error = "blocked", f"{ENV_DISABLE} is set"
        elif allowed and normalize(ep.name) not in allowed and normalize(ep.distribution) not in allowed:
            info.status, info.error = "blocked", f"not named in {ENV_ALLOW}"
        _infos.append(info)
        if info.status == "blocked":
            continue
        try:
            module = ep.load()
        except Exception as exc:
            _fail(info, f"importing {ep.value!r} raised {type(exc).__name__}: {exc}", strict, exc)
            continue
        if not isinstance(module, ModuleType):
            _fail(info, f"entry point {ep.value!r} must name a module of hook implementations", strict, None)
            continue
        _load(module, info, LAYER_PLUGIN, rank, strict)


def _unload_all() -> None:
    """Take back every plugin applied so far (strict mode fails the import: leave nothing behind)."""
    for action in reversed(_undo):
        action()
    _undo.clear()
    _infos.clear()


def _fail(info: PluginInfo, message: str, strict: bool, cause: BaseException | None) -> None:
    info.status, info.error = "failed", message
    text = (
        f"tensorplug plugin {info.name!r} from distribution {info.distribution} {info.version} failed to load "
        f"and was skipped: {message}. Exclude it with {ENV_ALLOW}, or set {ENV_STRICT}=1 to make this an error."
    )
    if strict:
        _unload_all()
        raise PluginError(text) from cause
    warn(text, stacklevel=2)


def _load(module: ModuleType, info: PluginInfo, layer: int, rank: int, strict: bool) -> None:
    """Register one plugin module and apply all of its declarations, or none of them."""
    plugin_id = f"{info.distribution}:{info.name}"
    try:
        manager.register(module, name=plugin_id)
    except Exception as exc:
        _fail(info, f"invalid hook implementations: {type(exc).__name__}: {exc}", strict, exc)
        return
    undo: list[Callable[[], Any]] = [functools.partial(manager.unregister, name=plugin_id)]
    try:
        backends = _collect(plugin_id, "tensorplug_backends", BackendSpec)
        kernels = _collect(plugin_id, "tensorplug_kernels", KernelSpec)
        grads = _collect(plugin_id, "tensorplug_gradients", GradientSpec)
        sets = _collect(plugin_id, "tensorplug_gradient_sets", GradientSet)
        for spec in backends:
            _validate(spec)
            engine.add_backend(replace(spec, source=info.distribution))
            undo.append(functools.partial(engine.specs.pop, spec.name, None))
        for kspec in kernels:
            _validate(kspec)
            added_k = _add(kernel_registry, replace(kspec, source=info.distribution), layer, rank, info)
            undo.append(functools.partial(kernel_registry.discard, added_k))
        for gspec in grads:
            _validate(gspec)
            added_g = _add(gradient_registry, replace(gspec, source=info.distribution), layer, rank, info)
            undo.append(functools.partial(gradient_registry.discard, added_g))
        for gset in sets:
            _validate(gset)
            added_s = _add(gradient_set_registry, replace(gset, source=info.distribution), layer, rank, info)
            undo.append(functools.partial(gradient_set_registry.discard, added_s))
    except Exception as exc:
        for action in reversed(undo):
            action()
        _fail(info, f"{type(exc).__name__}: {exc}", strict, exc)
        return
    _undo.extend(undo)
    info.backends = [s.name for s in backends]
    info.kernels, info.gradients, info.gradient_sets = len(kernels), len(grads), [s.name for s in sets]


def _collect(plugin_id: str, hook_name: str, kind: type[Any]) -> list[Any]:
    """Call one plugin's implementation of a hook and validate what it returns."""
    caller = getattr(manager.hook, hook_name)
    specs: list[Any] = []
    for impl in caller.get_hookimpls():
        if impl.plugin_name != plugin_id:
            continue
        result = impl.function()
        if result is None:
            continue
        if not isinstance(result, Sequence) or isinstance(result, str):
            raise RegistrationError(f"{hook_name}() must return a list of {kind.__name__}, got {type(result).__name__}")
        for item in result:
            if not isinstance(item, BackendSpec | KernelSpec | GradientSpec | GradientSet) or not isinstance(
                item, kind
            ):
                raise RegistrationError(
                    f"{hook_name}() returned a {type(item).__name__} ({item!r:.80}); expected {kind.__name__}"
                )
            specs.append(item)
    return specs


def _validate(spec: BackendSpec | KernelSpec | GradientSpec | GradientSet) -> None:
    if isinstance(spec, GradientSet):
        if not isinstance(spec.name, str) or not spec.name:
            raise RegistrationError(f"malformed GradientSet {spec!r:.120}: needs a name")
        if not (callable(spec.factory) or isinstance(spec.factory, str)):
            raise RegistrationError(f"GradientSet {spec.name!r}: factory must be callable or 'module:attr'")
        return
    names: tuple[object, ...] = (spec.name,) if isinstance(spec, BackendSpec) else (spec.kernel_name,)
    if isinstance(spec, KernelSpec):
        names += (spec.backend_name,)
    if not all(isinstance(n, str) for n in names):
        raise RegistrationError(f"malformed {type(spec).__name__} {spec!r:.120}: names must be strings")
    if isinstance(spec, BackendSpec):
        if not spec.name or not (callable(spec.factory) or isinstance(spec.factory, str)):
            raise RegistrationError(f"malformed BackendSpec {spec!r}: needs a name and a factory")
    elif isinstance(spec, KernelSpec):
        if not spec.kernel_name or not spec.backend_name:
            raise RegistrationError(f"malformed KernelSpec {spec!r}: needs a kernel name and a backend name")
        if not (callable(spec.kernel) or isinstance(spec.kernel, str)):
            raise RegistrationError(f"KernelSpec for {spec.key}: kernel must be callable or 'module:attr'")
    else:
        if not spec.kernel_name:
            raise RegistrationError(f"malformed GradientSpec {spec!r}: needs a kernel name")
        if spec.grad is not None and not (callable(spec.grad) or isinstance(spec.grad, str)):
            raise RegistrationError(
                f"GradientSpec for {spec.kernel_name!r}: grad must be callable, 'module:attr' or None"
            )


def _add(registry: LayeredRegistry[Any], spec: Any, layer: int, rank: int, info: PluginInfo) -> Any:
    """Add a plugin's spec, warning once when it shadows another plugin's or, unasked, the core's."""
    current = registry.top_layer(spec.key)
    registry.add(spec, layer, rank)
    if current is None:
        return spec
    current_layer, current_spec = current
    if current_spec.source == spec.source:
        return spec
    if current_layer == layer:
        warn(
            f"tensorplug: {registry.kind} {spec.key!r} is registered by both {current_spec.source} and "
            f"{spec.source}; {spec.source} wins (plugins load in order of distribution name, later ones shadow "
            f"earlier ones). Exclude one with {ENV_ALLOW} to choose.",
            stacklevel=2,
        )
    elif not spec.override:
        warn(
            f"tensorplug: {registry.kind} {spec.key!r} from {spec.source} shadows the one from "
            f"{current_spec.source}; declare override=True in its spec if that is intended.",
            stacklevel=2,
        )
    return spec
