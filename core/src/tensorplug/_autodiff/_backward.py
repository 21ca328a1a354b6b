"""The tape and the backward pass: a gradient scope records kernels on the thread's tape; the backward
walk prunes the records to the path from the inputs to the output and calls each kernel's gradient in
reverse order, adding up the gradients of each tensor. The public front ends (``tp.grad`` and friends) are
in :mod:`tensorplug._autodiff._tape`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from tensorplug._runtime._dtypes import FLOAT_DTYPES, is_floating
from tensorplug._runtime._errors import GradientError, InvalidArgumentError
from tensorplug._runtime._observe import everywhere, gradient_made
from tensorplug._runtime._registry import GradientSpec, decomposition_registry, gradient_registry, resolve
from tensorplug._runtime._state import Record, Tape, no_grad, state
from tensorplug._runtime._tensor import Tensor, describe, wrap_call
from tensorplug.ops import add, ones_like, tensor, zeros_like


class _Scope:
    """Record the kernels run inside it on this thread's tape, watching ``xs``."""

    __slots__ = ("_saved", "tape")

    def __init__(self, xs: Sequence[Tensor]) -> None:
        self._saved = state.tape
        self.tape = self._saved if self._saved is not None else Tape()
        self.tape.watch(xs)

    def __enter__(self) -> _Scope:
        state.tape = self.tape
        return self

    def __exit__(self, *exc: object) -> None:
        state.tape = self._saved


def _input_tensors(record: Record) -> list[Tensor]:
    """Every input tensor of a record, list inputs flattened."""
    tensors: list[Tensor] = []
    for value in record.inputs.values():
        if type(value) is list or type(value) is tuple:
            tensors.extend(value)
        else:
            tensors.append(value)
    return tensors


def _path(records: list[Record], xs: Sequence[Tensor], y: Tensor) -> tuple[list[Record], set[int]]:
    """The records on a path from any of ``xs`` to ``y`` in backward order, and the ids of the
    tensors that depend on ``xs`` (only those need gradients)."""
    reachable = {id(x) for x in xs}
    forward = []
    for record in records:  # forward: keep the records that read a tensor depending on xs
        if _reads(record, reachable):
            forward.append(record)
            for o in record.outputs:
                reachable.add(id(o))
    needed = {id(y)}
    path = []
    for record in reversed(forward):  # backward: keep those whose outputs y depends on
        for o in record.outputs:
            if id(o) in needed:
                path.append(record)
                for t in _input_tensors(record):
                    needed.add(id(t))  # a superset of what matters: only outputs are looked up
                break
    return path, reachable


def _reads(record: Record, ids: set[int]) -> bool:
    """Whether the record reads a tensor whose id is in ``ids`` (without listing its inputs: the forward pruning
    asks it of every record)."""
    for value in record.inputs.values():
        if type(value) is list or type(value) is tuple:
            for u in value:
                if id(u) in ids:
                    return True
        elif id(value) in ids:
            return True
    return False


def _gradient_spec(record: Record) -> GradientSpec:
    spec = record.grad if record.grad is not None else gradient_registry.get(record.kernel_name)
    if spec is None:
        spec = _through_decomposition(record)
    if spec is None:
        raise GradientError(
            f"no gradient is registered for kernel {record.kernel_name!r}, which lies between the inputs "
            f"and the output (inputs: {_describe_inputs(record)}); register one with "
            f"tp.register_gradient({record.kernel_name!r}, ...), or say how it decomposes into ops with "
            f"tp.register_decomposition({record.kernel_name!r}, ...), or wrap the computation in tp.custom_grad"
        )
    if spec.grad is None:
        raise GradientError(
            f"kernel {record.kernel_name!r} is not differentiable (declared by {spec.source}), but it lies "
            f"between the inputs and the output (inputs: {_describe_inputs(record)}); use tp.stop_gradient "
            "on its input if no gradient should flow there"
        )
    return spec


_DECOMPOSED: dict[tuple[Any, tuple[str, ...]], GradientSpec] = {}  # (decomposition, input names) -> its gradient
decomposition_registry.on_change(lambda key: _DECOMPOSED.clear())  # none is kept for a decomposition that is gone


