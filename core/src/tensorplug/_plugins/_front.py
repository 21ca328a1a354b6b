"""The registration front: register, unregister and list the entries of one kind, from user code.

Every public registration function (``tp.register_kernel``, ``tp.register_gradient``,
``tp.register_gradient_set``, ``tp.register_exporter``, ``tp.register_decomposition``,
``tp.register_translation`` and their ``unregister_*``) builds its spec and hands it
here with its :class:`Kind`, a row that says what differs between the kinds: the table, the field holding the
registered function, and whether a ``tp.<kind>_stack`` lists a key's entries.

Runtime registrations sit above every plugin in precedence. Shadowing an existing entry must be asked for
with ``override=True``; re-registering the same function (same module and qualified name, as when a notebook
cell runs again) replaces it quietly. Unregistering brings back what was shadowed.

Whoever calls them (user code, or a plugin's code running after it loaded), a registration records its
provenance, computed here once and never at dispatch: ``source`` is the distribution of the calling plugin's
code when a loaded plugin's package is on the stack, else ``"runtime"``. Shadowing (``override=True``) or
unregistering another distribution's entry warns, naming the calling module, and is kept for
``tensorplug info`` (``tensorplug._plugins._provenance``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any

from tensorplug._plugins._provenance import Caller, caller, loading_here, report
from tensorplug._runtime._errors import RegistrationError
from tensorplug._runtime._registry import (
    LAYER_RUNTIME,
    RUNTIME,
    DecompositionSpec,
    ExporterSpec,
    GradientSet,
    GradientSpec,
    KernelSpec,
    LayeredRegistry,
    TranslationSpec,
    decomposition_registry,
    exporter_registry,
    gradient_registry,
    gradient_set_registry,
    kernel_registry,
    translation_registry,
)


class Kind:
    """One kind of registry entry: its table, its spec type and the hook that declares it, the name of its public
    functions, the field holding its function.

    ``stack`` says that ``tp.<kind>_stack`` lists a key's entries (the warnings point to it). ``defaults``: the
    fields a spec may leave None, and the value each then takes: (field, when a plugin declares the spec through
    its hook, when it is registered at runtime). (A plain class: a dataclass costs ~0.5 ms more at import.)
    """

    __slots__ = ("defaults", "field", "function", "hook", "registry", "spec", "stack")

    def __init__(
        self,
        registry: LayeredRegistry[Any],
        spec: type[Any],
        hook: str,  # the hook of tensorplug.hookspecs through which a plugin declares them
        function: str,  # tp.register_<function>, tp.unregister_<function>
        field: str | None,  # the field holding the function: the same one registered again replaces it quietly
        stack: bool = False,
        defaults: tuple[tuple[str, Any, Any], ...] = (),
    ) -> None:
        self.registry, self.spec, self.hook, self.function, self.field = registry, spec, hook, function, field
        self.stack, self.defaults = stack, defaults

    def settled(self, spec: Any, *, declared: bool) -> dict[str, Any]:
        """The fields of ``spec`` left None, with the value each takes where it is registered (for ``replace``)."""
        return {f: (on_hook if declared else at_runtime) for f, on_hook, at_runtime in self.defaults
                if getattr(spec, f) is None}  # fmt: skip

    def call(self, verb: str, key: Hashable, extra: str = "") -> str:
        """The call as a user writes it: ``tp.register_kernel('Add', 'numpy', override=True)``."""
        args = ", ".join(map(repr, key)) if isinstance(key, tuple) else repr(key)
        return f"tp.{verb}_{self.function}({args}{extra})"

    def stack_hint(self) -> str:
        return f"tp.{self.registry.kind}_stack shows who provides what" if self.stack else ""


KERNELS = Kind(kernel_registry, KernelSpec, "tensorplug_kernels", "kernel", "kernel", stack=True)
# A gradient a plugin (written for contract 1.1 or later) declares is replayed unless it says replay=False; one
# registered at runtime, or declared by an older plugin, runs as written unless it says replay=True.
_REPLAY = (("replay", True, False),)
GRADIENTS = Kind(gradient_registry, GradientSpec, "tensorplug_gradients", "gradient", "grad", True, _REPLAY)
GRADIENT_SETS = Kind(
    gradient_set_registry, GradientSet, "tensorplug_gradient_sets", "gradient_set", None, defaults=_REPLAY
)
EXPORTERS = Kind(exporter_registry, ExporterSpec, "tensorplug_exporters", "exporter", None)
DECOMPOSITIONS = Kind(
    decomposition_registry, DecompositionSpec, "tensorplug_decompositions", "decomposition", "fn", stack=True
)
TRANSLATIONS = Kind(
    translation_registry, TranslationSpec, "tensorplug_translations", "translation", "translate", stack=True
)
# What a plugin declares besides backends, in the order of the hooks.
KINDS = (KERNELS, GRADIENTS, GRADIENT_SETS, EXPORTERS, DECOMPOSITIONS, TRANSLATIONS)


def source_of(who: Caller) -> str:
    """The source a registration by ``who`` records: its plugin distribution, else ``"runtime"``."""
    return who.distribution or RUNTIME


def _qualified(fn: Any) -> tuple[str, str] | None:
    if isinstance(fn, str):
        return ("", fn)
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return (module, qualname) if module and qualname else None


def _same(old: Any, new: Any, field: str) -> bool:
    old_name = _qualified(getattr(old, field))
    return old_name is not None and old_name == _qualified(getattr(new, field))


def register(kind: Kind, spec: Any, override: bool, who: Caller, prepare: Callable[[], None] | None = None) -> None:
    """Add ``spec`` at the runtime layer, after ``prepare()`` (a kernel's setup): no other thread can see the entry
    before it is ready, and nothing is added when ``prepare`` raises."""
    registry = kind.registry
    settled = kind.settled(spec, declared=False)
    if settled:
        spec = replace(spec, **settled)
    with registry.lock:
        current = registry.get(spec.key)
        replacing = None
        if current is not None and not override:
            if kind.field is not None and current.source == spec.source and _same(current, spec, kind.field):
                replacing = current  # in one step: no other thread may see the key without either
            else:
                raise RegistrationError(
                    f"{registry.kind} {spec.key!r} is already registered by {current.source}; pass override=True "
                    f"to shadow it (unregistering yours later restores it)"
                )
        if prepare is not None:
            prepare()
        registry.add(spec, LAYER_RUNTIME, replacing=replacing)
    if current is not None and current.source != spec.source and not loading_here():
        # (while a plugin loads, what it registers becomes its own, and warns as its declarations would)
        hint = kind.stack_hint()
        report(
            registry.kind,
            spec.key,
            who,
            current.source,
            "shadows",
            f"tensorplug: {kind.call('register', spec.key, ', override=True')} called from {who.describe()} shadows "
            f"the {registry.kind} {spec.key!r} of {current.source}. Unregistering it brings that one back"
            + (f"; {hint}." if hint else "."),
        )


def unregister(kind: Kind, key: Hashable, source: str | None) -> Any:
    """Remove the active entry for ``key`` (or the topmost from ``source``) and return it; warn and record when it
    was another distribution's."""
    spec = kind.registry.pop(key, source)
    who = caller()
    if spec.source == source_of(who) or loading_here():
        return spec
    hint = kind.stack_hint()
    report(
        kind.registry.kind,
        spec.key,
        who,
        spec.source,
        "removed",
        f"tensorplug: {kind.call('unregister', key)} called from {who.describe()} removed the {kind.registry.kind} "
        f"{spec.key!r} of {spec.source}"
        + (f"; what it shadowed, if anything, is active now ({hint})." if hint else "."),
    )
    return spec


def listing(kind: Kind, keep: Callable[[Any], bool] | None = None) -> list[Any]:
    """The active entry of every key of ``kind`` (those ``keep`` accepts), sorted by key."""
    return sorted((spec for spec in kind.registry if keep is None or keep(spec)), key=lambda spec: spec.key)
