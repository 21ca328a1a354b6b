"""Kernel, gradient and backend registries.

Registry entries are frozen dataclasses (``tensorplug._runtime._spec_types``). Every key keeps a stack of entries
ordered by precedence: the built-in layer, then plugins in load order, then
runtime registrations. The top of the stack is active; unregistering it
brings the one below back. Each entry records the distribution that
registered it (``"tensorplug"`` for the core's own, ``"runtime"`` for calls from user code).
The tables (kernels, gradients, gradient sets, exporters, decompositions, export translations) are here;
the backends are the engine's.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import replace
from operator import attrgetter
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import Any, Generic, NamedTuple, TypeVar

from tensorplug._runtime._errors import RegistrationError
from tensorplug._runtime._spec_types import RUNTIME as RUNTIME
from tensorplug._runtime._spec_types import BackendSpec as BackendSpec
from tensorplug._runtime._spec_types import DecompositionSpec as DecompositionSpec
from tensorplug._runtime._spec_types import ExporterSpec as ExporterSpec
from tensorplug._runtime._spec_types import GradFunc as GradFunc
from tensorplug._runtime._spec_types import GradientSet as GradientSet
from tensorplug._runtime._spec_types import GradientSpec as GradientSpec
from tensorplug._runtime._spec_types import KernelFunc as KernelFunc
from tensorplug._runtime._spec_types import KernelSpec as KernelSpec
from tensorplug._runtime._spec_types import TranslationSpec as TranslationSpec

BUILTIN = "tensorplug"  # the source of the core's own entries, registered through the hooks as a plugin's

# Precedence layers, lowest first.
LAYER_BUILTIN = 0
LAYER_PLUGIN = 1
LAYER_RUNTIME = 2


def resolve(obj: Any, what: str) -> Any:
    """Return ``obj``, importing it first when it is a lazy ``"module:attribute"`` name."""
    if not isinstance(obj, str):
        return obj
    module_name, sep, attr = obj.partition(":")
    if not sep or not module_name or not attr:
        raise RegistrationError(f"{what}: lazy reference {obj!r} is not of the form 'module:attribute'")
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


S = TypeVar("S", KernelSpec, GradientSpec)


class _Entry(NamedTuple, Generic[S]):
    """One spec in a key's stack; stacks are ordered by (layer, rank), ties by insertion."""

    layer: int
    rank: int
    spec: S


def _precedence(entry: _Entry[Any]) -> tuple[int, int]:
    return entry.layer, entry.rank


class Deferred:
    """Entries a table adds when first used (:meth:`LayeredRegistry.defer`): ``load()`` returns them, added at
    ``layer`` and ``rank``. (A plain class: a NamedTuple costs ~0.3 ms at import.)"""

    __slots__ = ("layer", "load", "rank")

    def __init__(self, load: Callable[[], Sequence[Any]], layer: int, rank: int) -> None:
        self.load, self.layer, self.rank = load, layer, rank


class _Stacks(dict[Hashable, list[_Entry[Any]]]):
    """A registry's stacks at one moment, and what it had deferred then (:meth:`LayeredRegistry.snapshot`)."""

    def __init__(self, stacks: Mapping[Hashable, list[_Entry[Any]]], deferred: Deferred | None) -> None:
        super().__init__(stacks)
        self.deferred = deferred


