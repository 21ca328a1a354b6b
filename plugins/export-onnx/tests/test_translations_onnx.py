"""A kernel outside the catalogue exported to ONNX: by the translation its distribution (or user code) registers,
which may write operators of a custom domain, or as its decomposition; what a faulty translation gets."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import tensorplug as tp
from tensorplug_onnx import Graph, Refused, StepView

pytestmark = pytest.mark.usefixtures("tensorplug_registries")


def softsign_numpy(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"] / (attrs["k"] + np.abs(inputs["x"]))


def model(x: tp.Tensor) -> tp.Tensor:
    return tp.run_kernel("KSoftsign", {"x": x + 1.0}, {"k": 2.0}) * 3.0


X = np.linspace(-3.0, 3.0, 6, dtype=np.float32).reshape(2, 3)


def run(model_proto: onnx.ModelProto, *inputs: np.ndarray) -> list[Any]:
    session = ort.InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, {i.name: v for i, v in zip(model_proto.graph.input, inputs, strict=True)}))


def export(fn: Any = model, x: np.ndarray = X) -> onnx.ModelProto:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.PluginWarning)
        result: onnx.ModelProto = tp.export(fn, tp.tensor(x), format="onnx")
    return result


@pytest.fixture
def ksoftsign() -> None:
    tp.register_kernel("KSoftsign", "numpy", softsign_numpy)


def translate(graph: Graph, step: StepView) -> str:
    k = graph.const(step.attrs["k"], step.dtype("x"))
    x = step.x("x")
    return str(graph.op("Div", x, graph.op("Add", k, graph.op("Abs", x))))


@pytest.mark.usefixtures("ksoftsign")
def test_a_translation_writes_the_kernel_and_onnx_runtime_gives_its_values() -> None:
    tp.register_translation("onnx", "KSoftsign", translate)
    exported = export()
    assert [n.op_type for n in exported.graph.node] == ["Add", "Abs", "Add", "Div", "Mul"]
    np.testing.assert_allclose(run(exported, X)[0], model(tp.tensor(X)).numpy(), rtol=1e-6)


@pytest.mark.usefixtures("ksoftsign")
def test_without_a_translation_the_decomposition_is_exported() -> None:
    tp.register_decomposition("KSoftsign", lambda inputs, attrs: inputs["x"] / (attrs["k"] + tp.abs(inputs["x"])))
    exported = export()
    assert "KSoftsign" not in [n.op_type for n in exported.graph.node]
    np.testing.assert_allclose(run(exported, X)[0], model(tp.tensor(X)).numpy(), rtol=1e-6)


@pytest.mark.usefixtures("ksoftsign")
def test_the_translation_comes_before_the_decomposition() -> None:
    tp.register_decomposition("KSoftsign", lambda inputs, attrs: inputs["x"] * 0.0)  # never exported
    tp.register_translation("onnx", "KSoftsign", translate)
    np.testing.assert_allclose(run(export(), X)[0], model(tp.tensor(X)).numpy(), rtol=1e-6)


def test_a_translation_of_a_catalogue_kernel_comes_before_the_exporter_s_own_converter() -> None:
    tp.register_translation("onnx", "Exp", lambda graph, step: graph.op("Exp", graph.op("Identity", step.x("x"))))
    exported = export(tp.exp)
    assert [n.op_type for n in exported.graph.node] == ["Identity", "Exp"]


@pytest.mark.usefixtures("ksoftsign")
def test_a_translation_may_write_a_custom_domain_with_its_version() -> None:
    def custom(graph: Graph, step: StepView) -> str:
        graph.use_domain("com.example.kernels", 2)
        return str(graph.op("KSoftsign", step.x("x"), domain="com.example.kernels", k=float(step.attrs["k"])))

    tp.register_translation("onnx", "KSoftsign", custom)
    exported = export()
    node = next(n for n in exported.graph.node if n.op_type == "KSoftsign")
    assert node.domain == "com.example.kernels"
    assert {(o.domain, o.version) for o in exported.opset_import} == {("", 18), ("com.example.kernels", 2)}


@pytest.mark.usefixtures("ksoftsign")
@pytest.mark.parametrize(
    ("translation", "problem"),
    [
        (lambda g, s: g.op("Abs", s.x("x"), domain="com.example"), r"domain 'com.example' without declaring"),
        (lambda g, s: "no_such_value", r"translation from runtime returned 'no_such_value', which names no value"),
        (lambda g, s: [g.op("Abs", s.x("x"))] * 2, r"translation from runtime gave 2 outputs, the kernel 1"),
        (lambda g, s: 1 / 0, r"translation from runtime raised ZeroDivisionError"),
        (lambda g, s: (_ for _ in ()).throw(Refused("k must be 2")), r"cannot be exported to ONNX: k must be 2"),
    ],
)
def test_a_faulty_translation_is_an_export_error_naming_the_step_and_its_source(translation: Any, problem: str) -> None:
    tp.register_translation("onnx", "KSoftsign", translation)
    with pytest.raises(tp.ExportError, match=problem) as refused:
        export()
    if "domain" not in problem:
        assert "step 1 of the program, the kernel 'KSoftsign'" in str(refused.value)
