"""The ``"onnx"`` exporter: a traced inference program as an ONNX model, checked by ``onnx.checker``.

The tensor arguments become the graph's inputs, the Variables the program reads its initializers (with
their values at the time of the export), the captured constants initializers too, the returned tensors its
outputs; each kernel call becomes the ONNX operators of its converter (``CONVERTERS``). A program that is
not an inference program (it records gradients, draws random numbers, assigns Variables, or computes host
values at each call) is refused, as is a dtype no converter expresses, with an error naming the step, its
kernel and the op that made it. A kernel is written by its translation when a distribution registered one
(``tp.register_translation("onnx", ...)``), else by the converter of the catalogue kernel, else as its
decomposition (``ExportRequest.decomposed``); a kernel with none of them is refused, saying how to add either.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Mapping

import onnx
from onnx import helper

from tensorplug import Assign, ExportRequest, Step, TensorplugError
from tensorplug import kernel_names as K
from tensorplug_onnx import OPSET
from tensorplug_onnx._elementwise import BINARY, UNARY, derived_unary
from tensorplug_onnx._graph import ONNX_TYPES, Converter, Graph, Refused, StepView, describe, refuse
from tensorplug_onnx._structure import LINALG, NN, REDUCTION, SHAPE

CONVERTERS: dict[str, Converter] = {**UNARY, **derived_unary(), **BINARY, **REDUCTION, **LINALG, **SHAPE, **NN}
"""Each kernel's converter: the rows of the tables, and a unary kernel named like an ONNX operator (derived)."""

# Why each kernel of the catalogue without a converter is not exported.
GRADIENT_ONLY = "it is the gradient of another kernel: inference programs do not compute gradients"
NOT_EXPORTED: dict[str, str] = {
    K.CONV2D_BACKPROP_FILTER: GRADIENT_ONLY,
    K.MAX_POOL_GRAD: GRADIENT_ONLY,
    K.AVG_POOL_GRAD: GRADIENT_ONLY,
    K.RANDOM_UNIFORM: "a random draw: ONNX's generator is not tensorplug's, so the exported values would differ "
    "(a seeded draw is made on the host, so it is exported as the values it drew)",
    K.RANDOM_NORMAL: "a random draw: ONNX's generator is not tensorplug's, so the exported values would differ "
    "(a seeded draw is made on the host, so it is exported as the values it drew)",
}

OPTIONS = ("opset", "model_name", "doc_string")


def export(request: ExportRequest) -> onnx.ModelProto:
    """Write ``request.program`` as an ONNX model; save it to ``request.path`` when given; return the model."""
    opset = _options(request)
    request = _decompose(request)
    _check_inference(request)
    if not request.program.outputs:
        raise refuse(request, "the function returns no tensor, so the model would compute nothing")
    graph = Graph(request)
    program = request.program
    for name, register in zip(request.input_names, program.arguments, strict=True):
        graph.names[register] = name
    for (index, register), name in zip(program.reads, _read_names(request), strict=True):
        graph.names[register] = graph.initializer(name, request.variable_values[index])
    for register, value in request.constant_values.items():
        graph.names[register] = graph.initializer(graph.fresh("constant"), value)
    for index, step in enumerate(program.steps):
        assert isinstance(step, Step)  # (_check_inference refused the Assigns)
        _convert(graph, index, step)
    outputs = _bind_outputs(graph)
    try:
        domains = graph.domains()
    except Refused as exc:
        raise refuse(request, str(exc)) from None
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, v) for d, v in domains.items())]
    model = helper.make_model(
        helper.make_graph(
            graph.nodes,
            str(request.options.get("model_name", request.name)),
            [_value_info(request, name, reg) for name, reg in zip(request.input_names, program.arguments, strict=True)],
            [_value_info(request, name, reg) for name, reg in zip(request.output_names, outputs, strict=True)],
            graph.initializers,
        ),
        opset_imports=opsets,
        ir_version=helper.find_min_ir_version_for(opsets, ignore_unknown=True),
        producer_name="tensorplug",
        doc_string=str(request.options.get("doc_string", "")),
    )
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:  # a converter's mistake, never the user's: say so
        raise refuse(request, f"the model fails onnx.checker ({exc}); please report this") from exc
    if request.path is not None:
        _write(model, request)
    return model


