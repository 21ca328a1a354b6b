"""The guards against a broken or hostile plugin: each refuses one thing a plugin may do, and says why.

A plugin fails (and is rolled back) when a hook raises (any BaseException but KeyboardInterrupt), returns
something that is not a bounded sequence of the hook's spec type (:func:`declarations`), implements a hook
that matches no hookspec (:func:`unknown_hooks`), claims a backend name that is another distribution's
(:func:`check_claim`), or, while it loads, leaves a scope open, changes tensorplug's public API, or replaces or
removes another distribution's backend (:meth:`Snapshot.refusal`). Each guard takes what it judges as
arguments, so it is tested alone, with no plugin installed.

A plugin module may call ``tp.register_kernel`` (or ``register_gradient``, ``unregister_gradient``,
``register_backend``, ``set_backend``...) while it is imported or inside a hook; if it then fails, all of that
is undone by :meth:`Snapshot.restore`: what it added goes, what it removed comes back, the backend it made
active (and any it initialised) is put back as it was.

Beyond the registries, the snapshot holds what a plugin must not leave changed even when it loads: the
scopes of the loading thread (gradient overrides, ``no_grad``, ``tp.debug``), and tensorplug's public API (the
names of the ``tensorplug`` namespace and the attributes of ``Tensor`` and ``Variable``, compared by identity:
a plugin that replaced ``tp.add`` or ``Tensor.__add__`` fails, and the originals are put back). It is cheap: a
dict copy per registry and per namespace, and a few identities. Patches made later (in a thread, at the first
op), or to other modules or objects, are not seen.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from operator import is_
from types import GeneratorType, ModuleType
from typing import Any

from tensorplug._plugins._entry_points import normalize
from tensorplug._plugins._env import ENV_ALLOW
from tensorplug._runtime._engine import engine
from tensorplug._runtime._observe import everywhere, observing
from tensorplug._runtime._registry import REGISTRIES, BackendSpec, exact_names
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor
from tensorplug._runtime._variable import Variable

MAX_DECLARATIONS = 10_000  # per hook and plugin: far above any backend's kernel count
OWNER_PREFIX = "tensorplug-"  # the distribution tensorplug-<name> owns the backend <name>


class PluginProblem(Exception):
    """A plugin broke the hook contract; the message says how, and needs no exception type in front."""


class ClaimRefused(PluginProblem):
    """A plugin claimed a backend name that another distribution owns or registered first."""

    def __init__(self, message: str, backend: str) -> None:
        super().__init__(message)
        self.backend = backend


def is_plugin_failure(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a plugin's code, is that plugin's failure (reported, rolled back, skipped):
    anything but a KeyboardInterrupt, which is the user's and propagates. So ``sys.exit()`` in a plugin, a
    library's own BaseException subclass and a stray GeneratorExit all fail that plugin alone."""
    return not isinstance(exc, KeyboardInterrupt)


# -- what a hook returns -----------------------------------------------------------------------------------------------


def declarations(hook_name: str, call: Callable[[], Any], kind: type[Any], trusted: bool = False) -> list[Any]:
    """Call one hook implementation and read what it returns: a sequence of ``kind`` (None: nothing).

    A sequence that never ends (or holds more than :data:`MAX_DECLARATIONS` items) fails the plugin rather
    than hanging ``import tensorplug``. Names that are instances of a ``str`` subclass become exact strs of
    the same characters (a subclass may redefine ``__eq__``/``__hash__`` to pass for another name), unless
    ``trusted`` (the core's own plugin).
    """
    try:
        result = call()
    except BaseException as exc:
        if not is_plugin_failure(exc):
            raise
        raise PluginProblem(f"{hook_name}() raised {type(exc).__name__}: {exc}") from exc
    if result is None:
        return []
    if not isinstance(result, Sequence) or isinstance(result, str | bytes):
        raise PluginProblem(
            f"{hook_name}() must return a list of {kind.__name__}, got {type(result).__name__} ({result!r:.80})"
        )
    try:
        items = list(islice(result, MAX_DECLARATIONS + 1))  # never len(): a sequence may lie about its length
    except BaseException as exc:
        if not is_plugin_failure(exc):
            raise
        raise PluginProblem(
            f"iterating what {hook_name}() returned (a {type(result).__name__}) raised {type(exc).__name__}: {exc}"
        ) from exc
    if len(items) > MAX_DECLARATIONS:
        raise PluginProblem(
            f"{hook_name}() returned a {type(result).__name__} of more than {MAX_DECLARATIONS} items (one that "
            "never ends?); return a list holding each declaration once"
        )
    specs = []
    for index, item in enumerate(items):
        if not isinstance(item, kind):
            raise PluginProblem(
                f"{hook_name}() returned a {type(item).__name__} at index {index} ({item!r:.80}); "
                f"expected {kind.__name__}"
            )
        specs.append(item if trusted else exact_names(item))
    return specs