def _through_decomposition(record: Record) -> GradientSpec | None:
    """The gradient of a kernel without one, through its decomposition (None: it has none): the
    vector-Jacobian product of the decomposition's ops, recorded like any ops (so differentiable again)."""
    decomposition = decomposition_registry.get(record.kernel_name)
    if decomposition is None:
        return None
    names = tuple(record.inputs)
    spec = _DECOMPOSED.get((decomposition, names))
    if spec is not None:
        return spec
    kernel = record.kernel_name

    def grad(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, ...]:
        if any(not isinstance(value, Tensor) for value in saved):
            raise GradientError(
                f"the gradient of {kernel!r} through its decomposition (from {decomposition.source}) takes tensor "
                f"inputs, not lists; register a gradient with tp.register_gradient({kernel!r}, ...)"
            )
        fn = resolve(decomposition.fn, f"decomposition of {kernel!r} (from {decomposition.source})")
        floats = [i for i, value in enumerate(saved) if is_floating(value.dtype)]

        def decomposed(*xs: Tensor) -> Tensor:
            values = list(saved)
            for i, x in zip(floats, xs, strict=True):
                values[i] = x
            out: Tensor = fn(dict(zip(names, values, strict=True)), dict(attrs))
            return out

        if not floats:
            return tuple(None for _ in names)
        where = f"the gradient of {kernel!r} through its decomposition"
        _, found = _gradients(decomposed, [saved[i] for i in floats], dy, where, unconnected_gradients="zero")
        result: list[Any] = [None] * len(names)
        for i, g in zip(floats, found, strict=True):
            result[i] = g
        return tuple(result)

    spec = GradientSpec(kernel, grad, names, (), source=decomposition.source, replay=False)
    _DECOMPOSED[(decomposition, names)] = spec
    return spec


def _describe_inputs(record: Record) -> str:
    parts = []
    for name, value in record.inputs.items():
        if isinstance(value, Tensor):
            parts.append(f"{name}={describe(value)}")
        else:
            parts.append(f"{name}=[{', '.join(describe(u) for u in value)}]")
    return ", ".join(parts)


def _call_gradient(record: Record, dy: Any) -> Sequence[Any]:
    """Call the record's gradient and return one entry per input name, in input order."""
    spec = record.grad
    if spec is None:
        spec = gradient_registry.get(record.kernel_name)
    if spec is None or spec.grad is None:
        spec = _gradient_spec(record)  # raises, saying what is missing
    return call_gradient(record, spec, dy, saved_values(record, spec))


def saved_values(record: Record, spec: GradientSpec) -> tuple[Any, ...]:
    """What ``spec`` saves of the record: the inputs it names, then the outputs at its indices."""
    inputs = record.inputs
    if spec.outputs_to_save:
        outputs = record.outputs
        return (*[inputs[name] for name in spec.inputs_to_save], *[outputs[index] for index in spec.outputs_to_save])
    return tuple([inputs[name] for name in spec.inputs_to_save])


def call_gradient(record: Record, spec: GradientSpec, dy: Any, saved: tuple[Any, ...]) -> Sequence[Any]:
    """``spec``'s gradient of the record for the upstream ``dy`` and the ``saved`` values: one entry per input
    name, in input order (a Tensor, None, or a zero-argument callable giving one)."""
    fn: Any = spec.grad
    if isinstance(fn, str):
        fn = resolve(fn, f"gradient of {record.kernel_name!r}")
    inputs = record.inputs
    result = fn(dy, saved, record.attrs)
    if (type(result) is tuple or type(result) is list) and len(result) == len(inputs):
        return result  # the common case: one entry per input, nothing to convert
    names = list(inputs)
    if isinstance(result, dict):
        unknown = set(result) - set(names)
        if unknown:
            raise GradientError(
                f"the gradient of kernel {record.kernel_name!r} (from {spec.source}) returned entries for "
                f"{sorted(unknown)}, which are not inputs of the kernel (inputs: {names})"
            )
        return [result.get(n) for n in names]
    if isinstance(result, Tensor) or result is None:
        result = (result,)
    result = list(result)
    if len(result) != len(names):
        raise GradientError(
            f"the gradient of kernel {record.kernel_name!r} (from {spec.source}) returned {len(result)} "
            f"entries for {len(names)} inputs ({names}); return one per input, None for no gradient"
        )
    return result


