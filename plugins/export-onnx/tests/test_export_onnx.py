"""``tp.export(..., format="onnx")`` as a user meets it: discovery, the model it writes, and what it refuses.

Every model that exports is checked by ``onnx.checker`` inside the exporter; here ONNX Runtime runs them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import tensorplug as tp


def run(model: onnx.ModelProto | Path, **feed: np.ndarray) -> list[np.ndarray]:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    return [np.asarray(out) for out in session.run(None, feed)]


# -- discovery -------------------------------------------------------------------------------------------------------


def test_the_format_is_declared_by_the_installed_distribution_and_onnx_is_imported_at_the_first_export() -> None:
    code = """
import json, sys
import tensorplug as tp
result = {"formats": [(s.format, s.source) for s in tp.exporters()]}
result["at_import"] = sorted(m for m in ("onnx", "onnxruntime", "tensorplug_onnx._export") if m in sys.modules)
result["plugin"] = [p.exporters for p in tp.plugins() if p.distribution == "tensorplug-onnx"]
tp.export(lambda x: x + 1.0, tp.tensor([1.0]), format="onnx")
result["after_export"] = sorted(m for m in ("onnx", "tensorplug_onnx._export") if m in sys.modules)
print(json.dumps(result))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert ["onnx", "tensorplug-onnx"] in result["formats"]
    assert result["at_import"] == []
    assert result["plugin"] == [["onnx"]]
    assert result["after_export"] == ["onnx", "tensorplug_onnx._export"]


# -- the model -------------------------------------------------------------------------------------------------------


def test_variables_become_initializers_and_arguments_inputs(tmp_path: Path) -> None:
    w = tp.variable([[1.0, -2.0], [0.5, 3.0]], name="w")
    b = tp.variable([0.25, -0.25], name="b")

    def dense(x: tp.Tensor) -> tp.Tensor:
        return tp.relu(x @ w + b)

    x = np.array([[1.0, 2.0], [-1.0, 0.5], [3.0, 1.0]], np.float32)
    path = tmp_path / "dense.onnx"
    model = tp.export(dense, tp.tensor(x), path=path)
    assert isinstance(model, onnx.ModelProto)
    assert onnx.load(str(path)) == model
    assert [i.name for i in model.graph.input] == ["x"]
    assert [o.name for o in model.graph.output] == ["output"]
    initializers = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    np.testing.assert_array_equal(initializers["w"], w.numpy())
    np.testing.assert_array_equal(initializers["b"], b.numpy())
    assert model.opset_import[0].version == 18
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Add", "Relu"]
    (got,) = run(path, x=x)
    np.testing.assert_allclose(got, dense(tp.tensor(x)).numpy(), rtol=1e-6)
    assert [p.name for p in tmp_path.iterdir()] == ["dense.onnx"]  # written through a temporary file, renamed


def test_the_variables_values_at_the_time_of_the_export_are_written() -> None:
    w = tp.variable([1.0, 2.0], name="w")
    model = tp.export(lambda x: x * w, tp.tensor([1.0, 1.0]))
    w.assign(tp.tensor([5.0, 6.0]))
    (got,) = run(model, x=np.ones(2, np.float32))
    assert got.tolist() == [1.0, 2.0]


def test_outputs_by_key_returned_inputs_and_one_value_returned_twice() -> None:
    def f(x: tp.Tensor, y: tp.Tensor) -> dict[str, tp.Tensor]:
        total = x + y
        return {"total": total, "again": total, "x": x}

    model = tp.export(f, tp.tensor([1.0]), tp.tensor([2.0]))
    assert [o.name for o in model.graph.output] == ["total", "again", "x_out"]
    assert run(model, x=np.array([1.0], np.float32), y=np.array([2.0], np.float32)) == [[3.0], [3.0], [1.0]]


def test_dtypes_and_an_int_output() -> None:
    def classify(scores: tp.Tensor, offset: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor]:
        return tp.argmax(scores, axis=1), tp.cast(scores, "float64") + tp.cast(offset, "float64")

    scores = np.array([[0.1, 0.9], [0.7, 0.3]], np.float32)
    offset = np.array([1, 2], np.int64)
    model = tp.export(classify, tp.tensor(scores), tp.tensor(offset))
    label, shifted = run(model, scores=scores, offset=offset)
    assert label.dtype == np.int32
    assert label.tolist() == [1, 0]
    assert shifted.dtype == np.float64


