"""The kernel call: a kernel run on raw storage, its errors, its output's wrapping and its record on the tape.

Every kernel call of the eager world is made of these steps, and this module holds each of them once:

- ``call`` runs one: ``fn(raw, attrs, backend)``; an exception of the kernel becomes a ``KernelError`` naming
  kernel, backend, inputs and attrs (``failure``; a tensorplug error passes as it is); the output becomes a
  Tensor (``wrap_several``: a list of them for a kernel of several outputs); and the call is recorded on the
  tape given, when a watched tensor took part (``record_call``). ``run_kernel`` calls it after its table lookup and
  unwrapping, and so do the checked calls of the ops with attrs (``run_entry``).
- ``record_call`` (``_runtime._state``, beside ``Tape`` and ``Record``, so that autodiff imports it from there) is the
  one place a call is appended to a tape as a ``Record``: the kernel calls, and the records that stand for a
  computation with a gradient of its own (the backward pass's link from a higher-order gradient to its ``y``,
  ``custom_grad``, the fused gradients of ``record_gradient``).
- ``wrap_storage`` (``_runtime._tensor``) builds every other Tensor around a kernel's or a replay's storage.

The elementwise ops' checked calls (``ops._checked.binary`` / ``unary``) call the kernel's direct form
(``kernel.direct(a, b)``: no inputs dict) themselves, then use ``failure``, ``wrap_storage``, ``wrap_several``
and ``record_call``; ``call`` builds its Tensor inline, the one copy of ``wrap_storage``'s four lines: it is
``run_kernel``'s path, where a call more costs ~4 % of a dispatch. ``tests/unit/test_kernel_call.py`` checks
that every caller gives what ``call`` gives: outputs, dtypes, records, errors, observers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._engine._backends import FallbackKernel
from tensorplug._runtime._engine._backends import engine as engine
from tensorplug._runtime._errors import KernelError, TensorplugError
from tensorplug._runtime._observe import ObservedKernel
from tensorplug._runtime._registry import resolve
from tensorplug._runtime._state import Tape
from tensorplug._runtime._state import record_call as record_call
from tensorplug._runtime._tensor import Tensor, describe, wrap_storage
from tensorplug.kernel_names import CATALOGUE

_new = object.__new__


def call(
    name: str,
    fn: Any,
    raw: dict[str, Any],
    inputs: Mapping[str, Any],
    attrs: dict[str, Any],
    backend: Backend,
    dtype: str | None,
    tape: Tape | None,
) -> Tensor | list[Tensor]:
    """Run kernel ``name`` (``fn``, what the dispatch table holds) on ``raw``, the storage of ``inputs``.

    Returns the output as a Tensor of ``backend`` (of dtype ``dtype``; None: read from the storage when first
    asked), or a list of Tensors for several outputs; records the call on ``tape`` when it is given (the caller
    found a watched input), with ``inputs`` in the order the kernel declares them (``recorded_inputs``).
    """
    try:
        out = fn(raw, attrs, backend)
    except TensorplugError:
        raise
    except Exception as exc:
        raise failure(name, backend, inputs, attrs, exc) from exc
    if type(out) is tuple or type(out) is list:
        return wrap_several(name, inputs, attrs, out, backend, tape)
    t = _new(Tensor)  # wrap_storage, inline: run_kernel's path (see the module doc)
    t._data = out
    t._backend = backend
    t._dtype = dtype
    if tape is None:
        t._tape = None
    else:
        t._tape = tape.token
        record_call(tape, name, recorded_inputs(name, inputs), attrs, (t,))
    return t


def wrap_several(
    name: str, inputs: Mapping[str, Any], attrs: dict[str, Any], out: Any, backend: Backend, tape: Tape | None
) -> list[Tensor]:
    """The outputs of a kernel that returned several (a list or tuple ``out``) as Tensors, the call recorded on
    ``tape`` when it is given."""
    outputs = [wrap_storage(o, backend) for o in out]
    if tape is not None:
        token = tape.token
        for t in outputs:
            t._tape = token
        record_call(tape, name, recorded_inputs(name, inputs), attrs, list(outputs))
    return outputs


def watching(tape: Tape | None, inputs: Mapping[str, Any]) -> Tape | None:
    """``tape`` when it watches any of ``inputs`` (Tensors, or lists of them), else None: the tape to record a call
    of them on."""
    if tape is None:
        return None
    for value in inputs.values():
        if isinstance(value, Tensor):
            if tape.is_watching(value):
                return tape
        elif any(tape.is_watching(u) for u in value):
            return tape
    return None


def failure(
    name: str, backend: Backend, inputs: Mapping[str, Any], attrs: dict[str, Any], exc: Exception
) -> KernelError:
    """What a kernel call raises when the kernel raised ``exc`` (not a tensorplug error, which passes as it is):
    a KernelError naming the kernel, the backend (and the fallback backend that ran it), inputs and attrs."""
    parts = []
    for key, t in inputs.items():
        if isinstance(t, list | tuple):
            parts.append(f"{key}=[{', '.join(describe(u) for u in t)}]")
        else:
            parts.append(f"{key}={describe(t)}")
    fn = engine.tables.get(backend.name, {}).get(name)
    if isinstance(fn, ObservedKernel):  # while observed (tp.profile, tp.debug), the table holds the kernel wrapped
        fn = fn.fn
    where = repr(backend.name)
    if isinstance(fn, FallbackKernel):
        where += f" (run on its fallback backend {fn.target.name!r})"
    return KernelError(
        f"kernel {name!r} on backend {where} failed for inputs {', '.join(parts) or '(none)'} "
        f"and attrs {attrs!r}: {type(exc).__name__}: {exc}"
    )


# -- the order a record keeps its inputs in ------------------------------------------------------------------

_declared_orders: dict[str, tuple[str, ...] | None] = {}
_input_orders: Callable[[str], tuple[str, ...] | None] | str | None = None


def input_orders_from(orders: Callable[[str], tuple[str, ...] | None] | str | None) -> None:
    """Let ``orders(kernel_name)`` (or the ``"module:attr"`` that is it, imported the first time a core kernel of
    several inputs is recorded) give the order in which a core kernel declares its inputs (None: it declares
    none); the package plugs in the kernel reference's."""
    global _input_orders
    _input_orders = orders
    _declared_orders.clear()


def recorded_inputs(name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs of a recorded call, as the tape keeps them: in the order the kernel declares them (the order of
    the entries of a gradient that returns one per input), whatever the order of the dict ``run_kernel`` got."""
    if len(inputs) < 2:
        return dict(inputs)
    order = _declared_orders.get(name, ())
    if order == ():
        order = _declared_orders[name] = _declared_order(name)
    if order is None or tuple(inputs) == order or set(inputs) != set(order):
        return dict(inputs)  # a kernel that declares no order, or inputs that are not those it declares
    return {key: inputs[key] for key in order}


def _declared_order(name: str) -> tuple[str, ...] | None:
    global _input_orders
    if _input_orders is None or name not in CATALOGUE:
        return None
    if isinstance(_input_orders, str):
        _input_orders = resolve(_input_orders, "the kernels' input orders")
    assert callable(_input_orders)
    return _input_orders(name)