class GradientPrograms(Protocol):
    """What eager backprop asks of the gradient programs (tp.function's tracing layer has them; the package
    plugs them in): the whole backward pass of a tape from one program, or one record's gradients."""

    def replay_backward(self, records: list[Record], xs: Sequence[Tensor], y: Tensor, dy: Tensor | None) -> Any:
        """The gradients of ``y`` with respect to each of ``xs`` (None where none flows), from the records of a
        tape that watched ``xs`` only, for the upstream gradient ``dy`` (None: ones like ``y``, made inside the
        program); or None when the backward pass is to be walked record by record."""

    def replay_gradient(self, record: Record, dy: Tensor, reachable: set[int]) -> Any:
        """The gradient of each of the record's inputs for the upstream ``dy``, each of its input's shape and
        dtype, None for an input that needs none (one not in ``reachable``, or not a float); or None when the
        record's gradient is to be called as written."""


_programs: GradientPrograms | None = None
_load_programs: Callable[[], GradientPrograms] | None = None


def replay_gradients_with(load: Callable[[], GradientPrograms] | None) -> None:
    """Let the gradient programs that ``load()`` gives (called once, at the first backprop that can use them)
    serve the first-order, unobserved backward passes and steps they can; None: every gradient is called as
    written."""
    global _programs, _load_programs
    _programs = None
    _load_programs = load


def _gradient_programs() -> GradientPrograms | None:
    """The gradient programs, for a backprop that nobody records or observes: a recording outer scope needs the
    gradient ops on its tape, and tp.profile, debug mode and tp.function's tracer need to see each kernel."""
    global _programs
    if state.tape is not None or state.observers is not None or everywhere:
        return None
    if _programs is None and _load_programs is not None:
        _programs = _load_programs()
    return _programs


def _own_path(records: list[Record], xs: Sequence[Tensor]) -> tuple[list[Record], set[int]]:
    """``_path`` for the records of a tape that watched only ``xs``: each record read one of ``xs`` or an output
    of an earlier record (that is why it was recorded), so every record depends on ``xs``. Records that ``y``
    does not depend on stay in the path: no gradient reaches their outputs, so backprop passes them by."""
    reachable = {id(x) for x in xs}
    for record in records:
        for o in record.outputs:
            reachable.add(id(o))
    return records[::-1], reachable


def _backprop(
    records: list[Record], xs: Sequence[Tensor], y: Tensor, dy: Tensor, own_tape: bool = False
) -> list[Tensor | None]:
    """Gradients of ``y`` (seeded with ``dy``) with respect to each of ``xs``; None where unconnected.

    Only inputs that depend on ``xs`` get gradients: a gradient entry given
    as a zero-argument callable is not even computed for the others. ``own_tape``: the records are those of
    a tape that watched ``xs`` only (see ``_own_path``).
    """
    grads: dict[int, Tensor] = {id(y): dy}
    path, reachable = _own_path(records, xs) if own_tape else _path(records, xs, y)
    outer = state.gradient_of  # a backprop inside a gradient (higher order) restores the outer one
    programs = _gradient_programs()
    replayer = None if programs is None else programs.replay_gradient
    try:
        for record in path:
            outputs = record.outputs
            if type(outputs) is tuple:  # a single-output kernel; one that returns a list records a list
                upstream: Any = grads.get(id(outputs[0]))
                if upstream is None:
                    continue
                if replayer is not None:
                    state.gradient_of = record.kernel_name
                    replayed = replayer(record, upstream, reachable)
                    if replayed is not None:  # checked against each input's shape and dtype when traced
                        for value, g in zip(record.inputs.values(), replayed, strict=True):
                            if g is not None:
                                previous = grads.get(id(value))
                                grads[id(value)] = g if previous is None else add(previous, g)
                        continue
            else:
                dys = [grads.get(id(o)) for o in outputs]
                if all(d is None for d in dys):
                    continue
                upstream = [d if d is not None else zeros_like(o) for d, o in zip(dys, outputs, strict=True)]
            state.gradient_of = record.kernel_name  # what observers (profile, debug) see as the backward phase
            results = _call_gradient(record, upstream)
            for (name, value), g in zip(record.inputs.items(), results, strict=True):
                if g is None:
                    continue
                if isinstance(value, Tensor):
                    if id(value) in reachable:
                        _accumulate(grads, record, name, value, g)
                    continue
                if callable(g):
                    g = g()
                if not isinstance(g, list | tuple) or len(g) != len(value):
                    raise GradientError(
                        f"the gradient of kernel {record.kernel_name!r} for list input {name!r} must be a list "
                        f"of {len(value)} entries, got {type(g).__name__}"
                    )
                for i, (u, gu) in enumerate(zip(value, g, strict=True)):
                    if gu is not None and id(u) in reachable:
                        _accumulate(grads, record, f"{name}[{i}]", u, gu)
    finally:
        state.gradient_of = outer
    return [grads.get(id(x)) for x in xs]


