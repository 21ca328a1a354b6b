"""The plugin loader: discover the entry points of the group ``tensorplug``, filter them by the environment, and
load each plugin, all of it or none of it, when tensorplug is imported.

Precedence (lowest first): the core's built-in plugin, then plugins sorted by distribution name and then
entry-point name, then runtime calls such as ``tp.register_kernel``. A later registration of the same key
shadows the earlier one.

A plugin fails when its module raises on import, a spec is malformed (``tensorplug._plugins._specs``) or a guard
refuses it (``tensorplug._plugins._guard``); it is then rolled back entirely (its declarations, what it
registered or unregistered directly, the backend it made active, its patches to the public API), reported once
with a warning naming its distribution, version and error, and skipped. A KeyboardInterrupt while plugins load
takes back every plugin and propagates. What a plugin registers directly while it loads becomes its own, as if
declared. docs/plugins.md states the whole contract.

Backend names: the distribution ``tensorplug-<name>`` (names normalized, ``-`` = ``_``) owns the backend
``<name>``. While the owner is installed (and not excluded by the environment), any other plugin claiming that
name fails, whatever the load order; a name that no installed distribution owns goes to the first plugin in
load order that claims it. A plugin may not replace or remove another distribution's backend either.

Once all plugins have loaded (``tensorplug._plugins._notes``): kernels declared for a backend that no plugin
registers are kept and listed in ``PluginInfo.unknown_backends``; gradients declared for a kernel nobody has,
with a name close to a known kernel's, warn and are listed in ``PluginInfo.unknown_gradients``; a fallback no
plugin registers warns.

The environment (``TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD``, ``TENSORPLUG_PLUGINS``, ``TENSORPLUG_STRICT_PLUGINS``)
is read before any plugin module is imported (``tensorplug._plugins._env``).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from types import ModuleType
from typing import Any

import pluggy

from tensorplug import hookspecs
from tensorplug._plugins._contract import declared_contract, written_for_defaults
from tensorplug._plugins._entry_points import EntryPoint, entry_points, normalize
from tensorplug._plugins._env import ENV_ALLOW, ENV_STRICT, Settings, check_allowlist
from tensorplug._plugins._front import DECOMPOSITIONS, GRADIENTS, KINDS
from tensorplug._plugins._guard import (
    OWNER_PREFIX,
    ClaimRefused,
    PluginProblem,
    Snapshot,
    check_claim,
    declarations,
    is_plugin_failure,
    unknown_hooks,
)
from tensorplug._plugins._notes import (
    PluginInfo,
    no_backend_hint,
    note_missing_fallbacks,
    note_shared_names,
    note_unknown_backends,
    note_unknown_gradients,
)
from tensorplug._plugins._provenance import Shadowing, forget_plugins, loading, note_plugin, shadowing
from tensorplug._plugins._specs import check_duplicates, validate
from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import PluginError, warn
from tensorplug._runtime._registry import (
    BUILTIN,
    LAYER_BUILTIN,
    LAYER_PLUGIN,
    REGISTRIES,
    RUNTIME,
    BackendSpec,
    Deferred,
    GradientSpec,
    KernelSpec,
    LayeredRegistry,
)
from tensorplug._runtime._spec_types import with_fields

ENTRY_POINT_GROUP = "tensorplug"

# Each hook and the spec type it returns: the backends', then one per kind of registry entry.
HOOKS: tuple[tuple[str, type[Any]], ...] = (
    ("tensorplug_backends", BackendSpec),
    *((kind.hook, kind.spec) for kind in KINDS),
)

manager = pluggy.PluginManager(hookspecs.PROJECT)
manager.add_hookspecs(hookspecs)

_infos: list[PluginInfo] = []
_undo: list[Callable[[], Any]] = []  # how to take back every plugin applied so far, in order
_kernel_backends: dict[int, set[str]] = {}  # id(PluginInfo) -> the backends its kernels are declared for
_gradient_names: dict[int, list[str]] = {}  # id(PluginInfo) -> the kernels its gradients are declared for
_owners: dict[str, str] = {}  # normalized backend name -> the installed distribution that owns it
_imported: list[str] = []  # plugin modules this load imported: forgotten again if the whole load is undone


def plugins() -> list[PluginInfo]:
    """Every plugin tensorplug saw at import: loaded, blocked by the environment, or failed."""
    for kind in _Builtin.KINDS:
        kind.registry.settle()  # (the built-in plugin's counts are known once it has registered)
    return list(_infos)


def load_plugins(builtin: Callable[[], ModuleType], version: str) -> None:
    """Declare the built-in plugin (the module ``builtin()`` imports, of tensorplug ``version``), then discover and
    load the installed ones (called on import, by the package, which hands down how to import its gradients).

    If anything escapes (strict mode's PluginError, a KeyboardInterrupt while a slow plugin imports), every
    plugin is taken back first, so that importing tensorplug again in the same process starts afresh.
    """
    try:
        _load_all(builtin, version)
    except BaseException:
        _unload_all()
        raise


def _load_all(builtin: Callable[[], ModuleType], version: str) -> None:
    builtin_info = PluginInfo(BUILTIN, BUILTIN, version, "", "loaded")  # (its module is named once imported)
    _infos.append(builtin_info)
    _kernel_backends[id(builtin_info)] = set()
    _undo.append(_Builtin(builtin, builtin_info).defer())
    settings = Settings.from_environment()  # before any plugin module is imported

    found = sorted(entry_points(ENTRY_POINT_GROUP), key=lambda ep: (normalize(ep.distribution), ep.name))
    infos = [PluginInfo(ep.name, ep.distribution, ep.version, ep.value, "loaded") for ep in found]
    note_shared_names(found, infos, settings)
    check_allowlist(settings, found)
    for ep in found:
        dist = normalize(ep.distribution)
        if dist.startswith(OWNER_PREFIX) and settings.blocks(ep) is None:
            _owners[dist.removeprefix(OWNER_PREFIX)] = ep.distribution
    for rank, (ep, info) in enumerate(zip(found, infos, strict=True), start=1):
        _infos.append(info)
        reason = settings.blocks(ep)
        if reason is not None:
            info.status, info.error = "blocked", reason
            continue
        _load_entry_point(ep, info, rank, settings.strict)
    note_unknown_backends(_infos, _kernel_backends)
    note_unknown_gradients(_infos, _gradient_names)
    note_missing_fallbacks()
    engine.no_backend_hint = no_backend_hint(settings, infos)


def _unload_all() -> None:
    """Take back every plugin applied so far (the import fails: leave nothing behind, and no plugin module that
    this load imported, so that importing tensorplug again runs each plugin afresh)."""
    for action in reversed(_undo):
        action()
    _undo.clear()
    _infos.clear()
    _kernel_backends.clear()
    _gradient_names.clear()
    _owners.clear()
    shadowing.clear()
    forget_plugins()
    for module_name in _imported:
        sys.modules.pop(module_name, None)
    _imported.clear()


def _fail(info: PluginInfo, message: str, strict: bool, cause: BaseException | None) -> None:
    info.status, info.error = "failed", message
    info.backends, info.kernels, info.gradients, info.gradient_sets, info.exporters = [], 0, 0, [], []
    info.decompositions, info.translations = [], []
    _kernel_backends.pop(id(info), None)
    _gradient_names.pop(id(info), None)
    who = f"tensorplug plugin {info.name!r} from distribution {info.distribution} {info.version}"
    if strict:
        _unload_all()
        raise PluginError(
            f"{who} failed to load: {message}. {ENV_STRICT} is set, so importing tensorplug fails (and leaves "
            f"nothing registered); exclude the plugin with {ENV_ALLOW}, or fix or uninstall {info.distribution}."
        ) from cause
    warn(
        f"{who} failed to load and was rolled back and skipped: {message}. Exclude it with {ENV_ALLOW}, or set "
        f"{ENV_STRICT}=1 to make this an error.",
        stacklevel=4,
    )


# -- one plugin -------------------------------------------------------------------------------------------------------


def _load_entry_point(ep: EntryPoint, info: PluginInfo, rank: int, strict: bool) -> None:
    snapshot = Snapshot()
    module_name = ep.value.partition(":")[0].strip()
    fresh = module_name not in sys.modules
    try:
        with loading():
            module = ep.load()
    except BaseException as exc:
        snapshot.restore()
        if not is_plugin_failure(exc):
            raise
        _fail(info, f"importing {ep.value!r} raised {type(exc).__name__}: {exc}", strict, exc)
        return
    if fresh:
        _imported.append(module_name)
    if not isinstance(module, ModuleType):
        snapshot.restore()
        what = f"a {type(module).__name__}"
        _fail(
            info, f"entry point {ep.value!r} names {what}; it must name a module of hook implementations", strict, None
        )
        return
    _load(module, info, LAYER_PLUGIN, rank, strict, snapshot)


def _load(module: ModuleType, info: PluginInfo, layer: int, rank: int, strict: bool, snapshot: Snapshot) -> None:
    """Register one plugin module and apply all of its declarations, or none of them."""
    with loading():
        _apply(module, info, layer, rank, strict, snapshot)


def _apply(module: ModuleType, info: PluginInfo, layer: int, rank: int, strict: bool, snapshot: Snapshot) -> None:
    plugin_id = f"{info.distribution}:{info.name}"
    undo: list[Callable[[], Any]] = []
    notes: list[Shadowing] = []  # shadowing warnings, issued (and recorded) only once the whole plugin has loaded
    contract_warnings: list[str] = []
    try:
        who = f"plugin {info.name!r} from {info.distribution} {info.version}"
        try:
            info.contract, contract_warnings = declared_contract(module, who)
        except ValueError as exc:
            raise PluginProblem(str(exc)) from None
        _register_hooks(module, plugin_id)
        undo.append(lambda: manager.unregister(name=plugin_id))
        backends, *tables = [_collect(plugin_id, hook_name, kind, False) for hook_name, kind in HOOKS]
        kernels, grads, sets, formats, decompositions, translations = tables
        every = [*backends, *kernels, *grads, *sets, *formats, *decompositions, *translations]
        for spec in every:  # (the core's own ~110 specs are checked by its tests, not on every import)
            validate(spec)
        check_duplicates(every)
        direct = _adopt(snapshot, info, rank, notes)
        for name in [*direct.backends, *(s.name for s in backends)]:
            check_claim(name, info.distribution, info.version, _owners, engine.specs)
        for bspec in backends:
            engine.add_backend(with_fields(bspec, source=info.distribution))
            undo.append(_backend_remover(bspec.name))
        for kind, specs in zip(KINDS, tables, strict=True):
            if not specs:
                continue  # (a table it declares nothing for is not even read: its deferred entries stay deferred)
            registry = kind.registry
            # (with_fields sets a copy's fields in order, never its __dict__: a spec whose __dict__ was made reads
            # its fields ~3x slower; a plugin written before contract 1.1 keeps the runtime defaults)
            declared, source = written_for_defaults(info.contract), info.distribution
            if kind.defaults:
                added = [with_fields(s, source=source, **kind.settled(s, declared=declared)) for s in specs]
            else:
                added = [with_fields(spec, source=source) for spec in specs]
            undo.append(_discarder(registry, added))
            notes += _add_all(registry, added, layer, rank)
    except BaseException as exc:
        for action in reversed(undo):
            action()
        snapshot.restore()
        if not is_plugin_failure(exc):
            raise
        _fail(info, str(exc) if isinstance(exc, PluginProblem) else f"{type(exc).__name__}: {exc}", strict, exc)
        if isinstance(exc, ClaimRefused):
            info.refused_backends = [exc.backend]  # _fail cleared what it registered, not what it was refused
        return
    _undo.extend(undo)
    _undo.append(snapshot.restore)  # what it registered directly, if strict mode later unloads everything
    switched = snapshot.active_backend_changed()
    if switched is not None:
        snapshot.restore_active_backend(dispose=False)
        warn(
            f"tensorplug: plugin {info.name!r} from {info.distribution} {info.version} made {switched!r} the "
            "active backend while loading (tp.set_backend, or an op run while importing); that was undone: which "
            "backend ops use is the user's choice (tp.set_backend) or, by default, the highest-priority one.",
            stacklevel=5,
        )
    for message in contract_warnings:
        warn(message, stacklevel=5)
    for note in notes:
        shadowing.append(note)
        warn(note.message, stacklevel=5)
    note_plugin(info.module, info.distribution, info.version)
    info.backends = [*direct.backends, *(s.name for s in backends)]
    info.kernels, info.gradients = len(kernels) + len(direct.kernels), len(grads) + len(direct.grads)
    info.gradient_sets = [*direct.gradient_sets, *(s.name for s in sets)]
    info.exporters = [*direct.exporters, *(s.format for s in formats)]
    info.decompositions = [*direct.decompositions, *(s.kernel_name for s in decompositions)]
    info.translations = [*direct.translations, *(f"{s.kernel_name} ({s.format})" for s in translations)]
    _kernel_backends[id(info)] = {s.backend_name for s in [*kernels, *direct.kernels]}
    _gradient_names[id(info)] = [s.kernel_name for s in [*grads, *direct.grads]]


class _Direct:
    """What a plugin registered directly (``tp.register_*``) while it loaded, now attributed to it. (A plain
    class: a NamedTuple costs ~0.3 ms at import.)"""

    __slots__ = ("backends", "decompositions", "exporters", "gradient_sets", "grads", "kernels", "translations")

    def __init__(
        self,
        backends: list[str],
        kernels: list[KernelSpec],
        grads: list[GradientSpec],
        gradient_sets: list[str],
        exporters: list[str],
        decompositions: list[str],
        translations: list[str],
    ) -> None:
        self.backends, self.kernels, self.grads, self.gradient_sets = backends, kernels, grads, gradient_sets
        self.exporters, self.decompositions, self.translations = exporters, decompositions, translations


def _adopt(snapshot: Snapshot, info: PluginInfo, rank: int, notes: list[Shadowing]) -> _Direct:
    """Make what the plugin registered directly while it loaded (imported, or in a hook) its own.

    Each such entry gets the plugin's distribution as its source and the plugin's rank among the plugins, with
    the warnings a declaration would give; unregistering another distribution's entry warns too. What the
    guards refuse (:meth:`Snapshot.refusal`) fails the plugin, and everything is put back.
    """
    refusal = snapshot.refusal(info.distribution)
    if refusal is not None:
        raise PluginProblem(refusal)
    backends = []
    for name, spec in list(engine.specs.items()):
        if spec is not snapshot.backends.get(name) and spec.source == RUNTIME:
            engine.add_backend(replace(spec, source=info.distribution), override=True)
            backends.append(name)
    who = f"plugin {info.name!r} from {info.distribution} {info.version}"
    adopted: list[list[Any]] = []
    for registry, before in zip(REGISTRIES, snapshot.stacks, strict=True):
        for spec in registry.removed_since(before):
            if spec.source != info.distribution:
                message = (
                    f"tensorplug: {who} unregistered the {registry.kind} {spec.key!r} of {spec.source} while "
                    "loading; it stays unregistered."
                )
                key = repr(spec.key)
                notes.append(Shadowing(registry.kind, key, info.distribution, spec.source, "removed", message))
        mine = []
        for spec in registry.added_since(before):
            if spec.source not in (RUNTIME, info.distribution):  # (its own: code of its package, loaded before)
                continue
            registry.discard(spec)
            owned = replace(spec, source=info.distribution)
            current = registry.top_layer(owned.key)
            registry.add(owned, LAYER_PLUGIN, rank)
            note = _shadowing(registry, owned, LAYER_PLUGIN, current)
            if note is not None:
                notes.append(note)
            mine.append(owned)
        adopted.append(mine)
    kernels, grads, sets, formats, decompositions, translations = adopted
    return _Direct(
        backends, kernels, grads, [s.name for s in sets], [s.format for s in formats],
        [s.kernel_name for s in decompositions], [f"{s.kernel_name} ({s.format})" for s in translations],
    )  # fmt: skip


class _Builtin:
    """The core's built-in plugin, declared at import and registered the first time the tables it declares for
    (gradients, decompositions) are used: importing its module and its ~110 gradients is then paid by the first
    backprop (or decomposition), not by ``import tensorplug``. Its entries count as there all along (deferred in
    their tables: see :meth:`LayeredRegistry.defer`); they come through its hooks, as every plugin's."""

    KINDS = (GRADIENTS, DECOMPOSITIONS)
    PLUGIN_ID = f"{BUILTIN}:{BUILTIN}"

    def __init__(self, module: Callable[[], ModuleType], info: PluginInfo) -> None:
        self.module, self.info = module, info
        self.specs: dict[int, list[Any]] | None = None  # id(registry) -> its entries, once collected
        self.lock = threading.Lock()

    def defer(self) -> Callable[[], None]:
        """Defer its entries in each of its tables; return how to take them back."""
        for kind in self.KINDS:
            kind.registry.defer(Deferred(partial(self.entries, kind.registry), LAYER_BUILTIN, 0))
        return self.take_back

    def entries(self, registry: LayeredRegistry[Any]) -> list[Any]:
        with self.lock:
            if self.specs is None:
                self.specs = self._collect()
        return self.specs.get(id(registry), [])

    def _collect(self) -> dict[int, list[Any]]:
        module = self.module()
        self.info.module = module.__name__
        with loading():
            _register_hooks(module, self.PLUGIN_ID)
            backends, *tables = [_collect(self.PLUGIN_ID, hook_name, kind, True) for hook_name, kind in HOOKS]
        if backends:
            raise PluginError(f"the built-in plugin ({module.__name__}) declares backends; it may not")
        specs: dict[int, list[Any]] = {}
        for kind, declared in zip(KINDS, tables, strict=True):
            added = [with_fields(spec, source=BUILTIN, **kind.settled(spec, declared=True)) for spec in declared]
            specs[id(kind.registry)] = added
            if added and kind not in self.KINDS:
                kind.registry.add_all(added, LAYER_BUILTIN, 0)
        kernels, grads, sets, formats, decompositions, translations = tables
        info = self.info
        info.kernels, info.gradients = len(kernels), len(grads)
        info.gradient_sets, info.exporters = [s.name for s in sets], [s.format for s in formats]
        info.decompositions = [s.kernel_name for s in decompositions]
        info.translations = [f"{s.kernel_name} ({s.format})" for s in translations]
        return specs

    def take_back(self) -> None:
        for kind in self.KINDS:
            kind.registry.defer(None)
        for kind in KINDS:
            for spec in (self.specs or {}).get(id(kind.registry), ()):
                kind.registry.discard(spec)
        if manager.has_plugin(self.PLUGIN_ID):
            manager.unregister(name=self.PLUGIN_ID)


# -- one plugin's hooks -----------------------------------------------------------------------------------------------


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
    unknown = [caller.name for caller in manager.get_hookcallers(module) or () if not caller.has_spec()]
    refusal = unknown_hooks(unknown, [name for name, _ in HOOKS])
    if refusal is not None:
        manager.unregister(name=plugin_id)
        raise PluginProblem(refusal)


def _collect(plugin_id: str, hook_name: str, kind: type[Any], trusted: bool) -> list[Any]:
    """Call one plugin's implementation of a hook; check that it returns a sequence of ``kind``."""
    caller = getattr(manager.hook, hook_name)
    specs: list[Any] = []
    for impl in caller.get_hookimpls():
        if impl.plugin_name == plugin_id:
            specs += declarations(hook_name, impl.function, kind, trusted)
    return specs


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


def _add_all(registry: LayeredRegistry[Any], specs: list[Any], layer: int, rank: int) -> list[Shadowing]:
    """Add a plugin's declarations of one kind; return the warnings to give for what they shadow."""
    tops = registry.add_all(specs, layer, rank)
    notes = []
    for spec, current in zip(specs, tops, strict=True):
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
