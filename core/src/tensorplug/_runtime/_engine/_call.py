"""The kernel call: a kernel run on raw storage, its errors, its output's wrapping and its record on the tape.

``call`` is the kernel call of the eager world, each step written once:

- the kernel runs on raw storage, ``fn(raw, attrs, backend)``;
- an exception of the kernel becomes a ``KernelError`` naming kernel, backend (and the fallback backend that ran
  it), inputs and attrs (``failure``); a tensorplug error passes as it is;
- the output becomes a Tensor (``wrap_storage``), or, for a kernel of several outputs or on a tape that watches
  an input (``watching``), Tensors that ``wrap_call`` makes and records: inputs in the order the kernel declares
  them (``recorded_inputs``), the enclosing override scope's gradient. ``wrap_call`` and ``wrap_storage`` live
  with Tensor (``_runtime._tensor``): ``wrap_call`` is the one place a Record joins a tape (kernel calls,
  ``custom_grad``, the core's fused gradients, the backward pass's link of a higher-order gradient to its
  ``y``), ``wrap_storage`` the one that builds a Tensor on no tape.

``run_entry`` (the checked calls of the ops with attrs) is ``call`` on its entry's kernel. The hottest callers
write ``call``'s steps in their own body, a Python call (~5 % of an op on 1-element tensors) less:
``run_kernel`` after its lookup and unwrapping, and the elementwise ops' checked calls (``ops._checked.binary``
and ``unary``), which call the kernel's direct form (``kernel.direct(a, b)``: no inputs dict).
``tests/unit/test_kernel_call.py`` checks each caller against ``call``: outputs, dtypes, tape marks, records,
errors, observed kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tensorplug._runtime._backend import Backend
from tensorplug._runtime._engine._backends import FallbackKernel
from tensorplug._runtime._engine._backends import engine as engine
from tensorplug._runtime._errors import KernelError, TensorplugError
from tensorplug._runtime._observe import ObservedKernel
from tensorplug._runtime._state import Tape
from tensorplug._runtime._tensor import Tensor, describe, wrap_call, wrap_storage
from tensorplug.kernel_names import CATALOGUE


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
    if tape is None:
        if type(out) is not tuple and type(out) is not list:
            return wrap_storage(out, backend, dtype)
        several: list[Tensor] = wrap_call(out, backend, None, None, name, inputs, attrs)
        return several
    result: Tensor | list[Tensor] = wrap_call(out, backend, dtype, tape, name, recorded_inputs(name, inputs), attrs)
    return result


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
_input_orders: Callable[[str], tuple[str, ...] | None] | None = None


def input_orders_from(orders: Callable[[str], tuple[str, ...] | None] | None) -> None:
    """Let ``orders(kernel_name)`` give the order in which a core kernel declares its inputs (None: it declares
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
    if _input_orders is None or name not in CATALOGUE:
        return None
    return _input_orders(name)