def _accumulate(grads: dict[int, Tensor], record: Record, name: str, x: Tensor, g: Any) -> None:
    """Check one input's gradient (evaluating it first if it is lazy) and add it to what ``x`` has."""
    dtype = x.dtype
    if dtype not in FLOAT_DTYPES:
        return  # integer and bool inputs take no gradient
    if callable(g):
        g = g()
        if g is None:
            return
    if not isinstance(g, Tensor):
        raise GradientError(
            f"the gradient of kernel {record.kernel_name!r} for input {name!r} is a {type(g).__name__}, "
            "not a Tensor or None"
        )
    if g._data.shape != x._data.shape or g.dtype != dtype:  # raw shapes: tuples (torch.Size is one) compare alike
        raise GradientError(
            f"the gradient of kernel {record.kernel_name!r} for input {name!r} is {describe(g)}, "
            f"but the input is {describe(x)}; a gradient must match its input's shape and dtype"
        )
    if state.observers is not None or everywhere:  # an observer may watch gradients (debug mode checks them)
        gradient_made(record.kernel_name, name, g)
    previous = grads.get(id(x))
    grads[id(x)] = g if previous is None else add(previous, g)


def _check_output(y: Any, fname: str) -> Tensor:
    """``y``, f's output, when it can be differentiated: a float Tensor."""
    if not isinstance(y, Tensor):
        raise GradientError(f"{fname}: f must return a Tensor, got {type(y).__name__}")
    if not is_floating(y.dtype):
        raise GradientError(f"{fname}: f returned {describe(y)}; only float outputs can be differentiated")
    return y


def _seed(y: Any, dy: Any, fname: str) -> tuple[Tensor, Tensor]:
    y = _check_output(y, fname)
    if dy is None:
        if state.tape is None:  # nothing records here (no outer scope): no_grad would change nothing
            return y, ones_like(y)
        with no_grad():  # the seed is a constant: recording it would only send zeros back
            return y, ones_like(y)
    if not isinstance(dy, Tensor):
        dy = tensor(dy, y.dtype)
    if dy.shape != y.shape:
        raise GradientError(f"{fname}: dy is {describe(dy)} but f's output is {describe(y)}; their shapes must match")
    return y, dy


_NO_ATTRS: dict[str, Any] = {}
_GRADIENT_OF = "GradientOf"
_GRADIENT_OF_SPEC = GradientSpec(_GRADIENT_OF, lambda dy, saved, attrs: (None, dy), source="tensorplug", replay=True)
"""A gradient computed while an outer scope records is linked to the ``y`` it is the gradient of,
with no gradient flowing to ``y`` (it passes to the gradient as it was computed). Its value depends
on what ``y`` depends on, even where no recorded kernel says so (a constant gradient: the Hessian
of a linear f), so the outer scope gives zeros there, not an "unconnected" error."""


def _link(tape: Tape, y: Tensor, g: Tensor) -> Tensor:
    """``g`` as recorded on ``tape`` as the gradient of ``y`` (see _GRADIENT_OF_SPEC)."""
    linked: Tensor = wrap_call(
        g._data, g._backend, g._dtype, tape, _GRADIENT_OF, {"y": y, "g": g}, _NO_ATTRS, _GRADIENT_OF_SPEC
    )
    return linked


def _check_choice(fname: str, unconnected_gradients: str) -> None:
    if unconnected_gradients not in ("raise", "zero"):
        raise InvalidArgumentError(
            f"{fname}: unconnected_gradients={unconnected_gradients!r}; use 'raise' (the default) or 'zero'"
        )


