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
import math
import os
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tensorplug import kernel_names as K
from tensorplug._plugins._exporters import find_exporter
from tensorplug._plugins._translations import translations
from tensorplug._runtime._errors import ExportError, FunctionWarning, TensorplugError
from tensorplug._runtime._program import Program, Step
from tensorplug._runtime._registry import TranslationSpec, decomposition_registry, kernel_registry, resolve
from tensorplug._runtime._tensor import Tensor
from tensorplug._runtime._variable import Variable
from tensorplug._tracing._function import Function
from tensorplug._tracing._signature import flatten, rebuild

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
    ``dynamic`` maps each register whose size along some axes is not fixed (``dynamic_axes``) to
    ``{axis: symbol}``; every other size in ``program.specs`` is fixed. ``translations`` maps each kernel that a
    distribution (or user code) says how to write in this format to its :class:`TranslationSpec`
    (``tp.register_translation``): an exporter uses it before any converter of its own. :meth:`decomposed` gives
    the request with the steps of kernels it cannot write replaced by their decompositions.
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
    dynamic: Mapping[int, Mapping[int, str]] = field(default_factory=dict)
    translations: Mapping[str, TranslationSpec] = field(default_factory=dict)

    def decomposed(self, kernels: Collection[str]) -> ExportRequest:
        """This request with each step of ``kernels`` that has a decomposition (``tp.register_decomposition``)
        replaced by the steps of its decomposition, traced for the step's dtypes and shapes (in turn for kernels
        of ``kernels`` that a decomposition calls); steps of kernels without one are left as they are."""
        from tensorplug._tracing._inline import inline_decompositions

        return inline_decompositions(self, kernels)

    def translator(self, kernel: str) -> Callable[..., Any] | None:
        """The translation function of ``kernel`` in this format (imported if it was named lazily), or None."""
        spec = self.translations.get(kernel)
        if spec is None:
            return None
        try:
            translate: Callable[..., Any] = resolve(spec.translate, f"translation of {kernel!r}")
        except Exception as exc:
            raise ExportError(
                f"{self.where()}: the {self.format} translation of {kernel!r} from {spec.source} could not be "
                f"imported: {type(exc).__name__}: {exc}. Reinstall {spec.source} with its dependencies"
            ) from exc
        return translate

    def provider(self, kernel: str) -> str | None:
        """The distribution whose kernel ``kernel`` the program's backend runs (``"runtime"``: user code), or where
        the backend has none, whose decomposition; None when neither exists."""
        spec = kernel_registry.get((kernel, self.program.backend.name))
        if spec is not None:
            return str(spec.source)
        decomposition = decomposition_registry.get(kernel)
        return None if decomposition is None else str(decomposition.source)

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
    dynamic_axes: Mapping[str, Sequence[int] | Mapping[int, str]] | None = None,
    **options: Any,
) -> Any:
    """Trace ``fn`` on ``example_args`` with ``tp.function`` and write its program in ``format``; return what the
    format's exporter returns (for ``"onnx"``, the ``onnx.ModelProto``), after writing it to ``path`` if given.

    The tensor arguments become the model's inputs, with their dtypes and shapes; other arguments are
    static, as for ``tp.function`` (their values are part of the trace). Variables the function reads are
    written with their values now. Inputs are named after ``fn``'s parameters (``x``, or ``batch_0``,
    ``batch_1`` for a list ``batch``), outputs ``output`` (one tensor), ``output_0``... (a tuple) or by key
    (a dict); ``input_names`` and ``output_names`` choose others. ``dynamic_axes`` leaves sizes open:
    ``{"x": [0]}`` (or ``{"x": {0: "batch"}}``) makes axis 0 of input ``x`` any size. The function is then
    traced a second time, one larger along each of those axes (so give an example of size 2 or more there),
    and the two programs must be the same but for those sizes: a program whose attrs or constants depend on
    them (a reshape to a fixed size, say) is refused. ``options`` go to the exporter (``opset=`` for ONNX,
    say). ``tp.exporters()`` lists the formats installed; ``tensorplug-onnx`` adds
    ``"onnx"``. The function runs once, eagerly, while it is traced.

    >>> import tensorplug as tp
    >>> def describe(request):
    ...     return request.input_names, [s.kernel for s in request.program.kernel_steps], request.output_names
    >>> _ = tp.register_exporter("summary", describe)
    >>> tp.export(lambda pixels: tp.relu(pixels) * 2.0, tp.tensor([1.0, -1.0]), format="summary")
    (('pixels',), ['Relu', 'Multiply'], ('output',))
    >>> _ = tp.unregister_exporter("summary")
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
    result, program = _trace(call, python_fn, name, example_args)
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
        dynamic={}
        if not dynamic_axes
        else _dynamic(call, python_fn, name, example_args, program, inputs, dynamic_axes),
        translations={spec.kernel_name: spec for spec in translations(format)},
    )
    try:
        return exporter(request)
    except TensorplugError:
        raise
    except Exception as exc:
        raise ExportError(
            f"{call}: the exporter of {format!r} from {spec.source} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _trace(call: str, fn: Callable[..., Any], name: str, args: tuple[Any, ...]) -> tuple[Any, Program]:
    """Trace ``fn`` on ``args``: its result and its program (an ExportError when it cannot be traced)."""
    traced: Function[..., Any] = Function(fn, max_traces=1, lower=False)
    traced.__name__ = name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FunctionWarning)  # the reason is in the error program() raises
        try:
            return traced(*args), traced.program(*args)
        except TensorplugError as exc:
            if isinstance(exc, ExportError):
                raise
            raise ExportError(
                f"{call}: the function cannot be traced into a program: {exc}. tp.export traces it as "
                "tp.function does; call it outside tp.grad scopes and other traces"
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


# -- dynamic axes ------------------------------------------------------------------------------------------------


def _dynamic(
    call: str,
    fn: Callable[..., Any],
    name: str,
    args: tuple[Any, ...],
    program: Program,
    inputs: tuple[str, ...],
    dynamic_axes: Mapping[str, Sequence[int] | Mapping[int, str]],
) -> dict[int, dict[int, str]]:
    """``{register: {axis: symbol}}`` for every register whose size depends on the dynamic axes of the inputs,
    found by tracing again one larger along each; an ExportError where anything else depends on them."""
    from tensorplug.ops import zeros  # (ops make the larger example tensors)

    leaves = _argument_tensors(args)
    asked: dict[int, dict[int, str]] = {}  # argument position -> {axis: symbol}
    for input_name, axes in dynamic_axes.items():
        if input_name not in inputs:
            raise ExportError(f"{call}: dynamic_axes names {input_name!r}, which is not an input ({', '.join(inputs)})")
        position = inputs.index(input_name)
        rank = len(leaves[position].shape)
        symbols = dict(axes) if isinstance(axes, Mapping) else {a: f"{input_name}_dim{a}" for a in axes}
        for axis in list(symbols):
            if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
                raise ExportError(f"{call}: dynamic_axes[{input_name!r}] names axis {axis!r}; {input_name!r} has "
                                  f"rank {rank}")  # fmt: skip
            if leaves[position].shape[axis] < 2:
                raise ExportError(
                    f"{call}: give an example of size 2 or more along the dynamic axis {axis} of {input_name!r} "
                    f"(it is {leaves[position].shape[axis]}): a size of 1 broadcasts, so it is traced as no other"
                )
        asked[position] = {a % rank: str(s) for a, s in symbols.items()}
    others = []
    for grow in _GROWTHS:
        larger = {}
        shapes = []
        for position, axes in asked.items():
            leaf = leaves[position]
            shape = [grow(n) if i in axes else n for i, n in enumerate(leaf.shape)]
            larger[id(leaf)] = zeros(shape, leaf.dtype)
            shapes.append(f"{inputs[position]} of shape {tuple(shape)}")
        try:
            _, traced = _trace(call, fn, name, _swap(args, larger))
        except ExportError as exc:
            raise ExportError(
                f"{call}: a dynamic axis takes any size, but traced again with {', '.join(shapes)} (zeros), the "
                f"function fails: {str(exc).removeprefix(call + ': ')}"
            ) from exc
        _same_program(call, program, traced)
        others.append(traced)
    other = others[0]
    for traced in others[1:]:  # each register grows along the same axes at every size
        for register, (spec, one, grown) in enumerate(zip(program.specs, other.specs, traced.specs, strict=True)):
            if spec.shape is None or one.shape is None or grown.shape is None:
                continue
            if [a == b for a, b in zip(spec.shape, one.shape, strict=True)] != [
                a == b for a, b in zip(spec.shape, grown.shape, strict=True)
            ]:
                raise _built_in(call, f"the size of register r{register} ({spec}) depends on them another way")
    known: dict[tuple[int, int], str] = {}
    for position, axes in asked.items():
        register = program.arguments[position]
        for axis, symbol in axes.items():
            before, after = program.specs[register].shape, other.specs[register].shape
            assert before is not None
            assert after is not None
            known.setdefault((before[axis], after[axis]), symbol)
    dynamic: dict[int, dict[int, str]] = {}
    for register, (spec, grown) in enumerate(zip(program.specs, other.specs, strict=True)):
        if spec.shape is None or spec.shape == grown.shape:
            continue
        assert grown.shape is not None
        axes_of = dynamic.setdefault(register, {})
        for axis, (n, m) in enumerate(zip(spec.shape, grown.shape, strict=True)):
            if n != m:
                axes_of[axis] = known.setdefault((n, m), f"dim_{len(known)}")
    return dynamic


def _grow_to_prime(n: int) -> int:
    """The smallest prime above ``3 * n + 4``: a size that shares no factor with the others traced."""
    m = 3 * n + 5
    while any(m % d == 0 for d in range(2, math.isqrt(m) + 1)):
        m += 1
    return m


# The sizes a dynamic axis of size n is traced at, besides n: programs must be the same at all of them, but
# for sizes. Two sizes are not enough (``x[: x.shape[0] // 2]`` slices 2 rows at 4 and at 5); an odd one far
# off and a prime catch sizes computed from the example's size on the host.
_GROWTHS: tuple[Callable[[int], int], ...] = (lambda n: n + 1, lambda n: 2 * n + 3, _grow_to_prime)


def _follows(step: Step, attr: str, program: Program) -> bool:
    """A Reshape's target shape is its output's shape: where it grows with a dynamic axis, an exporter writes
    that axis as the size the rest leaves (ONNX's -1), so it may differ between the traces."""
    return (
        step.kernel == K.RESHAPE and attr == "shape" and program.specs[step.outputs[0]].shape == tuple(step.attrs[attr])
    )


def _argument_tensors(args: tuple[Any, ...]) -> list[Tensor]:
    """The tensor arguments in trace order (each once, Variables left out), as ``program.arguments``: the walk
    that the trace makes of its arguments (``rebuild``)."""
    found: list[Tensor] = []
    seen: set[int] = set()

    def collect(t: Tensor) -> Tensor:
        if not isinstance(t, Variable) and id(t) not in seen:
            seen.add(id(t))
            found.append(t)
        return t

    rebuild(args, collect)
    return found


def _swap(value: Any, replacements: Mapping[int, Tensor]) -> Any:
    """``value`` with the tensors ``replacements`` names (by id) replaced, walked as the trace walks it."""
    return rebuild(value, lambda t: replacements.get(id(t), t))


def _same_program(call: str, program: Program, other: Program) -> None:
    """Refuse unless ``other`` (traced larger along the dynamic axes) is ``program`` but for register sizes."""
    problem = None
    if len(program.steps) != len(other.steps) or program.arguments != other.arguments:
        problem = "the function runs other kernels when the dynamic axes grow"
    elif len(program.constants) != len(other.constants) or program.reads != other.reads:
        problem = "its constants or Variables change when the dynamic axes grow"
    for index, (a, b) in enumerate(zip(program.steps, other.steps, strict=True)):
        if problem is not None:
            break
        if not isinstance(a, Step) or not isinstance(b, Step):
            if type(a) is not type(b):
                problem = f"step {index} differs when the dynamic axes grow"
            continue
        if (a.kernel, a.inputs, a.outputs) != (b.kernel, b.inputs, b.outputs):
            problem = f"step {index} ({a.kernel}) differs when the dynamic axes grow"
            continue
        changed = [key for key in a.attrs if a.attrs[key] != b.attrs.get(key) and not _follows(a, key, program)]
        if changed:
            key = changed[0]
            problem = (
                f"step {index} ({a.kernel}) has the attr {key}={a.attrs[key]!r}, which becomes {b.attrs[key]!r} "
                "when the dynamic axes grow"
            )
    for (register, raw), (_, grown) in zip(program.constants, other.constants, strict=True):
        if problem is None and not np.array_equal(program.backend.to_host(raw), other.backend.to_host(grown)):
            problem = f"the constant r{register} ({program.specs[register]}) depends on the size of the dynamic axes"
    if problem is not None:
        raise _built_in(call, problem)


def _built_in(call: str, problem: str) -> ExportError:
    return ExportError(
        f"{call}: the sizes asked to be dynamic are built into the program: {problem}. Export with fixed "
        "sizes (no dynamic_axes), or write the function so that no attr or constant depends on them (a "
        "reshape or tp.flatten whose -1 stands for the dynamic axis, say)"
    )