def _options(request: ExportRequest) -> int:
    unknown = sorted(set(request.options) - set(OPTIONS))
    if unknown:
        raise refuse(request, f"unknown option {unknown[0]!r}; the ONNX exporter takes {', '.join(OPTIONS)}")
    opset = request.options.get("opset", OPSET)
    newest = onnx.defs.onnx_opset_version()
    if isinstance(opset, bool) or not isinstance(opset, int) or not OPSET <= opset <= newest:
        raise refuse(request, f"opset must be an int from {OPSET} to {newest} (onnx {onnx.__version__}), not {opset!r}")
    return opset


def _decompose(request: ExportRequest) -> ExportRequest:
    """The request with every kernel that neither a translation nor a converter writes replaced by its
    decomposition, where it has one."""
    unwritten = {
        step.kernel
        for step in request.program.kernel_steps
        if step.kernel not in request.translations and step.kernel not in CONVERTERS
    }
    return request.decomposed(unwritten) if unwritten else request


def _check_inference(request: ExportRequest) -> None:
    """Refuse what an inference model cannot hold: host values, Variable updates, gradients, random draws."""
    program = request.program
    if program.host:
        raise refuse(
            request,
            "the function computes host values at each call (an optimizer's step count and hyper-parameters): it "
            "trains, and ONNX export writes inference programs. Export the function that computes the outputs, "
            "after training",
        )
    for index, step in enumerate(program.steps):
        if isinstance(step, Assign):
            name = program.variable_names[step.variable]
            raise refuse(
                request,
                f"the function assigns the Variable {name!r} (step {index}): an ONNX model has no state to update, "
                "so training steps and other Variable updates are not exported. Export the function that computes "
                "the outputs from the Variables' current values",
            )
        where = describe(request, index, step)
        if step.gradient_of is not None:
            raise refuse(
                request,
                f"{where} computes a gradient: the function records gradients (tp.grad, an optimizer's minimize), "
                "and ONNX export writes inference programs. Export the forward computation",
            )
        if step.kernel in K.RANDOM:
            raise refuse(request, f"{where} draws random numbers: {NOT_EXPORTED[step.kernel]}. Pass the values in "
                         "as an argument instead")  # fmt: skip


def _convert(graph: Graph, index: int, step: Step) -> None:
    request = graph.request
    specs = request.program.specs
    for register in (*step.input_registers, *step.outputs):
        dtype = specs[register].dtype
        if dtype not in ONNX_TYPES or specs[register].shape is None:
            raise refuse(request, f"{describe(request, index, step)}: the dtype {dtype!r} has no ONNX type here")
    translation = request.translations.get(step.kernel)
    by = "the converter"
    if translation is not None:
        by = f"the translation from {translation.source}"
        converter = request.translator(step.kernel)
    else:
        converter = CONVERTERS.get(step.kernel)
    if converter is None:
        raise refuse(request, f"{describe(request, index, step)} cannot be exported to ONNX: {_why(request, step)}")
    try:
        produced = converter(graph, StepView(graph, step))
    except Refused as exc:
        raise refuse(request, f"{describe(request, index, step)} cannot be exported to ONNX: {exc}") from None
    except TensorplugError:
        raise
    except Exception as exc:
        if translation is None:
            raise
        raise refuse(request, f"{describe(request, index, step)}: {by} raised {type(exc).__name__}: {exc}") from exc
    several = step.sequence or (translation is not None and isinstance(produced, list | tuple))
    values = list(produced) if several else [produced]
    if len(values) != len(step.outputs):
        raise refuse(request, f"{describe(request, index, step)}: {by} gave {len(values)} outputs, the kernel "
                     f"{len(step.outputs)}")  # fmt: skip
    known = graph.value_names() if translation is not None else None
    for register, value in zip(step.outputs, values, strict=True):
        if known is not None and str(value) not in known:
            raise refuse(request, f"{describe(request, index, step)}: {by} returned {value!r}, which names no value "
                         "of the graph: return the value name that graph.op(...) gave")  # fmt: skip
        graph.names[register] = str(value)


