"""The warm call path of ``tp.function``: a call like the last one replayed, of a program that is a pure function of
its tensor arguments, replays its trace without building the signature key.

The general path (``Function.__call__``) builds the key of every call: the backend, the registries' version, the
override scope, each argument's backend, shape and dtype, which arguments are one tensor, which are tensors ``f``
captures; it then looks the trace up and replays it, reading Variables and host values. For a program that reads
none (no Variable, host value or guard, tensors returned), the key of a call comes down to a few facts, which a
:class:`Warm` keeps for the signature last replayed. A call that matches them, and has no keyword arguments, no
gradient scope, trace, override scope or observer on its thread, and distinct tensors none of which ``f`` captures,
is replayed from them; any other call, and a replay that raises, takes the general path, which gives the same
result and raises what it raises (tests/unit/test_function_warm.py checks the two paths against each other).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._program import Program
from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor, wrap_storage
from tensorplug._tracing._signature import unflatten

__all__ = ["MISSED", "Warm", "pure_program", "warm_call", "warm_path"]

MISSED: Any = object()
"""What :func:`warm_call` gives for a call it does not serve."""


@dataclass(frozen=True, eq=False)
class Warm:
    """The facts that stand for the signature key of a call of ``entry``'s trace: the backend, the registries'
    version, each tensor argument's shape and dtype."""

    backend: Backend
    version: int
    specs: tuple[tuple[tuple[int, ...], str], ...]
    entry: Any  # the function's cache entry (its _Trace: typed loosely, so that this module imports none above it)


def pure_program(program: Program, returned: tuple[tuple[int, int], ...]) -> bool:
    """Whether calls of ``program`` may take the warm path (decided once, when it is traced): it reads no Variable
    and no host value, has no guard, returns tensors only (``returned`` lists the Variables it returns), and runs
    on an eager backend."""
    return not (
        program.guards or program.variables or program.host or program.updates or returned or program.backend.lazy
    )


def warm_path(
    entry: Any, backend: Backend, args: tuple[Any, ...], captured: frozenset[int], version: int
) -> Warm | None:
    """The warm path of ``entry`` (whose trace is :func:`pure_program`) for calls like ``args``, or None when these
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


def warm_call(warm: Warm, args: tuple[Any, ...], captured: frozenset[int], uses: Iterator[int]) -> Any:
    """The result of ``warm``'s trace replayed on ``args``, or :data:`MISSED` when they do not match its signature
    (or the replay raised: the general path runs it again, and raises what it raises). The caller has checked the
    thread's state, the backend and the registries' version."""
    specs = warm.specs
    n = len(args)
    if n != len(specs):
        return MISSED
    arguments = []
    for i in range(n):  # (indexing: zip(strict=True) costs more than the checks here)
        a = args[i]
        shape, dtype = specs[i]
        if type(a) is not Tensor or a._dtype != dtype:
            return MISSED
        data = a._data
        if data.shape != shape or (captured and id(data) in captured):
            return MISSED
        arguments.append(data)
    if n > 1 and len({id(a) for a in args}) != n:
        return MISSED  # the same tensor twice: one argument of the trace
    entry = warm.entry
    try:
        outputs, _ = entry.replay(arguments, (), ())
    except Exception:
        return MISSED
    entry.used = next(uses)
    backend, dtypes = warm.backend, entry.dtypes
    if entry.structure is None:
        return wrap_storage(outputs[0], backend, dtypes[0])
    return unflatten(entry.structure, iter([wrap_storage(r, backend, d) for r, d in zip(outputs, dtypes, strict=True)]))
