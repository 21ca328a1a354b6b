"""The warm call path of ``tp.function``: a call like the last one replayed skips building the signature key.

The general path (``Function.__call__``) builds the key of every call: the backend, the registries' version, the
override scope, each argument's backend, shape and dtype, which arguments are one tensor, which are tensors ``f``
captures; it then looks the trace up and replays it. For a trace without guards, the key of a call comes down to a
few facts, which a :class:`Warm` keeps for the signature last replayed. A call that matches them, and has no keyword
arguments, no gradient scope, trace, override scope or observer on its thread, and distinct tensors none of which
``f`` captures, replays that trace without the lookup:

- a program that is a pure function of its tensor arguments (no Variable, host value or guard; tensors returned)
  by :func:`warm_replay`, the replay and the results' wrapping alone; a replay that raises leaves the call to the
  general path, which raises what it raises;
- any other by the general path's own replay (``Function._run``: Variables, host values, updates, errors); a
  Variable gone or moved sends the call back to the general path, which traces again.

tests/unit/test_function_warm.py checks the paths against each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._program import Program
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor, wrap_storage
from tensorplug._tracing._signature import unflatten

__all__ = ["MISSED", "Warm", "pure_program", "warm_arguments", "warm_path", "warm_replay", "warmable"]

MISSED: Any = object()
"""What :func:`warm_replay` gives for a call it does not serve."""


@dataclass(frozen=True, eq=False)
class Warm:
    """The facts that stand for the signature key of a call of ``entry``'s trace: the backend, the registries'
    version, each tensor argument's shape and dtype."""

    backend: Backend
    version: int
    specs: tuple[tuple[tuple[int, ...], str], ...]
    entry: Any  # the function's cache entry (its _Trace: typed loosely, so that this module imports none above it)


def warmable(program: Program) -> bool:
    """Whether calls of ``program`` may take the warm path (decided once, when it is traced): it has no guard (whose
    checks belong to the general path) and runs on an eager backend."""
    return not (program.guards or program.backend.lazy)


def pure_program(program: Program, returned: tuple[tuple[int, int], ...]) -> bool:
    """Whether ``program`` is a pure function of its tensor arguments, replayed by :func:`warm_replay`: it reads no
    Variable and no host value, has no guard, returns tensors only (``returned`` lists the Variables it returns),
    and runs on an eager backend."""
    return warmable(program) and not (program.variables or program.host or program.updates or returned)


def warm_replay(entry: Any, backend: Backend, arguments: list[Any]) -> Any:
    """The results of ``entry``'s trace (a :func:`pure_program`) replayed on ``arguments``, or :data:`MISSED` when
    the replay raised (the general path runs it again, and raises what it raises)."""
    try:
        outputs, _ = entry.replay(arguments, (), ())
    except Exception:
        return MISSED
    dtypes = entry.dtypes
    if entry.structure is None:
        return wrap_storage(outputs[0], backend, dtypes[0])
    return unflatten(entry.structure, iter([wrap_storage(r, backend, d) for r, d in zip(outputs, dtypes, strict=True)]))


def warm_path(
    entry: Any, backend: Backend, args: tuple[Any, ...], captured: frozenset[int], version: int
) -> Warm | None:
    """The warm path of ``entry`` (whose trace is :func:`warmable`) for calls like ``args``, or None when these
    arguments or the thread's override scope need the general path."""
    if state.overrides:
        return None
    specs = []
    for a in args:
        if type(a) is not Tensor or a._dtype is None or id(a._data) in captured:
            return None
        specs.append((a._data.shape, a._dtype))
    if len({id(a) for a in args}) != len(args):
        return None
    return Warm(backend, version, tuple(specs), entry)


def warm_arguments(warm: Warm, args: tuple[Any, ...], captured: frozenset[int]) -> list[Any] | None:
    """The storages of ``args`` when they match ``warm``'s signature (the replay's arguments), else None. The caller
    has checked the thread's state, the backend and the registries' version."""
    specs = warm.specs
    n = len(args)
    if n != len(specs):
        return None
    arguments = []
    for a, (shape, dtype) in zip(args, specs):  # (the lengths are equal: strict=True would only cost)  # noqa: B905
        if type(a) is not Tensor or a._dtype != dtype:
            return None
        data = a._data
        if data.shape != shape:
            return None
        arguments.append(data)
    if captured:
        for data in arguments:
            if id(data) in captured:
                return None
    if n > 1 and _repeats(args, n):
        return None  # the same tensor twice is one argument of the trace: another signature
    return arguments


def _repeats(args: tuple[Any, ...], n: int) -> bool:
    """Whether one object comes twice among ``args`` (``n`` of them; pairwise up to four, cheaper than a set)."""
    if n == 2:
        return args[0] is args[1]
    if n == 3:
        a, b, c = args
        return a is b or a is c or b is c
    if n == 4:
        a, b, c, d = args
        return a is b or a is c or a is d or b is c or b is d or c is d
    return len(set(map(id, args))) != n