def unknown_hooks(names: Sequence[str], known: Sequence[str]) -> str | None:
    """The refusal of hook implementations ``names`` that match no hookspec of ``known``, or None."""
    if not names:
        return None
    from difflib import get_close_matches  # only for this message

    hints = []
    for name in sorted(names):
        close = get_close_matches(name, known, n=1)
        hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"@hookimpl {', '.join(hints)} is not a tensorplug hook; the hooks are {', '.join(known)}"


# -- backend names -----------------------------------------------------------------------------------------------------


def check_claim(
    name: str, distribution: str, version: str, owners: Mapping[str, str], holders: Mapping[str, BackendSpec]
) -> None:
    """Refuse backend ``name`` to the plugin of ``distribution`` unless it owns the name, or the name is free.

    ``owners`` maps a normalized backend name to the installed distribution ``tensorplug-<name>`` that owns it;
    ``holders`` are the backends registered so far. A name nobody owns goes to the first plugin that claims it.
    """
    claimed = f"backend {name!r} claimed by {distribution} {version} was refused"
    owner = owners.get(normalize(name))
    if owner is not None and normalize(owner) != normalize(distribution):
        raise ClaimRefused(
            f"{claimed}: it belongs to {owner} (the distribution {OWNER_PREFIX}<name> owns the backend <name>); "
            f"use another name, or exclude one of the two with {ENV_ALLOW}",
            name,
        )
    holder = holders.get(name)
    if holder is not None and holder.source != distribution:
        raise ClaimRefused(
            f"{claimed}: {holder.source} registered it first (no installed distribution "
            f"{OWNER_PREFIX}{name} owns the name, so the first plugin in load order gets it); exclude one of the two "
            f"with {ENV_ALLOW}",
            name,
        )


# -- what a plugin leaves changed while it loads -----------------------------------------------------------------------

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
        self.stacks = [registry.snapshot(settle=False) for registry in REGISTRIES]  # a dict copy each: cheap
        self.backends = dict(engine.specs)
        self.engine = (engine.active, set(engine.instances), dict(engine.failures), dict(engine.priorities))
        self.scopes = (state.overrides, len(state.outer_overrides), state.tape, len(state.outer_tapes))
        self.observers = (state.observers, tuple(everywhere))
        self.api = [(label, owner, dict(vars(owner))) for label, owner in _watched()]

    # -- what the plugin left changed --------------------------------------------------------------------------------

    def refusal(self, distribution: str) -> str | None:
        """Why the plugin of ``distribution``, loaded since the snapshot, fails, or None: it left a scope open, it
        changed the public API, or it replaced or removed another distribution's backend."""
        scope = self.scopes_left_open()
        if scope is not None:
            instead = (
                "debug mode is the user's to turn on (tp.debug(), TENSORPLUG_DEBUG=1)"
                if scope == "a tp.debug scope"
                else "a plugin declares gradient sets (tensorplug_gradient_sets) for users to enable instead"
            )
            return f"it entered {scope} while loading and left it open; {instead}"
        patched = self.api_changes()
        if patched:
            return (
                f"it changed tensorplug's public API while loading ({', '.join(patched)}); they were put back. A "
                "plugin changes what an op computes by declaring kernels (tensorplug_kernels) and gradients, not by "
                "patching"
            )
        for name, old in self.backends.items():
            spec = engine.specs.get(name)
            if spec is not old and old.source != distribution:
                done = "removed" if spec is None else "replaced"
                return (
                    f"it {done} the backend {name!r} of {old.source} while loading; a plugin may not take or remove "
                    "another distribution's backend"
                )
        return None

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
