"""``tp.testing.check_kernel``: a correct kernel passes on every backend that runs it (its own kernel, or its
decomposition), and each way a kernel can be wrong fails with a message naming the check, the backend, the example
and what differs: a wrong gradient, a wrong output dtype, a kernel that differs from its decomposition, one that
writes into its input, one whose replay differs from eager. The export round trip runs through an exporter's
declared runner."""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._runtime._registry import REGISTRIES
from tensorplug._runtime._state import state
from tensorplug.testing import ExportRunner, KernelReport, check_kernel

NAME = "CheckedSwish"  # a name no installed plugin provides
X32 = {"x": np.array([-1.5, -0.2, 0.4, 2.0], np.float32)}
X64 = {"x": np.array([[0.3, -0.7], [1.1, -2.2]], np.float64)}
OTHERS = [b for b in ("torch", "dask") if importlib.util.find_spec(b) is not None]


@pytest.fixture(autouse=True)
def _restored(tensorplug_registries: Any) -> Any:
    yield
    tp.set_backend("numpy")


def swish_numpy(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    return x / (1 + np.exp(-attrs["beta"] * x))


def swish_ops(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    return inputs["x"] * tp.sigmoid(inputs["x"] * attrs["beta"])


def swish_grad(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    (x,) = saved
    s = tp.sigmoid(x * attrs["beta"])
    return (dy * (s + x * attrs["beta"] * s * (1.0 - s)),)


def register(kernel: Any = swish_numpy, grad: Any = swish_grad, decomposition: Any = swish_ops) -> None:
    tp.register_kernel(NAME, "numpy", kernel)
    if decomposition is not None:
        tp.register_decomposition(NAME, decomposition)
    if grad is not None:
        tp.register_gradient(NAME, grad, inputs_to_save=("x",), new_kernel=True)


def failure(**options: Any) -> str:
    with pytest.raises(AssertionError) as caught:
        check_kernel(NAME, X32, **{"backends": ["numpy"], "beta": 1.0, **options})
    return str(caught.value)


def test_a_correct_kernel_passes_on_numpy_and_through_its_decomposition_elsewhere() -> None:
    register()
    report = check_kernel(NAME, X32, X64, beta=1.0, exporters=[])
    assert isinstance(report, KernelReport)
    assert not report.failed
    for check in ("runs", "inputs unchanged", "output dtypes", "output shapes", "decomposition", "gradient"):
        assert report.outcome(check, "numpy") == "passed", report.text()
    for check in ("replay", "gradient replay", "gradient override"):
        assert report.outcome(check, "numpy") == "passed", report.text()
    assert "order 2, in float64" in next(c.detail for c in report.checks if c.check == "gradient")
    for backend in OTHERS:  # a numpy-only kernel: torch and dask run it as its decomposition, moving nothing
        ran = [c for c in report.checks if c.where == backend and c.check == "runs"]
        assert [c.outcome for c in ran] == ["passed", "passed"]
        assert "as its decomposition" in ran[0].detail
        assert report.outcome("decomposition", backend) == "skipped"  # it is the decomposition there
        assert report.outcome("gradient", backend) == "passed", report.text()
    assert f"check_kernel({NAME!r}, beta=1.0)" in report.text()


def test_a_wrong_gradient_fails_naming_the_check_backend_and_example() -> None:
    register(grad=lambda dy, saved, attrs: (dy * 2.0,))
    message = failure()
    assert "- gradient on numpy, example 1 (x: float32[4]): check_grads: analytic and numeric" in message
    assert "what to do: the gradient (tp.register_gradient" in message


def test_a_kernel_returning_float64_for_float32_inputs_fails_the_output_dtypes() -> None:
    register(kernel=lambda inputs, attrs, b: swish_numpy(inputs, attrs, b).astype(np.float64))
    message = failure()
    assert "output dtypes on numpy, example 1 (x: float32[4]): output 0 has dtype float64, the decomposition" in message
    register(kernel=lambda inputs, attrs, b: swish_numpy(inputs, attrs, b).astype(np.float64), decomposition=None)
    tp.unregister_decomposition(NAME)
    assert "output 0 has dtype float64, output_dtypes= declares float32" in failure(output_dtypes="float32")
    assert "output dtypes on numpy" in failure(output_dtypes=lambda dtypes: [dtypes["x"]])


def test_a_kernel_differing_from_its_decomposition_fails_with_the_largest_difference_and_where() -> None:
    register(decomposition=lambda inputs, attrs: inputs["x"] * tp.sigmoid(inputs["x"] * 2.0))
    message = failure()
    assert "- decomposition on numpy, example 1 (x: float32[4]): output 0: the kernel and its decomposition differ" in (
        message
    )
    assert "at 4 of 4 elements, by up to 0.202 (at [0]: kernel -0.2736" in message  # x = -1.5: x s(x) against x s(2x)


def test_a_kernel_writing_into_its_input_fails_naming_the_input() -> None:
    def doubling(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x = inputs["x"]
        x *= 2
        return x

    register(kernel=doubling, grad=lambda dy, saved, attrs: (dy * 2.0,), decomposition=None)
    message = failure()
    assert "- inputs unchanged on numpy, example 1 (x: float32[4]): the kernel wrote into input 'x': 4 of 4" in message
    assert "not x *= 2" in message


def test_a_kernel_whose_lowering_differs_from_it_fails_the_replay() -> None:
    def swish_declaring_sin(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return swish_numpy(inputs, {"beta": 1.0}, backend)

    swish_declaring_sin.applies = np.sin  # type: ignore[attr-defined]  # a wrong declaration: the lowering calls it
    register(kernel=swish_declaring_sin)
    message = failure()
    assert "- replay on numpy, example 1 (x: float32[4]): " in message
    assert "CheckedSwish-example 1 (traced values, output 0): the replay differs from eager by up to" in message


def test_a_gradient_declared_replayable_that_reads_python_state_fails_the_gradient_replay() -> None:
    calls: list[int] = []

    def counting(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        calls.append(1)  # Python state, which a replay does not see change: not a replayable gradient
        return (dy * float(len(calls)),)

    register(grad=None)
    tp.register_gradient(NAME, counting, inputs_to_save=("x",), new_kernel=True, replay=True)
    message = failure()
    assert "- gradient replay on numpy, example 1 (x: float32[4]): " in message
    assert "differs from the gradients as written" in message


def test_list_inputs_are_checked_tensor_by_tensor() -> None:
    a, b = np.array([1.0, -2.0], np.float32), np.array([0.5, 3.0], np.float32)
    report = check_kernel("AddN", {"tensors": [a, b]}, backends=["numpy"], exporters=[])
    assert report.outcome("gradient override", "numpy") == "passed"
    assert report.checks[0].example == "1 (tensors: [float32[2], float32[2]])"
    with pytest.raises(AssertionError, match=r"the kernel reference names its inputs: tensors \(a list\)"):
        check_kernel("AddN", {"xs": [a, b]}, backends=["numpy"], exporters=[])


def test_a_catalogue_kernel_passes_with_its_reference_entry_declaring_the_dtypes() -> None:
    a, b = np.array([1.0, -2.0, 0.5], np.float32), np.array([0.5, 1.5, -3.0], np.float32)
    report = check_kernel("Atan2", {"a": a, "b": b}, backends=["numpy"], exporters=[])
    assert report.outcome("output dtypes", "numpy") == "passed"
    assert "kernel reference" in next(c.detail for c in report.checks if c.check == "output dtypes")
    assert report.outcome("gradient override", "numpy") == "passed"


def test_the_export_round_trip_runs_through_the_exporters_runner() -> None:
    register()

    def export(request: Any) -> Any:  # the "program" is the kernel itself, run on numpy
        return lambda x: [swish_numpy({"x": x}, {"beta": 1.0}, None)]

    runner = ExportRunner(run=lambda artefact, inputs: artefact(*inputs), name="Python")
    tp.register_exporter("python-check", export, runner=lambda: runner)
    report = check_kernel(NAME, X32, X64, backends=["numpy"], exporters=["python-check"], beta=1.0)
    assert [c.outcome for c in report.checks if c.check == "export"] == ["passed", "passed"]
    assert report.outcome("export", "python-check on numpy") == "passed"

    def refuse(request: Any) -> Any:
        raise tp.ExportError(f"the format cannot write {request.program.kernel_steps[0].kernel}")

    tp.register_exporter("refusing", refuse, runner=lambda: runner)
    tp.register_exporter("runnerless", export)
    report = check_kernel(NAME, X32, backends=["numpy"], beta=1.0)  # every installed exporter: skips, no failure
    skipped = {c.where: c.detail for c in report.checks if c.check == "export" and c.outcome == "skipped"}
    assert skipped["refusing on numpy"] == f"not exportable: the format cannot write {NAME}"
    assert "declares no runner (ExporterSpec.runner)" in skipped["runnerless"]
    message = failure(exporters=["refusing"])  # named: its refusal fails
    refused = (
        f"- export on refusing on numpy, example 1 (x: float32[4]): not exportable: the format cannot write {NAME}"
    )
    assert refused in message


def test_backends_that_would_move_data_or_cannot_start_are_skipped_with_the_reason() -> None:
    register(decomposition=None)
    tp.register_backend("unstartable", _unstartable)
    report = check_kernel(NAME, X32, beta=1.0, exporters=[])
    why = {c.where: c.detail for c in report.checks if c.check == "backend"}
    assert why["unstartable"].startswith("cannot be initialised:")
    for backend in OTHERS:
        assert why[backend] == f"no kernel {NAME!r} is registered for {backend!r} and it has no decomposition" + (
            " (it would run on the fallback backend 'numpy', moving the data)" if backend == "dask" else ""
        )
    if OTHERS:
        with pytest.raises(AssertionError, match=f"- backend on {OTHERS[0]}, example -: no kernel"):
            check_kernel(NAME, X32, backends=["numpy", OTHERS[0]], beta=1.0, exporters=[])


class BareBackend(tp.Backend):
    """NumPy storage under another name, with no kernels of its own."""

    def from_host(self, array: np.ndarray) -> np.ndarray:
        return array.copy()

    def to_host(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def dtype_of(self, raw: np.ndarray) -> str:
        return raw.dtype.name


def test_a_backend_lacking_the_ops_of_the_decomposition_is_skipped_unless_named() -> None:
    register()
    tp.register_backend("bare", BareBackend, priority=-5)  # (conftest's fixture removes the backends a test adds)
    tp.register_backend("twin", BareBackend, priority=-5, fallback="numpy")
    report = check_kernel(NAME, X32, beta=1.0, exporters=[])
    why = {c.where: c.detail for c in report.checks if c.check == "backend"}
    assert why["bare"].startswith("its decomposition needs a kernel the backend lacks: KernelNotFoundError: No kernel")
    assert why["twin"].startswith("its decomposition needs a kernel the backend lacks: FallbackWarning: ")
    with pytest.raises(
        AssertionError, match=r"- runs on bare, example 1 .*: KernelNotFoundError: No kernel 'Multiply'"
    ):
        check_kernel(NAME, X32, backends=["bare"], beta=1.0, exporters=[])


def _unstartable(**options: Any) -> Any:
    raise tp.BackendError("this backend needs a device that is not here")


def test_an_attr_named_like_a_keyword_goes_through_attrs_and_nothing_leaks() -> None:
    seen: list[Any] = []

    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        seen.append(attrs["order"])
        return inputs["x"] * 2.0

    tp.register_kernel(NAME, "numpy", kernel)
    tp.register_gradient(NAME, lambda dy, saved, attrs: (dy * 2.0,), new_kernel=True, replay=True)
    filters = list(warnings.filters)
    registries = [registry.snapshot() for registry in REGISTRIES]
    report = check_kernel(NAME, X32, backends=["numpy"], exporters=[], attrs={"order": 3}, order=1)
    assert [registry.snapshot() for registry in REGISTRIES] == registries
    assert state.overrides is None
    assert set(seen) == {3}
    assert "order 1" in next(c.detail for c in report.checks if c.check == "gradient")
    assert tp.get_backend() == "numpy"
    assert warnings.filters == filters
    assert tp.grad(lambda x: tp.sum(tp.run_kernel(NAME, {"x": x}, {"order": 3})))(tp.tensor([1.0])).tolist() == [2.0]
    with pytest.raises(TypeError, match="attr 'beta' given both in attrs= and as a keyword"):
        check_kernel(NAME, X32, attrs={"beta": 3.0}, beta=1.0)
    with pytest.raises(TypeError, match="example 1 must be a non-empty mapping"):
        check_kernel(NAME, [np.ones(2)])  # type: ignore[arg-type]


def test_the_pytest_fixture_checks_and_undoes_the_tests_registrations(tensorplug_check_kernel: Any) -> None:
    register()
    report = tensorplug_check_kernel(NAME, X32, backends=["numpy"], exporters=[], beta=0.5)
    assert report.outcome("gradient", "numpy") == "passed"


def test_an_exporters_runner_is_validated_where_it_is_declared() -> None:
    from tensorplug._plugins._guard import PluginProblem
    from tensorplug._plugins._specs import validate

    with pytest.raises(tp.RegistrationError, match="runner must be a callable returning"):
        tp.register_exporter("bad-runner", lambda request: None, runner=3)  # type: ignore[arg-type]
    with pytest.raises(PluginProblem, match="runner lazy reference 'no colon' is not of the form"):
        validate(tp.ExporterSpec("fmt", "pkg:export", runner="no colon"))
    validate(tp.ExporterSpec("fmt", "pkg:export", runner="pkg._runner:runner"))
