"""Tape autodiff: grad, grads, value_and_grad(s), variable_grads, custom_grad, stop_gradient.

A gradient scope starts a tape (or joins the one already recording in this
thread: nested scopes share it, which is what makes higher-order gradients
work), watches its inputs, and runs ``f``. ``run_kernel`` appends a record
for every kernel that touched a watched tensor and marks its outputs as
watched. The backward pass prunes the records to the path from the inputs
to the output, then walks it in reverse, calling each kernel's gradient.
Gradients are written with ops, so while an outer scope is still recording,
the backward pass is recorded too, and each gradient it gives is recorded as
depending on the output it is the gradient of: a constant gradient (that of
a linear function) then has zeros as its own gradient, not an error.

The scope and the backward pass are in :mod:`tensorplug._autodiff._backward`; this module holds the front ends.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

from tensorplug._autodiff._backward import (
    _VARIABLES_HINT,
    UnconnectedGradients,
    _check_choice,
    _check_xs,
    _gradients,
)
from tensorplug._runtime._dtypes import is_floating
from tensorplug._runtime._errors import GradientError, InvalidArgumentError
from tensorplug._runtime._registry import GradientSpec
from tensorplug._runtime._state import no_grad, state
from tensorplug._runtime._tensor import Tensor, describe, wrap_call
from tensorplug._runtime._variable import Variable, live_variables
from tensorplug.ops import tensor

__all__ = [
    "grad",
    "grads",
    "value_and_grad",
    "value_and_grads",
    "variable_grads",
    "custom_grad",
    "no_grad",
    "stop_gradient",
    "VariableGrads",
]


class _Missing:
    """The default of a gradient function's argument: calling it with none gets a hint, not a bare TypeError."""

    def __repr__(self) -> str:
        return "<required>"


_MISSING: Any = _Missing()


def _no_argument(fname: str, takes: str) -> GradientError:
    return GradientError(
        f"{fname}: the function tp.{fname}(f) returns takes {takes} to differentiate f with respect to, "
        f"and was called with none; {_VARIABLES_HINT}"
    )


# -- public API ---------------------------------------------------------------


def grad(
    f: Callable[[Tensor], Tensor], *, unconnected_gradients: UnconnectedGradients = "raise"
) -> Callable[..., Tensor]:
    """Return a function computing df/dx for a function of one tensor, as ``tf.grad``.

    The returned function takes ``(x, dy=None)``; ``dy`` weights the output
    (ones by default), so the result is the vector-Jacobian product. Where f's
    output does not depend on x at all, it raises a GradientError, or gives
    zeros with ``unconnected_gradients="zero"``; a constant gradient (the
    second derivative of a linear f) is zeros either way.

    >>> import tensorplug as tp
    >>> tp.grad(lambda x: x * x)(tp.tensor(3.0)).item()
    6.0
    >>> tp.grad(tp.grad(lambda x: x * 3.0))(tp.tensor(1.0)).item()
    0.0
    """

    _check_choice("grad", unconnected_gradients)

    @functools.wraps(f)
    def df(x: Tensor = _MISSING, dy: Any = None) -> Tensor:
        if x is _MISSING:
            raise _no_argument("grad", "the tensor x")
        _, (g,) = _gradients(f, _check_xs([x], "grad"), dy, "grad", unconnected_gradients=unconnected_gradients)
        assert g is not None
        return g

    return df


def grads(
    f: Callable[..., Tensor], *, unconnected_gradients: UnconnectedGradients = "raise"
) -> Callable[..., list[Tensor]]:
    """Return a function computing the gradients of f with respect to each of its arguments.

    The returned function takes ``(args, dy=None)`` with ``args`` a list of tensors.
    ``unconnected_gradients`` is as for :func:`grad`.

    >>> import tensorplug as tp
    >>> [g.item() for g in tp.grads(lambda a, b: a * b)([tp.tensor(2.0), tp.tensor(5.0)])]
    [5.0, 2.0]
    """

    _check_choice("grads", unconnected_gradients)

    @functools.wraps(f)
    def df(args: Sequence[Tensor] = _MISSING, dy: Any = None) -> list[Tensor]:
        if args is _MISSING:
            raise _no_argument("grads", "the list of tensors")
        _, result = _gradients(
            f, _check_xs(list(args), "grads"), dy, "grads", unconnected_gradients=unconnected_gradients
        )
        return result  # type: ignore[return-value]

    return df


def value_and_grad(
    f: Callable[[Tensor], Tensor], *, unconnected_gradients: UnconnectedGradients = "raise"
) -> Callable[..., tuple[Tensor, Tensor]]:
    """Like :func:`grad`, but the returned function gives ``(f(x), df/dx)``."""

    _check_choice("value_and_grad", unconnected_gradients)

    @functools.wraps(f)
    def df(x: Tensor = _MISSING, dy: Any = None) -> tuple[Tensor, Tensor]:
        if x is _MISSING:
            raise _no_argument("value_and_grad", "the tensor x")
        xs = _check_xs([x], "value_and_grad")
        y, (g,) = _gradients(f, xs, dy, "value_and_grad", unconnected_gradients=unconnected_gradients)
        assert g is not None
        return y, g

    return df