def _depends_on(records: list[Record], x: Tensor, y: Tensor) -> bool:
    """Whether the records compute ``y`` from ``x`` (whatever gradient flows back along the way)."""
    return id(y) in _path(records, [x], y)[1]


def _check_xs(xs: Sequence[Any], fname: str) -> list[Tensor]:
    checked = []
    for i, x in enumerate(xs):
        if not isinstance(x, Tensor):
            raise GradientError(f"{fname}: argument {i} is a {type(x).__name__}; pass Tensors (tp.tensor(...))")
        if not is_floating(x.dtype):
            raise GradientError(f"{fname}: argument {i} is {describe(x)}; only float tensors can be differentiated")
        checked.append(x)
    return checked


UnconnectedGradients = Literal["raise", "zero"]
"""What a gradient function gives for an argument that ``y`` does not depend on at all:
"raise" (a GradientError) or "zero" (zeros of the argument's shape), as TensorFlow's
``unconnected_gradients``. Where ``y`` depends on ``x`` but the gradient is constant (the
second derivative of a linear function), the gradient is zero whatever the choice."""


def _gradients(
    f: Callable[..., Any],
    xs: Sequence[Tensor],
    dy: Any,
    fname: str,
    allow_unconnected: bool = False,
    unconnected_gradients: str = "raise",
    names: Sequence[str] | None = None,  # of variables, for messages
) -> tuple[Tensor, list[Tensor | None]]:
    """``y = f(*xs)`` and its gradients. Where ``y`` depends on ``xs[i]`` but no gradient flows back
    (a constant gradient), entry ``i`` is zeros; where it does not depend on it at all, entry ``i``
    is zeros with ``unconnected_gradients="zero"``, None with ``allow_unconnected``, else an error."""
    scope = _Scope(xs)
    with scope:
        try:
            y = f(*xs)
        except TypeError as exc:
            hint = _signature_hint(f, len(xs), fname)
            if hint is None:
                raise
            raise GradientError(hint) from exc
    records = scope.tape.records
    own_tape = scope.tape is not scope._saved
    programs = _gradient_programs() if own_tape else None
    result = None
    if programs is not None and dy is None:  # the seed, ones like y, is made inside the program
        result = programs.replay_backward(records, xs, _check_output(y, fname), None)
    if result is None:
        y, seed = _seed(y, dy, fname)
        result = None if programs is None or dy is None else programs.replay_backward(records, xs, y, seed)
    if result is None:
        result = _backprop(records, xs, y, seed, own_tape=own_tape)
    for i, g in enumerate(result):
        if g is not None:
            continue
        x = xs[i]
        if unconnected_gradients == "zero" or _depends_on(records, x, y):
            result[i] = zeros_like(x)  # recorded when an outer scope watches x: higher orders get zeros too
        elif not allow_unconnected:
            raise GradientError(
                f"{fname}: cannot compute the gradient of y=f(x) with respect to "
                f"{f'argument {i}' if names is None else f'variable {names[i]!r}'} "
                f"({describe(x)}): no recorded kernel connects it to y, so y does not depend on it. Make sure "
                "f computes y from its arguments with tensorplug ops (not through numpy or Python floats), "
                "or pass unconnected_gradients='zero' to get zeros for it."
            )
    tape = state.tape  # an outer scope, when this one is nested (higher order)
    if tape is not None and tape.is_watching(y):
        result = [None if g is None else _link(tape, y, g) for g in result]
    return y, result


_VARIABLES_HINT = (
    "to differentiate a function of no argument with respect to the Variables it reads, use "
    "tp.variable_grads(f) (its value, and a gradient per variable name), or the minimize(f) of a tp.train optimizer"
)


def _signature_hint(f: Callable[..., Any], count: int, fname: str) -> str | None:
    """Why ``f`` cannot take ``count`` positional tensors (when its signature says so), with what to use instead."""
    import inspect

    try:
        signature = inspect.signature(f)
        signature.bind(*range(count))
    except TypeError as exc:
        name = getattr(f, "__name__", "f")
        message = f"{fname}: f ({name}{signature}) cannot be called with the {count} tensor(s) it is differentiated "
        message += f"with respect to ({exc})"
        if not signature.parameters:
            message += f"; {_VARIABLES_HINT}"
        return message
    except ValueError:
        return None  # no signature to read (a builtin)
    return None