def _why(request: ExportRequest, step: Step) -> str:
    """Why a kernel with no converter, no translation and no decomposition is not exported, and what to do."""
    if step.kernel in NOT_EXPORTED:
        return f"{NOT_EXPORTED[step.kernel]}. tensorplug_onnx.exportable_kernels() lists the kernels that export"
    if step.kernel in K.CATALOGUE:
        return (
            "no converter writes this catalogue kernel: add its row to tensorplug_onnx/_elementwise.py's UNARY or "
            "BINARY table (or to _structure.py's tables). tensorplug_onnx.exportable_kernels() lists the kernels "
            "that export"
        )
    provider = request.provider(step.kernel)
    comes = "it is registered by user code" if provider in (None, "runtime") else f"it comes from {provider}"
    return (
        f"it is not a kernel of tensorplug's catalogue and has neither an ONNX translation nor a decomposition "
        f"({comes}). Make it exportable in either of two ways: say how ONNX writes it, with "
        f"tp.register_translation('onnx', {step.kernel!r}, translate) or a TranslationSpec from the plugin that "
        f"provides the kernel; or say how it is computed with other ops, with "
        f"tp.register_decomposition({step.kernel!r}, fn) or a DecompositionSpec. docs/export.md shows both"
    )


def _read_names(request: ExportRequest) -> list[str]:
    return [request.variable_names[index] for index, _ in request.program.reads]


def _bind_outputs(graph: Graph) -> list[int]:
    """Give each returned value its output name: the node that computes it is renamed, or an Identity added (an
    input or an initializer returned as it is, the same value returned twice)."""
    request = graph.request
    produced = {name for node in graph.nodes for name in node.output}
    renames: dict[str, str] = {}
    for name, register in zip(request.output_names, request.program.outputs, strict=True):
        value = graph.names[register]
        if value in produced and value not in renames:
            renames[value] = name
        else:
            graph.nodes.append(helper.make_node("Identity", [renames.get(value, value)], [name]))
    for node in graph.nodes:
        node.input[:] = [renames.get(v, v) for v in node.input]
        node.output[:] = [renames.get(v, v) for v in node.output]
    return list(request.program.outputs)


def _value_info(request: ExportRequest, name: str, register: int) -> onnx.ValueInfoProto:
    spec = request.program.specs[register]
    if spec.dtype not in ONNX_TYPES or spec.shape is None:
        raise refuse(request, f"{name!r} is {spec}, which has no ONNX type; ONNX export takes {', '.join(ONNX_TYPES)}")
    symbols = request.dynamic.get(register, {})
    shape = [symbols.get(axis, n) for axis, n in enumerate(spec.shape)]
    return helper.make_tensor_value_info(name, ONNX_TYPES[spec.dtype], shape)


def _write(model: onnx.ModelProto, request: ExportRequest) -> None:
    """Write through a temporary file in the same folder, renamed over the target: never a half-written model."""
    assert request.path is not None
    path = request.path
    folder = path.parent
    if not folder.is_dir():
        raise refuse(request, f"cannot write {str(path)!r}: the folder {str(folder)!r} does not exist")
    temporary = folder / f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    handle = os.open(temporary, flags, 0o666)  # the permissions of any file the user writes (the umask applies)
    try:
        if path.exists():  # keep the permissions the old file had
            os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        with os.fdopen(handle, "wb") as out:
            out.write(model.SerializeToString())
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def exportable_kernels() -> frozenset[str]:
    """The kernels the ONNX exporter writes (some for some dtypes only: see the docs): those of the catalogue it
    has a converter for, and those a translation was registered for."""
    from tensorplug import translations

    return frozenset(CONVERTERS) | {spec.kernel_name for spec in translations("onnx")}


def not_exported() -> Mapping[str, str]:
    """Each kernel of the catalogue the ONNX exporter refuses, with why."""
    return dict(NOT_EXPORTED)


__all__ = ["CONVERTERS", "NOT_EXPORTED", "OPSET", "export", "exportable_kernels", "not_exported"]
