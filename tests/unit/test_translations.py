"""Export translations (how a format writes a kernel, from the kernel's own distribution or user code) and
export through a decomposition (``ExportRequest.decomposed``), with a format that needs no library: the exporter
here returns what it was handed. ONNX's use of both is tested with the plugin (plugins/export-onnx/tests)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

pytestmark = pytest.mark.usefixtures("tensorplug_registries")


def swish_numpy(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"] / (1 + np.exp(-attrs["beta"] * inputs["x"]))


def swish_ops(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    return inputs["x"] * tp.sigmoid(inputs["x"] * attrs["beta"])


def model(x: Any) -> Any:
    return tp.run_kernel("UnitSwish", {"x": x * 2.0}, {"beta": 1.5}) + 1.0


def run_program(program: tp.Program, constants: dict[int, np.ndarray], *arguments: np.ndarray) -> list[np.ndarray]:
    """Compute a program's outputs step by step with its kernels' functions (an exported program's meaning)."""
    registers: dict[int, Any] = {reg: program.backend.from_host(v) for reg, v in constants.items()}
    registers.update(zip(program.arguments, arguments, strict=True))
    for step in program.kernel_steps:
        out = step.function(step.input_values(registers), step.attrs, program.backend)
        registers.update(zip(step.outputs, out if step.sequence else (out,), strict=True))
    return [np.asarray(registers[r]) for r in program.outputs]


@pytest.fixture
def handed() -> list[tp.ExportRequest]:
    """A format whose exporter keeps the request it was handed."""
    requests: list[tp.ExportRequest] = []
    tp.register_exporter("kept", lambda request: requests.append(request) or request)
    return requests


def test_a_translation_is_listed_with_its_source_and_handed_to_its_format_only(handed: list[Any]) -> None:
    tp.register_kernel("UnitSwish", "numpy", swish_numpy)
    tp.register_translation("kept", "UnitSwish", lambda graph, step: "written")
    tp.register_translation("other", "UnitSwish", "somewhere:else")  # lazy: never imported here
    assert [(t.format, t.kernel_name, t.source) for t in tp.translations("kept")] == [("kept", "UnitSwish", "runtime")]
    assert len(tp.translations()) >= 2
    request = tp.export(model, tp.tensor([1.0, 2.0]), format="kept")
    assert set(request.translations) == {"UnitSwish"}
    assert request.translator("UnitSwish")(None, None) == "written"
    assert request.translator("Exp") is None
    assert request.provider("UnitSwish") == "runtime"
    assert request.provider("NoSuchKernel") is None


def test_a_lazy_translation_that_cannot_be_imported_is_an_export_error_naming_it(handed: list[Any]) -> None:
    tp.register_kernel("UnitSwish", "numpy", swish_numpy)
    tp.register_translation("kept", "UnitSwish", "no_such_module_here:swish")
    request = tp.export(model, tp.tensor([1.0]), format="kept")
    with pytest.raises(tp.ExportError, match=r"translation of 'UnitSwish' from runtime could not be imported.*Module"):
        request.translator("UnitSwish")


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (("", "UnitSwish", lambda g, s: None), "the format must be a non-empty str"),
        (("kept", "", lambda g, s: None), "the kernel name must be a non-empty str"),
        (("kept", "UnitSwish", 3), "the translation must be callable"),
    ],
)
def test_a_translation_is_refused_before_anything_is_registered(bad: tuple[Any, ...], problem: str) -> None:
    before = tp.translations()
    with pytest.raises(tp.RegistrationError, match=problem):
        tp.register_translation(*bad)
    assert tp.translations() == before


def test_decomposed_replaces_the_step_by_its_decomposition_and_keeps_the_values(handed: list[Any]) -> None:
    tp.register_kernel("UnitSwish", "numpy", swish_numpy)
    tp.register_decomposition("UnitSwish", swish_ops)
    x = np.linspace(-2.0, 2.0, 6, dtype=np.float32).reshape(2, 3)
    request = tp.export(model, tp.tensor(x), format="kept")
    assert [s.kernel for s in request.program.kernel_steps] == ["Multiply", "UnitSwish", "Add"]
    decomposed = request.decomposed({"UnitSwish"})
    kernels = [s.kernel for s in decomposed.program.kernel_steps]
    assert "UnitSwish" not in kernels
    assert kernels[0] == "Multiply"
    assert kernels[-1] == "Add"
    assert "Sigmoid" in kernels
    assert request.decomposed({"Exp"}).program.steps == request.program.steps  # no step of it: as it was
    got = run_program(decomposed.program, dict(decomposed.constant_values), x)
    np.testing.assert_allclose(got[0], model(tp.tensor(x)).numpy(), rtol=1e-6)
    for reg in (*decomposed.program.arguments, *(r for s in decomposed.program.kernel_steps for r in s.outputs)):
        assert decomposed.program.specs[reg].dtype == "float32"


