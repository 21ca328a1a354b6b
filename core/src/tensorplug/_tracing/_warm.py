"""The warm call path of ``tp.function``: a call like the last one replayed skips building the signature key.

The general path (``Function.__call__``) builds the key of every call: the backend, the registries' version, the
override scope, each argument's backend, shape and dtype, which arguments are one tensor, which are tensors ``f``
captures; it then looks the trace up and replays it. For a trace without guards, the key of a call comes down to a
few facts, which a :class:`Warm` keeps for the signature last replayed. A call that matches them, and has no keyword
arguments, no gradient scope, trace, override scope or observer on its thread, and distinct tensors none of which
``f`` captures, replays that trace by the general path's own replay (``Function._run``: Variables, host values,
updates, errors): only the lookup is skipped. A Variable gone or moved sends the call back to the general path,
which traces again (tests/unit/test_function_warm.py checks the two paths against each other).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._program import Program
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor

__all__ = ["Warm", "warm_arguments", "warm_path", "warmable"]


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
    for i in range(n):  # (indexing: zip(strict=True) costs more than the checks here)
        a = args[i]
        shape, dtype = specs[i]
        if type(a) is not Tensor or a._dtype != dtype:
            return None
        data = a._data
        if data.shape != shape or (captured and id(data) in captured):
            return None
        arguments.append(data)
    if n > 1 and len({id(a) for a in args}) != n:
        return None  # the same tensor twice: one argument of the trace
    return arguments
