"""``tp.export``: trace a function with ``tp.function`` and hand its program to the exporter of a format.

The formats come from plugins (the ``tensorplug_exporters`` hook, see ``tensorplug._plugins._exporters``):
``tensorplug-onnx`` adds ``"onnx"``. The core traces ``fn`` on the example arguments (on the active backend,
as a call of ``tp.function(fn)`` would), reads what an exporter needs besides the :class:`Program` (the
Variables' values, the constants, names for the inputs and outputs) into an :class:`ExportRequest`, and calls
the exporter with it. What the program may hold (gradients, random draws, Variable updates) is the format's
to accept or refuse: a format for training programs could take them all.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tensorplug._plugins._exporters import find_exporter
from tensorplug._runtime._errors import ExportError, FunctionWarning, TensorplugError
from tensorplug._runtime._program import Program
from tensorplug._runtime._registry import resolve
from tensorplug._runtime._tensor import Tensor
from tensorplug._runtime._variable import Variable
from tensorplug._tracing._function import Function
from tensorplug._tracing._signature import flatten

__all__ = ["ExportRequest", "export"]


@dataclass(frozen=True, eq=False)
class ExportRequest:
    """What ``tp.export`` hands an exporter: the traced program and what the program alone does not say.

    ``program`` is the :class:`tensorplug.Program` of one trace of the function (its registers, steps,
    arguments, outputs, each register's dtype and shape: see "Lowering a traced program" in
    ``docs/authoring.md``). ``input_names[i]`` names the tensor argument in ``program.arguments[i]``,
    ``output_names[i]`` the result in ``program.outputs[i]`` (unique, and distinct from the input names).
    ``variable_names[i]`` and ``variable_values[i]`` are the name (made unique) and the value, as a NumPy
    array, of ``program.variables[i]`` at the time of the export; ``constant_values`` maps each register of
    ``program.constants`` to its value as a NumPy array. ``path`` is where to write (None: write nothing,
    return the result), ``options`` the keyword arguments of ``tp.export`` meant for the format.
    """

    format: str
    name: str
    program: Program
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    variable_names: tuple[str, ...]
    variable_values: tuple[np.ndarray, ...]
    constant_values: Mapping[int, np.ndarray]
    path: Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def value(self, register: int) -> np.ndarray | None:
        """The value a register holds at every call when the program fixes it (a constant or a Variable read:
        the Variable's value now), else None."""
        if register in self.constant_values:
            return self.constant_values[register]
        for index, reg in self.program.reads:
            if reg == register:
                return self.variable_values[index]
        return None

    def where(self) -> str:
        """How messages name the export: ``tp.export('predict', format='onnx')``."""
        return f"tp.export({self.name!r}, format={self.format!r})"


def export(
    fn: Callable[..., Any],
    *example_args: Any,
    format: str = "onnx",
    path: str | os.PathLike[str] | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    **options: Any,
) -> Any:
    """Trace ``fn`` on ``example_args`` with ``tp.function`` and write its program in ``format``; return what the
    format's exporter returns (for ``"onnx"``, the ``onnx.ModelProto``), after writing it to ``path`` if given.

    The tensor arguments become the model's inputs, with their dtypes and shapes; other arguments are
    static, as for ``tp.function`` (their values are part of the trace). Variables the function reads are
    written with their values now. Inputs are named after ``fn``'s parameters (``x``, or ``batch_0``,
    ``batch_1`` for a list ``batch``), outputs ``output`` (one tensor), ``output_0``... (a tuple) or by key
    (a dict); ``input_names`` and ``output_names`` choose others. ``options`` go to the exporter
    (``opset=`` for ONNX, say). ``tp.exporters()`` lists the formats installed; ``tensorplug-onnx`` adds
    ``"onnx"``. The function runs once, eagerly, while it is traced.

    >>> import tensorplug as tp
    >>> _ = tp.register_exporter("text", lambda request: str(request.program).splitlines()[-2:])
    >>> tp.export(lambda x: tp.relu(x) * 2.0, tp.tensor([1.0, -1.0]), format="text")  # doctest: +ELLIPSIS
    ['  r2 = Relu(x=r0) -> float32[2]', '  r3 = Multiply(a=r2, b=r1) -> float32[2]']
    >>> _ = tp.unregister_exporter("text")
    """
    name = getattr(fn, "__name__", type(fn).__name__)
    call = f"tp.export({name!r}, format={format!r})"
    spec = find_exporter(format, call)
    try:
        exporter = resolve(spec.exporter, f"exporter {format!r}")
    except Exception as exc:
        raise ExportError(
            f"{call}: the exporter of {format!r} (from {spec.source}) could not be imported: {type(exc).__name__}: "
            f"{exc}. Reinstall {spec.source} with its dependencies"
        ) from exc
    python_fn = fn.python_function if isinstance(fn, Function) else fn
    traced: Function[..., Any] = Function(python_fn, max_traces=1, lower=False)
    traced.__name__ = name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FunctionWarning)  # the reason is in the error program() raises
        try:
            result = traced(*example_args)
            program = traced.program(*example_args)
        except TensorplugError as exc:
            if isinstance(exc, ExportError):
                raise
            raise ExportError(
                f"{call}: the function cannot be traced into a program: {exc}. tp.export traces it as "
                "tp.function does; call it outside tp.grad scopes and other traces"
            ) from exc
    inputs = _names(call, "input_names", input_names, len(program.arguments), _argument_names(python_fn, example_args))
    outputs = _names(call, "output_names", output_names, len(program.outputs), _result_names(result))
    clash = sorted(set(inputs) & set(outputs))
    if clash:
        if output_names is not None or input_names is not None:
            raise ExportError(f"{call}: {clash[0]!r} names both an input and an output; names must be distinct")
        outputs = tuple(f"{n}_out" if n in clash else n for n in outputs)
    values = []
    for index, ref in enumerate(program.variables):
        variable = ref()
        if variable is None:  # (the trace holds the Variables it reads only weakly)
            raise ExportError(f"{call}: the Variable {program.variable_names[index]!r} no longer exists")
        values.append(np.asarray(variable.numpy()))
    to_host = program.backend.to_host
    request = ExportRequest(
        format=format,
        name=name,
        program=program,
        input_names=inputs,
        output_names=outputs,
        variable_names=_unique(list(program.variable_names), taken={*inputs, *outputs}),
        variable_values=tuple(values),
        constant_values={reg: np.asarray(to_host(raw)) for reg, raw in program.constants},
        path=Path(path) if path is not None else None,
        options=dict(options),
    )
    try:
        return exporter(request)
    except TensorplugError:
        raise
    except Exception as exc:
        raise ExportError(
            f"{call}: the exporter of {format!r} from {spec.source} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _names(call: str, what: str, given: Sequence[str] | None, count: int, derived: list[str] | None) -> tuple[str, ...]:
    """The names asked for (checked), else those derived from the function (if they fit), else generic ones."""
    if given is not None:
        names = list(given) if not isinstance(given, str) else [given]
        if len(names) != count or not all(isinstance(n, str) and n for n in names) or len(set(names)) != count:
            raise ExportError(
                f"{call}: {what} must be {count} distinct non-empty strs, one per "
                f"{'tensor argument' if what == 'input_names' else 'returned tensor'}; got {list(given)!r}"
            )
        return tuple(names)
    stem = "input" if what == "input_names" else "output"
    if derived is None or len(derived) != count:
        derived = [stem] if count == 1 and stem == "output" else [f"{stem}_{i}" for i in range(count)]
    return _unique(derived)


def _unique(names: list[str], taken: set[str] | frozenset[str] = frozenset()) -> tuple[str, ...]:
    """``names`` with repeats (and names in ``taken``) made distinct by a suffix: ``w``, ``w_1``."""
    seen = set(taken)
    result = []
    for name in names:
        candidate, n = name, 0
        while candidate in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate)
        result.append(candidate)
    return tuple(result)