def test_a_decomposition_that_returns_its_input_makes_later_steps_read_the_input(handed: list[Any]) -> None:
    tp.register_kernel("Same", "numpy", lambda inputs, attrs, b: inputs["x"].copy())
    tp.register_decomposition("Same", lambda inputs, attrs: inputs["x"])
    request = tp.export(lambda x: tp.run_kernel("Same", {"x": x}) * 3.0, tp.tensor([1.0, 2.0]), format="kept")
    decomposed = request.decomposed({"Same"})
    (step,) = decomposed.program.kernel_steps
    assert step.kernel == "Multiply"
    assert dict(step.inputs)["a"] == decomposed.program.arguments[0]
    np.testing.assert_array_equal(run_program(decomposed.program, dict(decomposed.constant_values),
                                              np.array([1.0, 2.0], np.float32))[0], [3.0, 6.0])  # fmt: skip


def test_decompositions_calling_kernels_with_decompositions_are_inlined_in_turn(handed: list[Any]) -> None:
    for name in ("Inner", "Outer"):
        tp.register_kernel(name, "numpy", lambda inputs, attrs, b: inputs["x"] + 1.0)
    tp.register_decomposition("Inner", lambda inputs, attrs: inputs["x"] + 1.0)
    tp.register_decomposition("Outer", lambda inputs, attrs: tp.run_kernel("Inner", {"x": inputs["x"]}))
    request = tp.export(lambda x: tp.run_kernel("Outer", {"x": x}), tp.tensor([1.0]), format="kept")
    assert [s.kernel for s in request.decomposed({"Outer", "Inner"}).program.kernel_steps] == ["Add"]
    assert [s.kernel for s in request.decomposed({"Outer"}).program.kernel_steps] == ["Inner"]


def test_decompositions_that_call_each_other_are_refused_naming_them(handed: list[Any]) -> None:
    for name, other in (("Ping", "Pong"), ("Pong", "Ping")):
        tp.register_kernel(name, "numpy", lambda inputs, attrs, b: inputs["x"])
        tp.register_decomposition(name, lambda inputs, attrs, other=other: tp.run_kernel(other, {"x": inputs["x"]}))
    request = tp.export(lambda x: tp.run_kernel("Ping", {"x": x}), tp.tensor([1.0]), format="kept")
    with pytest.raises(tp.ExportError, match=r"decompositions of 'Ping', 'Pong' call each other in a cycle"):
        request.decomposed({"Ping", "Pong"})


def test_a_decomposition_is_not_inlined_for_dynamic_axes(handed: list[Any]) -> None:
    tp.register_kernel("UnitSwish", "numpy", swish_numpy)
    tp.register_decomposition("UnitSwish", swish_ops)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        request = tp.export(model, tp.tensor(np.ones((2, 3), np.float32)), format="kept", dynamic_axes={"x": [0]})
    with pytest.raises(tp.ExportError, match=r"kernel 'UnitSwish' \(as its decomposition.*dynamic axes"):
        request.decomposed({"UnitSwish"})


def test_a_decomposition_that_returns_one_value_twice_gives_both_outputs_that_value(handed: list[Any]) -> None:
    tp.register_kernel("Doubled", "numpy", lambda inputs, attrs, b: (inputs["x"] * 2.0, inputs["x"] * 2.0))

    def doubled(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
        y = inputs["x"] * 2.0
        return y, y

    tp.register_decomposition("Doubled", doubled)

    def model(x: Any) -> Any:
        a, b = tp.run_kernel("Doubled", {"x": x})
        return a + 1.0, b - 1.0

    request = tp.export(model, tp.tensor([1.0, 2.0]), format="kept").decomposed({"Doubled"})
    assert [s.kernel for s in request.program.kernel_steps] == ["Multiply", "Add", "Sub"]
    add, sub = request.program.kernel_steps[1:]
    assert dict(add.inputs)["a"] == dict(sub.inputs)["a"] == request.program.kernel_steps[0].outputs[0]
    got = run_program(request.program, dict(request.constant_values), np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(got[0], [3.0, 5.0])
    np.testing.assert_array_equal(got[1], [1.0, 3.0])
