"""The plugin manager and what loading does with one plugin's hooks: registering its module with pluggy
(refusing hooks that match no hookspec), collecting each hook's specs, and adding them to a registry with the
shadowing they cause. See ``tensorplug._plugins._loading``."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pluggy

from tensorplug import hookspecs
from tensorplug._plugins._env import ENV_ALLOW
from tensorplug._plugins._exporters import ExporterSpec
from tensorplug._plugins._overrides import GradientSet
from tensorplug._plugins._provenance import Shadowing
from tensorplug._plugins._specs import PluginProblem, declarations, is_plugin_failure
from tensorplug._runtime._engine import engine
from tensorplug._runtime._registry import BackendSpec, GradientSpec, KernelSpec, LayeredRegistry

# Each hook, the spec type it returns, and the registry it fills (None: the engine's backends).
HOOKS: tuple[tuple[str, type[Any]], ...] = (
    ("tensorplug_backends", BackendSpec),
    ("tensorplug_kernels", KernelSpec),
    ("tensorplug_gradients", GradientSpec),
    ("tensorplug_gradient_sets", GradientSet),
    ("tensorplug_exporters", ExporterSpec),
)

manager = pluggy.PluginManager(hookspecs.PROJECT)
manager.add_hookspecs(hookspecs)


def _backend_remover(name: str) -> Callable[[], None]:
    def remove() -> None:
        if name in engine.specs:
            engine.remove_backend(name)

    return remove


def _discarder(registry: LayeredRegistry[Any], specs: list[Any]) -> Callable[[], None]:
    def discard() -> None:
        for spec in reversed(specs):
            registry.discard(spec)

    return discard


def _register_hooks(module: ModuleType, plugin_id: str) -> None:
    """Register the module with pluggy; refuse (leaving nothing registered) hooks that match no hookspec."""
    try:
        manager.register(module, name=plugin_id)
    except BaseException as exc:  # reading the module's attributes may run plugin code (a module __getattr__)
        if manager.has_plugin(plugin_id):  # pluggy registers hook by hook: take back the ones it had added
            manager.unregister(name=plugin_id)
        if not is_plugin_failure(exc):
            raise
        raise PluginProblem(f"invalid hook implementation: {type(exc).__name__}: {exc}") from exc
    unknown = sorted(caller.name for caller in manager.get_hookcallers(module) or () if not caller.has_spec())
    if unknown:
        from difflib import get_close_matches  # only for this message

        manager.unregister(name=plugin_id)
        known = [name for name, _ in HOOKS]
        hints = []
        for name in unknown:
            close = get_close_matches(name, known, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise PluginProblem(f"@hookimpl {', '.join(hints)} is not a tensorplug hook; the hooks are {', '.join(known)}")


def _collect(plugin_id: str, hook_name: str, kind: type[Any], trusted: bool) -> list[Any]:
    """Call one plugin's implementation of a hook; check that it returns a sequence of ``kind``."""
    caller = getattr(manager.hook, hook_name)
    specs: list[Any] = []
    for impl in caller.get_hookimpls():
        if impl.plugin_name == plugin_id:
            specs += declarations(hook_name, impl.function, kind, trusted)
    return specs


def _add(registry: LayeredRegistry[Any], spec: Any, layer: int, rank: int) -> Shadowing | None:
    """Add a plugin's spec; return the warning to give when it shadows another plugin's or, unasked, the core's."""
    current = registry.top_layer(spec.key)
    registry.add(spec, layer, rank)
    return _shadowing(registry, spec, layer, current)


def _add_all(registry: LayeredRegistry[Any], specs: list[Any], layer: int, rank: int) -> list[Shadowing]:
    """Add a plugin's declarations of one kind, as ``_add`` each in turn; return the warnings to give."""
    tops = registry.add_all(specs, layer, rank)
    notes = []
    for spec, current in zip(specs, tops, strict=True):
        if current is not None:
            note = _shadowing(registry, spec, layer, current)
            if note is not None:
                notes.append(note)
    return notes


def _shadowing(
    registry: LayeredRegistry[Any], spec: Any, layer: int, current: tuple[int, Any] | None
) -> Shadowing | None:
    """The warning to give when ``spec`` (just added at ``layer``) shadows ``current``, the key's top before."""
    if current is None:
        return None
    current_layer, current_spec = current
    if current_spec.source == spec.source:
        return None
    if current_layer == layer:
        message = (
            f"tensorplug: {registry.kind} {spec.key!r} is registered by both {current_spec.source} and "
            f"{spec.source}; {spec.source} wins (plugins load in order of distribution name, later ones shadow "
            f"earlier ones). Exclude one with {ENV_ALLOW} to choose."
        )
    elif not getattr(spec, "override", False):  # a GradientSet has no override flag
        message = (
            f"tensorplug: {registry.kind} {spec.key!r} from {spec.source} shadows the one from "
            f"{current_spec.source}; declare override=True in its spec if that is intended."
        )
    else:
        return None
    return Shadowing(registry.kind, repr(spec.key), spec.source, current_spec.source, "shadows", message)