def _argument_names(fn: Callable[..., Any], args: tuple[Any, ...]) -> list[str] | None:
    """A name per tensor argument of the trace (each tensor once, Variables left out), in trace order."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rest = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), None)
    names: list[str] = []
    seen: set[int] = set()

    def walk(value: Any, label: str) -> None:
        if isinstance(value, Tensor):
            if not isinstance(value, Variable) and id(value) not in seen:
                seen.add(id(value))
                names.append(label)
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                walk(item, f"{label}_{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{label}_{key}")

    for i, arg in enumerate(args):
        if i < len(positional):
            label = positional[i]
        else:
            label = f"{rest}_{i - len(positional)}" if rest is not None else f"input_{i}"
        walk(arg, label)
    return names


def _result_names(result: Any) -> list[str] | None:
    """A name per returned tensor, in the order of the program's outputs."""
    leaves: list[Tensor] = []
    structure = flatten(result, leaves)
    if structure is None:
        return ["output"]
    names: list[str] = []

    def walk(node: Any, label: str) -> None:
        if node is None:
            names.append(label)
            return
        kind, content = node
        if kind == "static":
            return
        items = content.items() if kind is dict else enumerate(content)
        for key, child in items:
            walk(child, f"{label}_{key}")

    walk(structure, "output")
    if isinstance(result, dict):
        names = [n.removeprefix("output_") for n in names]
    return names
