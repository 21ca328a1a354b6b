"""What a plugin leaves changed when it loads: a snapshot taken before it, the checks, and the way back.

A plugin module may call ``tp.register_kernel`` (or ``register_gradient``,
``unregister_gradient``, ``register_backend``, ``set_backend``...) while it is
imported or inside a hook; if it then fails, all of that is undone: what it
added goes, what it removed comes back, the backend it made active (and any
it initialised) is put back as it was.

Beyond the registries, the snapshot holds what a plugin must not leave
changed even when it loads: the scopes of the loading thread (gradient
overrides, ``no_grad``, ``tp.debug``), and tensorplug's public API (the
names of the ``tensorplug`` namespace and the attributes of ``Tensor`` and
``Variable``, compared by identity: a plugin that replaced ``tp.add`` or
``Tensor.__add__`` fails, and the originals are put back). It is cheap: a
dict copy per registry and per namespace, and a few identities. Patches made
later (in a thread, at the first op), or to other modules or objects, are
not seen.
"""

from __future__ import annotations

import sys
from operator import is_
from types import GeneratorType, ModuleType
from typing import Any

from tensorplug._plugins._exporters import exporter_registry
from tensorplug._plugins._overrides import gradient_set_registry
from tensorplug._runtime._engine import engine
from tensorplug._runtime._observe import everywhere, observing
from tensorplug._runtime._registry import LayeredRegistry, gradient_registry, kernel_registry
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor
from tensorplug._runtime._variable import Variable

REGISTRIES: tuple[LayeredRegistry[Any], ...] = (
    kernel_registry,
    gradient_registry,
    gradient_set_registry,
    exporter_registry,
)
_MISSING: Any = object()
_OBSERVING = observing.__wrapped__.__code__  # type: ignore[attr-defined]  # the generator of an observer scope


def _watched() -> tuple[tuple[str, Any], ...]:
    """The namespaces whose attributes a plugin must not change: (the name to show, the object)."""
    return (("tp", sys.modules["tensorplug"]), ("Tensor", Tensor), ("Variable", Variable))


def _expected(namespace: Any, name: str, value: Any) -> bool:
    """Whether a name new in ``namespace`` is one tensorplug adds itself: a lazily loaded name, or a submodule."""
    if not isinstance(namespace, ModuleType):
        return False
    if name.startswith("__") and name.endswith("__"):  # __warningregistry__, set by the warnings machinery
        return True
    if sys.modules.get(f"{namespace.__name__}.{name}") is value:
        return True
    lazy = getattr(namespace, "_LAZY", {}).get(name)
    if lazy is None:
        return False
    module_name, attribute = lazy
    module = sys.modules.get(module_name)
    return module is not None and (module if attribute is None else getattr(module, attribute, _MISSING)) is value


def _same(before: dict[str, Any], now: Any) -> bool:
    """Whether ``now`` holds the very keys and values of ``before``, in the same order (by identity, never ``==``,
    which a replacement could redefine): the quick answer for the usual case, a plugin that patched nothing."""
    return len(before) == len(now) and all(map(is_, before, now)) and all(map(is_, before.values(), now.values()))


