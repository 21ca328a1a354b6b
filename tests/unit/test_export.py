"""``tp.export`` and the exporter registry, with exporters registered here (no format plugin is installed).

What an exporter receives (the program, names, Variables' values, constants, dynamic axes), the errors a user
can meet (an unknown format, an exporter that cannot be imported, names that do not fit, a dynamic axis the
program fixes), and registration (shadowing asked for, unregistering bringing the shadowed one back).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

pytestmark = pytest.mark.usefixtures("tensorplug_registries")


def capture() -> list[Any]:
    """Register the format ``capture``, whose exporter returns the request it was handed."""
    tp.register_exporter("capture", lambda request: request, "hands the request back")
    return []


def test_an_exporter_gets_the_program_names_variables_and_constants() -> None:
    capture()
    w = tp.variable([[1.0, 2.0], [3.0, 4.0]], name="weights")

    def predict(pixels: tp.Tensor, extra: list[tp.Tensor], scale: float) -> dict[str, tp.Tensor]:
        return {"scores": pixels @ w * scale, "total": tp.sum(extra[0] + extra[1])}

    x = tp.tensor([[1.0, 0.0]])
    request = tp.export(predict, x, [tp.tensor([1.0]), tp.tensor([2.0])], 0.5, format="capture")
    assert isinstance(request, tp.ExportRequest)
    assert request.format == "capture"
    assert request.name == "predict"
    assert request.input_names == ("pixels", "extra_0", "extra_1")
    assert request.output_names == ("scores", "total")
    assert request.variable_names == ("weights",)
    np.testing.assert_array_equal(request.variable_values[0], [[1.0, 2.0], [3.0, 4.0]])
    program = request.program
    assert [s.kernel for s in program.kernel_steps] == ["BatchMatMul", "Multiply", "Add", "Sum"]
    assert [str(program.specs[r]) for r in program.arguments] == ["float32[1, 2]", "float32[1]", "float32[1]"]
    (scale_register,) = request.constant_values
    assert request.value(scale_register) == np.float32(0.5)
    assert request.value(program.reads[0][1]) is request.variable_values[0]
    assert request.value(program.arguments[0]) is None
    assert request.path is None
    assert request.options == {}
    assert request.dynamic == {}


def test_options_and_path_go_to_the_exporter_and_names_can_be_chosen(tmp_path: Any) -> None:
    capture()
    request = tp.export(
        lambda a, b: (a + b, a * b),
        tp.tensor([1.0]),
        tp.tensor([2.0]),
        format="capture",
        path=tmp_path / "model.bin",
        input_names=["left", "right"],
        output_names=["sum", "product"],
        opset=42,
    )
    assert (request.input_names, request.output_names) == (("left", "right"), ("sum", "product"))
    assert request.path == tmp_path / "model.bin"
    assert request.options == {"opset": 42}


def test_default_names_for_one_output_a_tuple_and_unnamed_arguments() -> None:
    capture()
    one = tp.export(lambda x: x * 2.0, tp.tensor([1.0]), format="capture")
    assert (one.input_names, one.output_names) == (("x",), ("output",))
    pair = tp.export(lambda *xs: (xs[0] + xs[1], xs[0]), tp.tensor([1.0]), tp.tensor([2.0]), format="capture")
    assert (pair.input_names, pair.output_names) == (("xs_0", "xs_1"), ("output_0", "output_1"))
    same = tp.export(lambda output: output + 1.0, tp.tensor([1.0]), format="capture")
    assert same.input_names == ("output",)
    assert same.output_names == ("output_out",)  # never an input's name


def test_names_that_do_not_fit_are_refused() -> None:
    capture()
    x = tp.tensor([1.0])
    with pytest.raises(tp.ExportError, match=r"input_names must be 1 distinct non-empty strs.*got \['a', 'b'\]"):
        tp.export(lambda x: x + 1.0, x, format="capture", input_names=["a", "b"])
    with pytest.raises(tp.ExportError, match="output_names must be 2 distinct"):
        tp.export(lambda x: (x, x + 1.0), x, format="capture", output_names=["y", "y"])
    with pytest.raises(tp.ExportError, match="'y' names both an input and an output"):
        tp.export(lambda x: x + 1.0, x, format="capture", input_names=["y"], output_names=["y"])


def test_an_unknown_format_lists_the_installed_ones_and_names_the_distribution_to_install() -> None:
    capture()
    x = tp.tensor([1.0])
    while "onnx" in [s.format for s in tp.exporters()]:  # tensorplug-onnx installed: as if it were not
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tp.PluginWarning)
            tp.unregister_exporter("onnx")
    with pytest.raises(tp.ExportError) as onnx:
        tp.export(lambda x: x + 1.0, x, format="onnx")
    assert str(onnx.value) == (
        "tp.export('<lambda>', format='onnx'): no exporter for the format 'onnx'; installed formats: 'capture'. The "
        "'onnx' format comes with the tensorplug-onnx distribution: pip install ./plugins/export-onnx"
    )
    with pytest.raises(tp.ExportError, match="Did you mean 'capture'"):
        tp.export(lambda x: x + 1.0, x, format="Capture")
    with pytest.raises(tp.ExportError, match=r"format 'tflite'.*tp.register_exporter"):
        tp.export(lambda x: x + 1.0, x, format="tflite")


def test_an_exporter_that_cannot_be_imported_is_named_with_its_distribution() -> None:
    tp.register_exporter("broken", "tensorplug_no_such_module:export")
    with pytest.raises(tp.ExportError) as caught:
        tp.export(lambda x: x + 1.0, tp.tensor([1.0]), format="broken")
    message = str(caught.value)
    assert "the exporter of 'broken' (from runtime) could not be imported" in message
    assert "ModuleNotFoundError" in message


def test_an_exporter_failing_unexpectedly_is_named() -> None:
    def exporter(request: tp.ExportRequest) -> None:
        raise KeyError("oops")

    tp.register_exporter("failing", exporter)
    with pytest.raises(tp.ExportError, match=r"the exporter of 'failing' from runtime failed: KeyError: 'oops'"):
        tp.export(lambda x: x + 1.0, tp.tensor([1.0]), format="failing")


def test_a_function_that_cannot_be_traced_says_why() -> None:
    capture()

    def reads_back(x: tp.Tensor) -> tp.Tensor:
        return x * 2.0 if x.sum().item() > 0 else x

    with pytest.raises(tp.ExportError, match=r"cannot be traced into a program: .*read"):
        tp.export(reads_back, tp.tensor([1.0]), format="capture")


def test_a_tp_function_exports_its_python_function() -> None:
    capture()
    traced = tp.function(lambda x: tp.exp(x))
    request = tp.export(traced, tp.tensor([1.0, 2.0]), format="capture")
    assert [s.kernel for s in request.program.kernel_steps] == ["Exp"]
    assert traced.trace_count == 0  # its own cache is left alone


# -- dynamic axes ----------------------------------------------------------------------------------------------------


def test_dynamic_axes_mark_every_register_whose_size_follows() -> None:
    capture()
    w = tp.variable(np.ones((3, 2), np.float32), name="w")

    def predict(x: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor]:
        y = x @ w
        return y, tp.concat([y, y], axis=0)

    request = tp.export(predict, tp.ones((4, 3)), format="capture", dynamic_axes={"x": {0: "batch"}})
    program = request.program
    assert request.dynamic[program.arguments[0]] == {0: "batch"}
    first, doubled = program.outputs
    assert request.dynamic[first] == {0: "batch"}
    assert request.dynamic[doubled] == {0: "dim_1"}  # 2 * batch: a size of its own
    assert program.reads[0][1] not in request.dynamic
    listed = tp.export(predict, tp.ones((4, 3)), format="capture", dynamic_axes={"x": [0]})
    assert listed.dynamic[listed.program.arguments[0]] == {0: "x_dim0"}


def test_a_dynamic_axis_the_program_fixes_is_refused() -> None:
    capture()

    def padded(x: tp.Tensor) -> tp.Tensor:
        return x + tp.zeros((x.shape[0], 3))  # a Fill of 4 rows, then of 5

    with pytest.raises(tp.ExportError) as caught:
        tp.export(padded, tp.ones((4, 3)), format="capture", dynamic_axes={"x": [0]})
    message = str(caught.value)
    assert "the sizes asked to be dynamic are built into the program" in message
    assert "step 0 (Fill) has the attr shape=(4, 3), which becomes (5, 3)" in message


def test_a_size_computed_from_a_dynamic_axis_is_refused_even_where_two_sizes_agree() -> None:
    capture()
    # x[: n // 2] takes 2 rows at n = 4 and at n = 5: the slice's end would be built in at 2
    with pytest.raises(tp.ExportError) as caught:
        tp.export(lambda x: x[: x.shape[0] // 2], tp.ones((4, 3)), format="capture", dynamic_axes={"x": {0: "b"}})
    message = str(caught.value)
    assert "the sizes asked to be dynamic are built into the program" in message
    assert "step 0 (StridedSlice) has the attr end=(2, 3), which becomes" in message


def test_a_reshape_that_grows_with_the_dynamic_axis_is_dynamic_there() -> None:
    capture()

    def head(x: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor, tp.Tensor]:
        return tp.reshape(x, (-1,)), tp.flatten(x), tp.reshape(x, (-1, 6))

    request = tp.export(head, tp.ones((4, 3, 2)), format="capture", dynamic_axes={"x": {0: "batch"}})
    program = request.program
    assert [s.kernel for s in program.kernel_steps] == ["Reshape", "Reshape", "Reshape"]
    assert [program.specs[r].shape for r in program.outputs] == [(24,), (4, 6), (4, 6)]
    flat, kept, again = (request.dynamic[r] for r in program.outputs)
    assert flat == {0: "dim_1"}  # 6 * batch: a size of its own
    assert kept == again == {0: "batch"}


def test_a_function_that_fails_at_another_size_of_a_dynamic_axis_says_which() -> None:
    capture()

    def pairs(x: tp.Tensor) -> tp.Tensor:
        return tp.reshape(x, (-1, 2, 3))  # an even number of rows only

    with pytest.raises(tp.ExportError) as caught:
        tp.export(pairs, tp.ones((4, 3)), format="capture", dynamic_axes={"x": {0: "batch"}})
    message = str(caught.value)
    assert "a dynamic axis takes any size, but traced again with x of shape (5, 3) (zeros), the function" in message
    assert "reshape: cannot reshape float32[5, 3]" in message


def test_dynamic_axes_are_checked() -> None:
    capture()
    x = tp.ones((4, 3))
    with pytest.raises(tp.ExportError, match="dynamic_axes names 'y', which is not an input"):
        tp.export(lambda x: x + 1.0, x, format="capture", dynamic_axes={"y": [0]})
    with pytest.raises(tp.ExportError, match="names axis 2; 'x' has rank 2"):
        tp.export(lambda x: x + 1.0, x, format="capture", dynamic_axes={"x": [2]})
    with pytest.raises(tp.ExportError, match="size 2 or more along the dynamic axis 0 of 'x'"):
        tp.export(lambda x: x + 1.0, tp.ones((1, 3)), format="capture", dynamic_axes={"x": [0]})


# -- the registry ----------------------------------------------------------------------------------------------------


def test_register_shadow_and_unregister_an_exporter() -> None:
    first = tp.register_exporter("text", lambda request: "first", "the first")
    assert first.source == "runtime"
    assert [s.format for s in tp.exporters()].count("text") == 1
    with pytest.raises(tp.RegistrationError, match="exporter 'text' is already registered by runtime"):
        tp.register_exporter("text", lambda request: "second")
    tp.register_exporter("text", lambda request: "second", override=True)
    x = tp.tensor([1.0])
    assert tp.export(lambda x: x + 1.0, x, format="text") == "second"
    tp.unregister_exporter("text")
    assert tp.export(lambda x: x + 1.0, x, format="text") == "first"
    tp.unregister_exporter("text")
    assert "text" not in [s.format for s in tp.exporters()]
    with pytest.raises(tp.RegistrationError, match="no exporter registered for 'text'"):
        tp.unregister_exporter("text")


def test_register_exporter_checks_its_arguments() -> None:
    with pytest.raises(tp.RegistrationError, match="non-empty str without spaces"):
        tp.register_exporter("my format", lambda request: None)
    with pytest.raises(tp.RegistrationError, match="must be callable"):
        tp.register_exporter("fmt", 42)  # type: ignore[arg-type]


def test_the_registry_fixture_takes_exporters_back() -> None:
    from tensorplug.testing import restored_registries

    with restored_registries():
        tp.register_exporter("temporary", lambda request: None)
        assert "temporary" in [s.format for s in tp.exporters()]
    assert "temporary" not in [s.format for s in tp.exporters()]


def test_export_leaves_no_warning_behind() -> None:
    capture()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.export(lambda x: tp.relu(x), tp.tensor([1.0]), format="capture")
