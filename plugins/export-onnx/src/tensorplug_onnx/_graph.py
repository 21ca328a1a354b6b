"""The graph being built: ONNX nodes and initializers, the value name of each register, and the step being
converted (what a converter reads its inputs, attrs, dtypes and shapes from, and how it refuses).

A converter is ``convert(graph, step) -> value name(s)``: it adds the nodes that compute one kernel call
from the value names of its inputs and returns the names of its outputs (a list for a sequence step).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tensorplug import ExportError, ExportRequest, Step, TensorSpec
from tensorplug.kernel_reference import REFERENCE

ONNX_TYPES: dict[str, int] = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "int32": TensorProto.INT32,
    "int64": TensorProto.INT64,
    "bool": TensorProto.BOOL,
}
INT64_MIN = np.iinfo(np.int64).min
INT64_MAX = np.iinfo(np.int64).max


class Refused(Exception):
    """A step the exporter cannot express; the message says why (the export names the step around it)."""


class Graph:
    """The nodes and initializers made so far, and the value name of each register converted."""

    def __init__(self, request: ExportRequest) -> None:
        self.request = request
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.names: dict[int, str] = {}  # register -> value name
        self._constants: dict[tuple[str, tuple[int, ...], bytes], str] = {}
        self._taken = {*request.input_names, *request.output_names, *request.variable_names}
        self._counter = itertools.count()
        self._domains: dict[str, int] = {}

    def fresh(self, stem: str) -> str:
        """A value name no other value has."""
        while True:
            name = f"{stem}_{next(self._counter)}"
            if name not in self._taken:
                self._taken.add(name)
                return name

    def op(self, op_type: str, *inputs: str, outputs: int = 1, domain: str = "", **attrs: Any) -> Any:
        """Add one node; return its output's value name (a list of them when ``outputs`` is not 1).

        ``domain`` puts the operator in a domain other than ONNX's default one (a custom operator, which the
        runtime must know); declare the domain's version first with :meth:`use_domain`.
        """
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, domain=domain or None, **attrs))
        return names[0] if outputs == 1 else names

    def use_domain(self, domain: str, version: int) -> None:
        """Declare that the model uses operators of ``domain`` at opset ``version`` (an opset import of the model)."""
        if not domain or isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise Refused(f"use_domain({domain!r}, {version!r}): give a non-empty domain and an int version >= 1")
        if self._domains.setdefault(domain, version) != version:
            raise Refused(
                f"the domain {domain!r} is used at opset {self._domains[domain]} and at {version}: a model imports "
                "one version of each domain"
            )

    def domains(self) -> dict[str, int]:
        """The domains other than ONNX's default one the nodes use, with their versions (refused if undeclared)."""
        for node in self.nodes:
            if node.domain and node.domain not in self._domains:
                raise Refused(
                    f"a translation added the operator {node.op_type!r} of domain {node.domain!r} without declaring "
                    f"the domain's version: call graph.use_domain({node.domain!r}, version) first"
                )
        return dict(self._domains)

    def value_names(self) -> set[str]:
        """Every value name of the graph so far: its inputs, initializers and the nodes' outputs."""
        return {*self.names.values(), *(i.name for i in self.initializers), *(o for n in self.nodes for o in n.output)}

    def initializer(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.asarray(value, order="C"), name))
        return name

    def const(self, value: Any, dtype: str) -> str:
        """A constant of ``dtype`` (an initializer, shared by equal constants)."""
        array = np.asarray(value, dtype=np.dtype(dtype))
        key = (array.dtype.name, array.shape, array.tobytes())
        name = self._constants.get(key)
        if name is None:
            name = self._constants[key] = self.initializer(self.fresh("const"), array)
        return name

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(len(values)), "int64")

    def cast(self, value: str, dtype: str) -> str:
        return str(self.op("Cast", value, to=ONNX_TYPES[dtype]))