class Snapshot:
    """Every registry stack, backend and scope of this thread, and the public API, before a plugin loads."""

    def __init__(self) -> None:
        self.stacks = [registry.snapshot() for registry in REGISTRIES]  # a dict copy each: cheap at import
        self.backends = dict(engine.specs)
        self.engine = (engine.active, set(engine.instances), dict(engine.failures), dict(engine.priorities))
        self.scopes = (state.overrides, len(state.outer_overrides), state.tape, len(state.outer_tapes))
        self.observers = (state.observers, tuple(everywhere))
        self.api = [(label, owner, dict(vars(owner))) for label, owner in _watched()]

    # -- what the plugin left changed --------------------------------------------------------------------------------

    def scopes_left_open(self) -> str | None:
        """Which scope the plugin entered and did not leave (gradient overrides, no_grad, tp.debug), or None."""
        overrides, n_overrides, tape, n_tapes = self.scopes
        if (
            state.overrides is not overrides
            or state.tape is not tape
            or len(state.outer_overrides) != n_overrides
            or len(state.outer_tapes) != n_tapes
        ):
            return "a tp.gradient_overrides / tp.use_gradients or tp.no_grad scope"
        if state.observers is not self.observers[0] or tuple(everywhere) != self.observers[1]:
            return "a tp.debug scope"
        return None

    def api_changes(self) -> list[str]:
        """What the plugin replaced, added or deleted in tensorplug's public API: ``["tp.add", ...]``."""
        changed = []
        for label, owner, before in self.api:
            now = vars(owner)
            if _same(before, now):
                continue
            for name, value in before.items():
                if now.get(name, _MISSING) is not value:
                    changed.append(f"{label}.{name}" + ("" if name in now else " (deleted)"))
            for name in now.keys() - before.keys():
                if not _expected(owner, name, now[name]):
                    changed.append(f"{label}.{name} (added)")
        return sorted(changed)

    def active_backend_changed(self) -> str | None:
        """The backend the plugin made active (tp.set_backend, or an op that chose the default), or None."""
        active = engine.active
        return None if active is self.engine[0] else (active.name if active is not None else "(none)")

    # -- putting it back ---------------------------------------------------------------------------------------------

    def restore(self) -> None:
        """Put back everything the plugin changed (registries, backends, scopes, the public API)."""
        for registry, before in zip(REGISTRIES, self.stacks, strict=True):
            registry.restore(before)
        changed = [name for name, spec in engine.specs.items() if self.backends.get(name) is not spec]
        for name in changed:
            engine.remove_backend(name)
        for name, spec in self.backends.items():  # removed or replaced ones; no cycle: this set had none
            if name not in engine.specs:
                engine.add_backend(spec)
        self.restore_active_backend(dispose=True)
        overrides, n_overrides, tape, n_tapes = self.scopes
        state.overrides, state.tape = overrides, tape
        del state.outer_overrides[n_overrides:], state.outer_tapes[n_tapes:]
        self._close_observer_scopes()
        self._restore_api()

    def restore_active_backend(self, dispose: bool) -> None:
        """Make the backend that was active before active again; ``dispose`` those initialised since."""
        active, instances, failures, priorities = self.engine
        with engine.lock:
            if dispose:
                for name in [name for name in engine.instances if name not in instances]:
                    engine.dispose(name)
                engine.failures.clear()
                engine.failures.update(failures)
                engine.priorities.clear()
                engine.priorities.update(priorities)
            if active is not None and engine.instances.get(active.name) is not active:
                active = None  # the plugin disposed it: the next op picks the default again
            engine.active = active
            engine.table = {} if active is None else engine.tables.setdefault(active.name, {})

    def _close_observer_scopes(self) -> None:
        """Leave the ``tp.debug`` scopes (kernel observers) the plugin entered, as leaving them would."""
        saved, before = self.observers
        if state.observers is saved and tuple(everywhere) == before:
            return
        import gc  # only here: a plugin left a scope open

        mine = len(saved or ())
        opened = [*(state.observers or ())[mine:], *everywhere[len(before) :]]
        scopes = []  # (how many observers it saved, the scope's suspended generator)
        for gen in gc.get_referrers(*opened):
            if isinstance(gen, GeneratorType) and gen.gi_code is _OBSERVING and gen.gi_frame is not None:
                scope = gen.gi_frame.f_locals
                depth = len(scope.get("saved") or ())
                if scope.get("all_threads") or depth >= mine:
                    scopes.append((depth, gen))
        for _, gen in sorted(scopes, key=lambda scope: scope[0], reverse=True):  # innermost first
            gen.close()  # runs the scope's exit: the observer goes, the engine counts it out
        state.observers = saved  # whatever could not be found is dropped all the same
        everywhere[:] = before

    def _restore_api(self) -> None:
        for _, owner, before in self.api:
            now = vars(owner)
            for name, value in before.items():
                if now.get(name, _MISSING) is not value:
                    setattr(owner, name, value)
            for name in now.keys() - before.keys():
                if not _expected(owner, name, now[name]):
                    delattr(owner, name)