def test_dynamic_batch_runs_any_batch_size() -> None:
    w = tp.variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")

    def predict(x: tp.Tensor) -> tp.Tensor:
        return tp.softmax(x @ w, axis=-1) + tp.mean(x, axis=0)[:2]

    model = tp.export(predict, tp.ones((4, 3)), dynamic_axes={"x": {0: "batch"}})
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["batch", 3]
    for batch in (2, 7):
        x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
        (got,) = run(model, x=x)
        np.testing.assert_allclose(got, predict(tp.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_a_dense_head_keeps_the_dynamic_batch() -> None:
    w = tp.variable(np.random.default_rng(0).standard_normal((24, 3)).astype(np.float32), name="w")
    mix = tp.tensor(np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32))

    def heads(x: tp.Tensor, y: tp.Tensor) -> tuple[tp.Tensor, ...]:
        return (
            tp.flatten(tp.relu(x)) @ w,
            tp.reshape(x, (-1, 12)),
            tp.reshape(x, (-1,)),
            tp.squeeze(y, axis=1),
            tp.einsum("bij,jk->bik", tp.reshape(x, (-1, 6, 4)), mix),
        )

    x4, y4 = tp.ones((4, 2, 3, 4)), tp.ones((4, 1, 5))
    model = tp.export(heads, x4, y4, dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    for batch in (1, 6, 11):
        rng = np.random.default_rng(batch)
        x = rng.standard_normal((batch, 2, 3, 4)).astype(np.float32)
        y = rng.standard_normal((batch, 1, 5)).astype(np.float32)
        got = run(model, x=x, y=y)
        want = [t.numpy() for t in heads(tp.tensor(x), tp.tensor(y))]
        assert [g.shape for g in got] == [v.shape for v in want]
        for g, v in zip(got, want, strict=True):
            np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-5)


def test_a_size_computed_from_the_dynamic_batch_is_refused_not_built_in() -> None:
    def first_half(x: tp.Tensor) -> tp.Tensor:
        return x[: x.shape[0] // 2]  # 2 rows at a batch of 4 and of 5, 3 at 7

    message = refused(first_half, tp.ones((4, 3)), dynamic_axes={"x": {0: "batch"}})
    assert "the sizes asked to be dynamic are built into the program" in message
    assert "(StridedSlice) has the attr end=(2, 3)" in message


def test_a_reshape_into_two_dynamic_axes_is_refused() -> None:
    def pair(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        outer = tp.expand_dims(x, 1) * tp.expand_dims(y, 0)
        return tp.reshape(outer, (x.shape[0], y.shape[0], 1))

    message = refused(pair, tp.ones((4,)), tp.ones((2,)), dynamic_axes={"x": {0: "rows"}, "y": {0: "n"}})
    assert "the kernel 'Reshape'" in message
    assert "ONNX's Reshape infers one size only" in message


def test_a_converter_needing_a_dynamic_size_refuses() -> None:
    def running_product(x: tp.Tensor) -> tp.Tensor:
        return tp.cumprod(x, axis=0)

    with pytest.raises(tp.ExportError) as caught:
        tp.export(running_product, tp.ones((4, 3)), dynamic_axes={"x": [0]})
    assert "the kernel 'Cumprod' (made by tp.cumprod)" in str(caught.value)
    assert "needs the size of axis 0 of x, which is dynamic (x_dim0)" in str(caught.value)


def test_options() -> None:
    model = tp.export(lambda x: x + 1.0, tp.tensor([1.0]), opset=20, model_name="plus_one", doc_string="adds one")
    assert (model.opset_import[0].version, model.graph.name, model.doc_string) == (20, "plus_one", "adds one")
    with pytest.raises(tp.ExportError, match=r"unknown option 'opset_version'; the ONNX exporter takes opset"):
        tp.export(lambda x: x + 1.0, tp.tensor([1.0]), opset_version=18)
    with pytest.raises(tp.ExportError, match="opset must be an int from 18 to"):
        tp.export(lambda x: x + 1.0, tp.tensor([1.0]), opset=13)


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(tp.ExportError, match=r"the folder .*missing.* does not exist"):
        tp.export(lambda x: x + 1.0, tp.tensor([1.0]), path=tmp_path / "missing" / "model.onnx")


# -- what is refused -------------------------------------------------------------------------------------------------


def refused(fn: Any, *args: Any, **kwargs: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(tp.ExportError) as caught:
            tp.export(fn, *args, **kwargs)
    return str(caught.value)


def test_a_kernel_onnx_cannot_express_is_named_with_its_op_and_inputs() -> None:
    def pool_gradient(dy: tp.Tensor, x: tp.Tensor) -> tp.Tensor:
        attrs = {"filter_size": (2, 2), "strides": (2, 2), "pad": ((0, 0), (0, 0))}
        return tp.run_kernel("AvgPoolGrad", {"dy": dy, "input": x}, attrs)

    message = refused(pool_gradient, tp.ones((1, 1, 1, 1)), tp.ones((1, 2, 2, 1)))
    assert message.startswith("tp.export('pool_gradient', format='onnx'): step 0 of the program, the kernel")
    assert (
        "the kernel 'AvgPoolGrad' (made by the gradient of tp.avg_pool) on dy: float32[1, 1, 1, 1], input: "
        "float32[1, 2, 2, 1] cannot be exported to ONNX: it is the gradient of another kernel"
    ) in message
    assert "tensorplug_onnx.exportable_kernels()" in message


def test_atan2_keeps_cs_quadrants_signed_zeros_and_infinities() -> None:
    # The conformance cases check Atan2's special values in float64, which ONNX Runtime cannot run: here in float32.
    values = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -0.3, np.inf, -np.inf, np.nan], np.float32)
    y, x = (v.ravel() for v in np.meshgrid(values, values))
    model = tp.export(tp.atan2, tp.tensor(y), tp.tensor(x))
    (got,) = run(model, **{i.name: v for i, v in zip(model.graph.input, (y, x), strict=True)})
    want = np.arctan2(y, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, equal_nan=True)
    numbers = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))  # -0.0 where C gives -0.0