class StepView:
    """One step of the program, as a converter reads it."""

    def __init__(self, graph: Graph, step: Step) -> None:
        self.graph = graph
        self.step = step
        self.attrs = step.attrs
        self._inputs = dict(step.inputs)

    def _spec(self, register: int) -> TensorSpec:
        return self.graph.request.program.specs[register]

    def x(self, name: str) -> str:
        """The value name of input ``name``."""
        register = self._inputs[name]
        assert isinstance(register, int)
        return self.graph.names[register]

    def xs(self, name: str) -> list[str]:
        """The value names of list input ``name``."""
        registers = self._inputs[name]
        assert isinstance(registers, tuple)
        return [self.graph.names[r] for r in registers]

    def dtype(self, name: str) -> str:
        """The dtype of input ``name`` (of the first tensor of a list input)."""
        register = self._inputs[name]
        first = register[0] if isinstance(register, tuple) else register
        return str(self._spec(first).dtype)

    def _sizes(self, register: int, what: str, axes: Sequence[int] | None = None) -> tuple[int, ...]:
        """The register's shape; refused where the converter needs the size of a dynamic axis."""
        shape = self._spec(register).shape
        assert shape is not None
        dynamic = self.graph.request.dynamic.get(register, {})
        needed = [a for a in (range(len(shape)) if axes is None else axes) if a in dynamic]
        if needed:
            axis = needed[0]
            raise Refused(
                f"writing it needs the size of axis {axis} of {what}, which is dynamic ({dynamic[axis]}); export "
                "it with a fixed size there"
            )
        return shape

    def rank(self, name: str) -> int:
        register = self._inputs[name]
        assert isinstance(register, int)
        shape = self._spec(register).shape
        assert shape is not None
        return len(shape)

    def shape(self, name: str) -> tuple[int, ...]:
        """The shape of input ``name`` (every size must be fixed: see ``dim`` for one axis)."""
        register = self._inputs[name]
        assert isinstance(register, int)
        return self._sizes(register, name)

    def dim(self, name: str, axis: int) -> int:
        """The size of one axis of input ``name`` (which must be fixed)."""
        register = self._inputs[name]
        assert isinstance(register, int)
        return self._sizes(register, name, [axis % max(self.rank(name), 1)])[axis]

    def shapes(self, name: str) -> list[tuple[int, ...]]:
        """The shapes of list input ``name``."""
        registers = self._inputs[name]
        assert isinstance(registers, tuple)
        return [self._sizes(r, f"{name}[{i}]") for i, r in enumerate(registers)]

    def traced_shapes(self, name: str) -> list[tuple[tuple[int, ...], dict[int, str]]]:
        """Per tensor of list input ``name``: its shape in the trace, and its dynamic axes (``{axis: symbol}``),
        for converters that need the fixed sizes only (the dynamic ones are the example's)."""
        registers = self._inputs[name]
        assert isinstance(registers, tuple)
        result = []
        for register in registers:
            shape = self._spec(register).shape
            assert shape is not None
            result.append((shape, dict(self.graph.request.dynamic.get(register, {}))))
        return result

    def out_dtype(self, index: int = 0) -> str:
        return str(self._spec(self.step.outputs[index]).dtype)

    def out_shape(self, index: int = 0) -> tuple[int, ...]:
        return self._sizes(self.step.outputs[index], "the result")

    def only(self, dtypes: Sequence[str], name: str, why: str) -> None:
        """Refuse unless input ``name`` has one of ``dtypes``."""
        dtype = self.dtype(name)
        if dtype not in dtypes:
            raise Refused(f"{why} (here {name} is {dtype})")


Converter = Callable[[Graph, StepView], Any]


def describe(request: ExportRequest, index: int, step: Step) -> str:
    """``step 3, the kernel 'Atan2' (made by tp.atan2) on a: float32[3], b: float32[3]``."""
    specs = request.program.specs
    parts = []
    for name, register in step.inputs:
        if isinstance(register, tuple):
            parts.append(f"{name}: [{', '.join(str(specs[r]) for r in register)}]")
        else:
            parts.append(f"{name}: {specs[register]}")
    entry = REFERENCE.get(step.kernel)
    if step.gradient_of is not None:
        made = f"made by the gradient of {step.gradient_of!r}"
    elif entry is not None and entry.ops:
        made = f"made by {' / '.join(entry.ops)}"
    else:
        made = "not a kernel of tensorplug's catalogue"
    on = f" on {', '.join(parts)}" if parts else ""
    return f"step {index} of the program, the kernel {step.kernel!r} ({made}){on}"


def refuse(request: ExportRequest, message: str) -> ExportError:
    return ExportError(f"{request.where()}: {message}")