def value_and_grads(
    f: Callable[..., Tensor], *, unconnected_gradients: UnconnectedGradients = "raise"
) -> Callable[..., tuple[Tensor, list[Tensor]]]:
    """Like :func:`grads`, but the returned function gives ``(f(*args), [gradients])``."""

    _check_choice("value_and_grads", unconnected_gradients)

    @functools.wraps(f)
    def df(args: Sequence[Tensor] = _MISSING, dy: Any = None) -> tuple[Tensor, list[Tensor]]:
        if args is _MISSING:
            raise _no_argument("value_and_grads", "the list of tensors")
        xs = _check_xs(list(args), "value_and_grads")
        y, result = _gradients(f, xs, dy, "value_and_grads", unconnected_gradients=unconnected_gradients)
        return y, result  # type: ignore[return-value]

    return df


class VariableGrads(NamedTuple):
    """The result of :func:`variable_grads`: the value of f and a gradient per variable name."""

    value: Tensor
    grads: dict[str, Tensor]


def variable_grads(
    f: Callable[[], Tensor],
    var_list: Sequence[Variable] | None = None,
    *,
    unconnected_gradients: Literal["omit", "zero", "raise"] = "omit",
) -> VariableGrads:
    """Gradients of the scalar ``f()`` with respect to variables (every trainable one by default).

    Variables that ``f`` does not use get no entry, as in TensorFlow.js
    (``unconnected_gradients="omit"``); ``"zero"`` gives them zeros, ``"raise"``
    a GradientError. A variable that ``f`` uses with a constant gradient gets zeros.

    >>> import tensorplug as tp
    >>> w = tp.variable(2.0, name="w_doc")
    >>> value, g = tp.variable_grads(lambda: w * w, [w])
    >>> g["w_doc"].item()
    4.0
    """
    if var_list is None:
        variables = [v for v in live_variables() if v.trainable and is_floating(v.dtype)]
    else:
        variables = list(var_list)
        for v in variables:
            if not isinstance(v, Variable):
                raise GradientError(f"variable_grads: var_list holds a {type(v).__name__}, not a Variable")
    names = [v.name for v in variables]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise GradientError(f"variable_grads: several variables are named {dupes}; give them distinct names")
    _check_xs(variables, "variable_grads")
    if unconnected_gradients not in ("omit", "zero", "raise"):
        raise InvalidArgumentError(
            f"variable_grads: unconnected_gradients={unconnected_gradients!r}; use 'omit' (the default), "
            "'zero' or 'raise'"
        )
    omit = unconnected_gradients == "omit"
    y, result = _gradients(
        lambda *_: f(),
        variables,
        None,
        "variable_grads",
        omit,
        "raise" if omit else unconnected_gradients,
        names,
    )
    if y.size != 1:
        raise GradientError(f"variable_grads: f must return a scalar, got {describe(y)}")
    return VariableGrads(y, {v.name: g for v, g in zip(variables, result, strict=True) if g is not None})


def stop_gradient(x: Tensor) -> Tensor:
    """The same values, seen by autodiff as a constant (no gradient flows through it)."""
    return tensor(x)


def custom_grad(f: Callable[..., tuple[Any, Callable[[Any], Any]]]) -> Callable[..., Any]:
    """Wrap ``f`` so that autodiff uses the gradient it returns instead of differentiating its ops.

    ``f(*inputs)`` returns ``(value, grad_fn)``; ``grad_fn(dy)`` returns the
    gradient for each input (a Tensor for a single input, else a sequence).
    Tensors that ``grad_fn`` needs are simply captured by the closure.

    >>> import tensorplug as tp
    >>> @tp.custom_grad
    ... def halve_gradient(x):
    ...     return tp.identity(x), lambda dy: dy * 0.5
    >>> tp.grad(halve_gradient)(tp.tensor(3.0)).item()
    0.5
    """
    name = getattr(f, "__name__", "custom_grad")

    @functools.wraps(f)
    def wrapped(*inputs: Tensor) -> Any:
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise GradientError(f"custom_grad({name}): input {i} is a {type(x).__name__}, not a Tensor")
        out = f(*inputs)
        if not (isinstance(out, tuple) and len(out) == 2 and callable(out[1])):
            raise GradientError(f"custom_grad({name}): f must return (value, grad_fn), got {type(out).__name__}")
        value, grad_fn = out
        values = [value] if isinstance(value, Tensor) else list(value)
        if not values or not all(isinstance(v, Tensor) for v in values):
            raise GradientError(f"custom_grad({name}): value must be a Tensor or a sequence of Tensors")
        tape = state.tape
        if tape is None or not any(tape.is_watching(x) for x in inputs):
            return value

        def adapter(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
            result = grad_fn(dy)
            return (result,) if isinstance(result, Tensor) or result is None else tuple(result)

        spec = GradientSpec(f"custom_grad({name})", adapter, source="custom_grad")
        inputs_map = {f"input{i}": x for i, x in enumerate(inputs)}
        if isinstance(value, Tensor):  # the output: an alias of the value, on the tape
            return wrap_call(value._data, value._backend, value._dtype, tape, spec.kernel_name, inputs_map, {}, spec)
        raws = [v._data for v in values]  # several: recorded as a list (grad_fn takes a list of dy)
        outputs = wrap_call(raws, values[0]._backend, None, tape, spec.kernel_name, inputs_map, {}, spec)
        for output, v in zip(outputs, values, strict=True):
            output._backend, output._dtype = v._backend, v._dtype  # each the alias of its value
        return tuple(outputs) if isinstance(value, tuple) else list(outputs)

    return wrapped