class LayeredRegistry(Generic[S]):
    """A map from key to a precedence-ordered stack of specs; the top entry is active.

    Safe to read from any thread while another writes: writers hold ``lock`` and never change a
    stack in place, they put a new list in its slot, so a reader sees a whole stack, old or new.

    Entries may be declared deferred (:meth:`defer`): added, as if they had been there all along, the first time
    the table is read or written (a ``get`` that finds its key reads nothing more).
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._stacks: dict[Hashable, list[_Entry[S]]] = {}
        self.lock = threading.RLock()
        self._listeners: list[Callable[[Hashable], None]] = []
        self._counter = 0
        self._deferred: Deferred | None = None
        self._settling = False

    # -- deferred entries -------------------------------------------------------------------------------------------

    @property
    def deferred(self) -> Deferred | None:
        """The entries declared but not added yet (:meth:`defer`), or None."""
        return self._deferred

    def defer(self, deferred: Deferred | None) -> None:
        """Declare entries to add when the table is first used: ``deferred.load()`` returns them (importing what
        declares them), added at ``deferred.layer`` and ``deferred.rank`` without a word to the listeners (they
        count as there all along). None takes back what is still deferred."""
        with self.lock:
            self._deferred = deferred

    def settle(self) -> None:
        """Add the deferred entries now, if any. Other threads wait until they are in; the thread adding them
        sees the table without them meanwhile (what it imports may read it)."""
        if self._deferred is None:
            return
        with self.lock:
            deferred = self._deferred
            if deferred is None or self._settling:
                return
            self._settling = True
            try:
                specs: Sequence[S] = deferred.load()
                stacks: dict[Hashable, list[_Entry[S]]] = self._stacks
                for spec in specs:
                    stack: list[_Entry[S]] = list(stacks.get(spec.key, ()))
                    stack.append(_Entry(deferred.layer, deferred.rank, spec))
                    if len(stack) > 1:
                        stack.sort(key=_precedence)
                    stacks[spec.key] = stack
                self._deferred = None
            finally:
                self._settling = False

    def on_change(self, listener: Callable[[Hashable], None]) -> None:
        self._listeners.append(listener)

    def _changed(self, key: Hashable) -> None:
        for listener in self._listeners:
            listener(key)

    def add(self, spec: S, layer: int, rank: int | None = None, *, replacing: S | None = None) -> S | None:
        """Push ``spec`` for its key (removing ``replacing`` in the same step); return the spec it now shadows.

        Readers in other threads see the stack before or after, never in between.
        """
        self.settle()
        key = spec.key
        with self.lock:
            if rank is None:
                self._counter += 1
                rank = self._counter
            stack = [e for e in self._stacks.get(key, ()) if e.spec is not replacing]
            previous = stack[-1].spec if stack else None
            stack.append(_Entry(layer, rank, spec))
            stack.sort(key=_precedence)  # stable: of equal precedence, the later one is on top
            self._stacks[key] = stack
            on_top = stack[-1].spec is spec
        self._changed(key)
        return previous if on_top else None

    def add_all(self, specs: Sequence[S], layer: int, rank: int) -> list[tuple[int, S] | None]:
        """Push every spec of ``specs`` at one (layer, rank), as ``add`` each in turn would; return, per
        spec, the (layer, spec) that was on top of its key before (None: the key was new).

        One plugin's declarations of a kind are added this way at import, under one hold of the lock (a reader
        sees each stack old or new, as with ``add``), at half the cost of ``add`` per spec.
        """
        self.settle()
        tops: list[tuple[int, S] | None] = []
        with self.lock:
            stacks = self._stacks
            for spec in specs:
                key = spec.key
                stack = list(stacks.get(key, ()))  # a new list: readers may hold the old one
                tops.append((stack[-1].layer, stack[-1].spec) if stack else None)
                stack.append(_Entry(layer, rank, spec))
                if len(stack) > 1:
                    stack.sort(key=_precedence)  # stable: of equal precedence, the later one is on top
                stacks[key] = stack
        for spec in specs:
            self._changed(spec.key)
        return tops

    def discard(self, spec: S) -> bool:
        """Remove exactly this spec (used for rollback); True if it was there."""
        self.settle()
        key = spec.key
        with self.lock:
            stack = self._stacks.get(key)
            if not stack:
                return False
            kept = [e for e in stack if e.spec is not spec]
            if len(kept) == len(stack):
                return False
            if kept:
                self._stacks[key] = kept
            else:
                del self._stacks[key]
        self._changed(key)
        return True

    def pop(self, key: Hashable, source: str | None = None) -> S:
        """Remove the active spec for ``key`` (or the topmost one from ``source``) and return it."""
        self.settle()
        with self.lock:
            stack = self._stacks.get(key)
            candidates = [e for e in stack or () if source is None or e.spec.source == source]
            if not candidates:
                known = sorted({e.spec.source for e in stack or ()})
                detail = f" (registered by: {', '.join(known)})" if known else ""
                who = f" from {source!r}" if source is not None else ""
                raise RegistrationError(f"no {self.kind} registered for {key!r}{who}{detail}")
            entry = candidates[-1]
            assert stack is not None
            kept = [e for e in stack if e is not entry]
            if kept:
                self._stacks[key] = kept
            else:
                del self._stacks[key]
        self._changed(key)
        return entry.spec

    def get(self, key: Hashable) -> S | None:
        stack = self._stacks.get(key)
        if stack:
            return stack[-1].spec
        if self._deferred is not None:  # (only a miss looks further)
            self.settle()
            stack = self._stacks.get(key)
            return stack[-1].spec if stack else None
        return None

    def stack(self, key: Hashable) -> list[S]:
        """Every spec registered for ``key``, lowest precedence first."""
        self.settle()
        return [e.spec for e in self._stacks.get(key, ())]

    def top_layer(self, key: Hashable) -> tuple[int, S] | None:
        self.settle()
        stack = self._stacks.get(key)
        return (stack[-1].layer, stack[-1].spec) if stack else None

    def keys(self) -> list[Hashable]:
        self.settle()
        return list(self._stacks)

    def __iter__(self) -> Iterator[S]:
        self.settle()
        return iter([stack[-1].spec for stack in list(self._stacks.values())])

    def snapshot(self, settle: bool = True) -> Mapping[Hashable, list[_Entry[S]]]:
        """Every stack as it is now: a shallow copy is enough, as writers never change a stack in place. With
        ``settle=False`` the deferred entries stay deferred, and :meth:`restore` defers them again."""
        if settle:
            self.settle()
        return _Stacks(self._stacks, self._deferred)

    def added_since(self, snapshot: Mapping[Hashable, list[_Entry[S]]]) -> list[S]:
        """The specs registered after ``snapshot`` was taken (and still registered)."""
        added: list[S] = []
        for key, stack in list(self._stacks.items()):
            before = snapshot.get(key, ())
            if stack is not before:  # only the stacks replaced since are compared entry by entry
                known = {id(e.spec) for e in before}
                added.extend(e.spec for e in stack if id(e.spec) not in known)
        return added

    def removed_since(self, snapshot: Mapping[Hashable, list[_Entry[S]]]) -> list[S]:
        """The specs of ``snapshot`` that are no longer registered (unregistered since)."""
        removed: list[S] = []
        for key, before in snapshot.items():
            stack = self._stacks.get(key, ())
            if stack is not before:
                kept = {id(e.spec) for e in stack}
                removed.extend(e.spec for e in before if id(e.spec) not in kept)
        return removed

    def restore(self, snapshot: Mapping[Hashable, list[_Entry[S]]]) -> None:
        """Put every stack back as it was in ``snapshot``: what was added since goes, what was removed returns (and
        what was deferred then is deferred again)."""
        with self.lock:
            now: dict[Hashable, list[_Entry[S]]] = self._stacks
            changed = [key for key in {*now, *snapshot} if now.get(key) is not snapshot.get(key)]
            self._stacks = dict(snapshot)  # the very lists of then (never changed in place), in their order
            self._deferred = snapshot.deferred if isinstance(snapshot, _Stacks) else None
        for key in changed:
            self._changed(key)


kernel_registry: LayeredRegistry[KernelSpec] = LayeredRegistry("kernel")
gradient_registry: LayeredRegistry[GradientSpec] = LayeredRegistry("gradient")
gradient_set_registry: LayeredRegistry[Any] = LayeredRegistry("gradient set")  # of GradientSet
exporter_registry: LayeredRegistry[Any] = LayeredRegistry("exporter")  # of ExporterSpec
decomposition_registry: LayeredRegistry[Any] = LayeredRegistry("decomposition")  # of DecompositionSpec
translation_registry: LayeredRegistry[Any] = LayeredRegistry("translation")  # of TranslationSpec
REGISTRIES: tuple[LayeredRegistry[Any], ...] = (
    kernel_registry,
    gradient_registry,
    gradient_set_registry,
    exporter_registry,
    decomposition_registry,
    translation_registry,
)


def close_kernel_names(name: str, known: set[str]) -> list[str]:
    """Up to three names of ``known`` close to ``name`` (case aside), closest first: what a misspelling meant."""
    from difflib import get_close_matches  # only for this message: difflib stays out of `import tensorplug`

    by_case = {str(k).lower(): str(k) for k in known}
    return [by_case[k] for k in get_close_matches(name.lower(), list(by_case), n=3, cutoff=0.75)]


def exact(value: Any) -> Any:
    """``value`` as an exact ``str`` when it is an instance of a str subclass, else ``value`` itself.

    A subclass may redefine ``__eq__`` and ``__hash__`` (to pass for ``"Add"`` while printing as another name):
    names become registry keys only as exact strs, made from their characters.
    """
    return str.__str__(value) if isinstance(value, str) and type(value) is not str else value


_NAME_FIELDS = {
    "BackendSpec": ("name", "factory", "priority", "fallback"),
    "KernelSpec": ("kernel_name", "backend_name", "kernel", "setup", "dispose", "note"),
    "GradientSpec": ("kernel_name", "grad", "inputs_to_save"),
    "GradientSet": ("name", "factory", "description"),
    "ExporterSpec": ("format", "exporter", "description", "runner"),
    "DecompositionSpec": ("kernel_name", "fn"),
    "TranslationSpec": ("format", "kernel_name", "translate"),
}
_FIELDS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    kind: attrgetter(*fields) for kind, fields in _NAME_FIELDS.items()
}
_PLAIN = frozenset({str, type(None), int, bool, tuple, list, FunctionType, BuiltinFunctionType, MethodType})


def exact_names(spec: Any) -> Any:
    """``spec`` with every str field (and GradientSpec's input names) an exact ``str`` (see :func:`exact`)."""
    getter = _FIELDS.get(type(spec).__name__)
    if getter is None:
        return spec
    values = getter(spec)
    saved = spec.inputs_to_save if isinstance(spec, GradientSpec) else ()
    if _PLAIN.issuperset(map(type, values)) and _PLAIN.issuperset(map(type, saved)):
        return spec  # the usual case, found at C speed: nothing but plain values
    changes = {}
    for name, value in zip(_NAME_FIELDS[type(spec).__name__], values, strict=True):
        if isinstance(value, str) and type(value) is not str:
            changes[name] = exact(value)
    if isinstance(saved, tuple | list) and any(isinstance(v, str) and type(v) is not str for v in saved):
        changes["inputs_to_save"] = tuple(exact(v) for v in saved)
    return replace(spec, **changes) if changes else spec


def as_tuple(names: Sequence[Any] | None) -> tuple[Any, ...]:
    return tuple(names) if names is not None else ()