def test_a_kernel_onnx_runtime_has_for_float32_only_is_refused_for_float64() -> None:
    message = refused(tp.acos, tp.tensor([0.5], dtype="float64"))
    assert "the kernel 'Acos' (made by tp.acos) on x: float64[1]" in message
    assert "ONNX Runtime implements Acos for float32 only; cast the input to float32" in message
    tp.export(tp.acos, tp.tensor([0.5], dtype="float32"))  # float32 exports


def test_a_kernel_outside_the_catalogue_is_refused(tensorplug_registries: None) -> None:
    tp.register_kernel("Twice", "numpy", lambda inputs, attrs, backend: inputs["x"] * 2)
    message = refused(lambda x: tp.run_kernel("Twice", {"x": x}), tp.tensor([1.0]))
    assert "the kernel 'Twice' (not a kernel of tensorplug's catalogue) on x: float32[1]" in message
    assert "has neither an ONNX translation nor a decomposition (it is registered by user code)" in message
    assert "tp.register_translation('onnx', 'Twice', translate)" in message
    assert "tp.register_decomposition('Twice', fn)" in message


def test_a_program_recording_gradients_is_refused() -> None:
    message = refused(tp.grad(lambda x: tp.sum(x * x)), tp.tensor([1.0, 2.0]))
    assert "the kernel 'BroadcastTo' (made by the gradient of 'Sum') on x: float32[]" in message
    assert "computes a gradient: the function records gradients" in message
    assert "Export the forward computation" in message


def test_random_draws_are_refused() -> None:
    message = refused(lambda x: x + tp.random_normal((2,)), tp.tensor([1.0, 2.0]))
    assert "the kernel 'RandomNormal' (made by tp.random_normal) draws random numbers" in message
    assert "ONNX's generator is not tensorplug's" in message


def test_a_training_step_is_refused() -> None:
    w = tp.variable([1.0, 2.0], name="w")
    optimizer = tp.train.SGD(0.1)

    def train_step(x: tp.Tensor) -> tp.Tensor:
        return optimizer.minimize(lambda: tp.sum((x * w) ** 2), [w])

    message = refused(train_step, tp.tensor([1.0, 1.0]))
    assert "computes host values at each call (an optimizer's step count and hyper-parameters)" in message
    assert "it trains, and ONNX export writes inference programs" in message


def test_a_variable_update_is_refused() -> None:
    counter = tp.variable(0.0, name="counter")

    def count(x: tp.Tensor) -> tp.Tensor:
        counter.assign(counter + 1.0)
        return x + counter

    message = refused(count, tp.tensor([1.0]))
    assert "the function assigns the Variable 'counter' (step 1)" in message
    assert "an ONNX model has no state to update" in message


def test_a_function_returning_nothing_is_refused() -> None:
    assert "returns no tensor" in refused(lambda x: (), tp.tensor([1.0]))
