"""Who changed the registries: the calling code of a runtime registration, and a record of every shadowing.

A plugin's code can run after it has loaded (a lazy ``priority="mod:fn"``
asked at the first op, a thread it started at import) and call
``tp.register_kernel(..., override=True)`` like user code does. So the
registration functions ask :func:`caller` which code called them (computed
once, when registering, never when dispatching): the first module outside
tensorplug on the stack, and the plugin distribution of a module anywhere on
it, when a loaded plugin's package holds one. :data:`shadowing` keeps every
shadowing that warned, at load time or at run time, whatever the warning
filters: ``tensorplug info`` lists it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_packages: dict[str, str] = {}  # package of a loaded plugin's module -> "distribution version"
_distributions: dict[str, str] = {}  # package of a loaded plugin's module -> distribution
_loading: list[int] = []  # the id of the thread loading the plugins (at import), while it does


class Caller:
    """The code behind a registration: its module, its plugin distribution if known, and the line to warn at."""

    __slots__ = ("distribution", "frame", "module", "version")

    def __init__(self, module: str, distribution: str | None, version: str | None, frame: FrameType | None) -> None:
        self.module = module
        self.distribution = distribution  # when a loaded plugin's package holds a module on the stack
        self.version = version
        self.frame = frame  # the first frame outside tensorplug (and the import system): where a warning points

    def describe(self) -> str:
        """``'mod.sub' (distribution d 1.0)``, or ``'__main__'`` for code of no known plugin."""
        if self.distribution is None:
            return repr(self.module)
        return f"{self.module!r} (distribution {self.distribution} {self.version})"


class Shadowing:
    """One entry that shadowed or removed another distribution's: kept whatever the warning filters.

    (Plain classes here, not NamedTuples: this module is imported by ``import tensorplug``.)
    """

    __slots__ = ("action", "by", "key", "kind", "message", "over")

    def __init__(self, kind: str, key: str, by: str, over: str, action: str, message: str) -> None:
        self.kind = kind  # "kernel", "gradient" or "gradient set"
        self.key = key  # repr of the key: "('Add', 'numpy')", "'Relu'"
        self.by = by  # who did it: a distribution, or "runtime (called from '__main__')"
        self.over = over  # whose entry: a distribution (or "runtime")
        self.action = action  # "shadows" or "removed"
        self.message = message  # the warning it gave

    def as_dict(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in ("kind", "key", "by", "over", "action", "message")}

    def __repr__(self) -> str:
        return f"Shadowing({self.kind} {self.key}: {self.by} {self.action} {self.over})"


shadowing: list[Shadowing] = []


def note_plugin(module: str, distribution: str, version: str) -> None:
    """Say that code under ``module``'s package belongs to ``distribution`` (a plugin that loaded)."""
    package = module.partition(":")[0].strip()
    if "." in package:
        package = package.rpartition(".")[0]  # the entry point's module lies in the plugin's package
    _packages[package] = version
    _distributions[package] = distribution


def forget_plugins() -> None:
    _packages.clear()
    _distributions.clear()


def _owner(module: str) -> str | None:
    """The package of a loaded plugin that holds ``module`` (itself, or one of its parents), or None."""
    name = module
    while name:
        if name in _packages:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_tensorplug(module: str) -> bool:
    return module == "tensorplug" or module.startswith("tensorplug.")


def caller() -> Caller:
    """The code that called into tensorplug (see the module's docstring)."""
    frame: FrameType | None = sys._getframe(1)
    first: tuple[str, FrameType] | None = None
    while frame is not None:
        module = frame.f_globals.get("__name__")
        module = module if isinstance(module, str) else "?"
        if not _is_tensorplug(module) and not _internal(frame.f_code.co_filename):
            if first is None:
                first = (module, frame)
            package = _owner(module)
            if package is not None:
                return Caller(module, _distributions[package], _packages[package], first[1])
        frame = frame.f_back
    if first is None:
        return Caller("?", None, None, None)
    return Caller(first[0], None, None, first[1])


def _internal(filename: str) -> bool:
    return "importlib" in filename and "_bootstrap" in filename


@contextmanager
def loading() -> Iterator[None]:
    """Mark this thread as loading a plugin for the block (imported, or its hooks called)."""
    _loading.append(threading.get_ident())
    try:
        yield
    finally:
        _loading.remove(threading.get_ident())


def loading_here() -> bool:
    """Whether this thread is loading plugins now (what a plugin registers then becomes its own as it loads)."""
    return threading.get_ident() in _loading


def report(kind: str, key: object, who: Caller, over: str, action: str, message: str) -> None:
    """Warn (a PluginWarning, at the caller's line) and record that ``who`` shadowed or removed ``over``'s entry."""
    import warnings

    from tensorplug._runtime._errors import PluginWarning

    by = who.distribution or f"runtime (called from {who.module!r})"
    shadowing.append(Shadowing(kind, repr(key), by, over, action, message))
    if who.frame is None:
        warnings.warn(message, PluginWarning, stacklevel=2)
        return
    where = who.frame.f_globals  # as warnings.warn does for the frame a stacklevel names (without module_globals:
    warnings.warn_explicit(  # with them, the C implementation asks __main__'s loader for its source, and fails)
        message,
        PluginWarning,
        who.frame.f_code.co_filename,
        who.frame.f_lineno,
        module=str(where.get("__name__", "<string>")),
        registry=where.setdefault("__warningregistry__", {}),
    )
