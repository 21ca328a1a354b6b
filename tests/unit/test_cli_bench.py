"""``tensorplug bench``: the rows it prints, the backends it measures and against what, what it never imports,
how it turns repeats into a time, and how it words its verdict.

Only quick settings, and no assertion on a time beyond "positive": the
figures depend on the machine (the verdict is checked on rows made up here).
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._tools._bench import blas, cnn, isolated, report, timing, workloads
from tensorplug._tools._bench.timing import FULL, QUICK
from tensorplug._tools._cli import main

# The workloads, eager then traced, with their references and targets, spelled out here rather than taken from
# the code under test.
NUMPY_ROWS = {
    "run_kernel Add, 1 element, no tape": ("np.add", 3.0),
    "run_kernel Add, 1 element, recording": ("np.add", 5.0),
    "a + b operator, 1 element, no tape": ("np.add", None),
    "grad of sum(tanh(x*w+b)), 1 element": ("NumPy by hand", 10.0),
    "MLP 64-32-10 batch 32, SGD step": ("NumPy by hand", 4.0),
    "MLP 784-256-256-10 batch 128, SGD step": ("NumPy by hand", 1.10),
    "MLP 64-32-10 batch 32, SGD step, optimizer minimize": ("NumPy by hand", 4.0),
    "MLP 784-256-256-10 batch 128, SGD step, optimizer minimize": ("NumPy by hand", 1.10),
    "grad of sum(tanh(x*w+b)), 1 element, tp.function": ("NumPy by hand", 1.10),
    "MLP 64-32-10 batch 32, SGD step, tp.function": ("NumPy by hand", 1.10),
    "MLP 784-256-256-10 batch 128, SGD step, tp.function": ("NumPy by hand", 0.92),
    "digits CNN conv16-pool-conv32-pool-dense batch 32, Adam step": ("NumPy by hand", None),
    "digits CNN conv16-pool-conv32-pool-dense batch 32, Adam step, tp.function": ("NumPy by hand", None),
}
# The numpy backend's eager rows also measured against raw PyTorch (its time taken from the torch backend's
# process): the torch reference and the target of each.
NUMPY_AGAINST_TORCH = {
    "a + b operator, 1 element, no tape": ("torch.Tensor +", 1.0),
    "grad of sum(tanh(x*w+b)), 1 element": ("torch.autograd.grad", 1.0),
    "MLP 64-32-10 batch 32, SGD step": ("raw PyTorch eager", 1.25),
    "MLP 784-256-256-10 batch 128, SGD step": ("raw PyTorch eager", None),
    "digits CNN conv16-pool-conv32-pool-dense batch 32, Adam step": ("raw PyTorch eager", 1.30),
    "digits CNN conv16-pool-conv32-pool-dense batch 32, Adam step, tp.function": ("raw PyTorch eager", 1.30),
}
IMPORT_ROW = "python -c 'import tensorplug' (whole process)"

# Runs the command in a fresh interpreter, then says on stderr which torch modules got imported.
RUN_AND_LIST_TORCH = """
import sys
from tensorplug._tools._cli import main
status = main(sys.argv[1:])
print("TORCH MODULES:", sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")), file=sys.stderr)
sys.exit(status)
"""


def bench_json(*options: str) -> tuple[dict[str, Any], str]:
    """``tensorplug bench --quick --json OPTIONS`` in a subprocess: the parsed JSON and stderr."""
    command = [sys.executable, "-c", RUN_AND_LIST_TORCH, "bench", "--quick", "--json", *options]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout), result.stderr


def test_bench_on_numpy_gives_every_row_and_never_imports_torch(tmp_path: Path) -> None:
    output = tmp_path / "RESULTS.md"
    data, stderr = bench_json("--backend", "numpy", "--output", str(output))
    assert "TORCH MODULES: []" in stderr, stderr
    rows = {(row["backend"], row["workload"]): row for row in data["rows"]}
    assert set(rows) == {("numpy", name) for name in NUMPY_ROWS} | {(None, IMPORT_ROW)}
    for (backend, workload), row in rows.items():
        assert row["reference_seconds"] > 0, row
        assert row["tensorplug_seconds"] > 0, row
        assert row["ratio"] == pytest.approx(row["tensorplug_seconds"] / row["reference_seconds"])
        if backend == "numpy":
            reference, target = NUMPY_ROWS[workload]
            assert row["reference"] == reference
            assert row["device"] == "cpu"
        else:
            reference, target = "import numpy, pluggy", 1.25
        assert row["target"] == target
        assert row["met"] is None  # --quick judges nothing: its times are too short to tell met from missed
    assert data["backends"] == [{"backend": "numpy", "device": "cpu", "reference": "raw NumPy", "failures": []}]
    assert data["skipped"] == {}
    assert data["settings"]["judged"] is False

    text = output.read_text(encoding="utf-8")
    assert "tensorplug bench --backend numpy --quick" in text
    assert "| backend | workload | reference |" in text
    assert "| numpy (cpu) | MLP 784-256-256-10 batch 128, SGD step | NumPy by hand |" in text
    assert "No verdict: --quick times each workload for milliseconds" in text
    assert "| yes |" not in text
    assert "| NO |" not in text
    assert "## Machine" in text
    assert data["blas"]["library"] == blas.probe().library  # what numpy was built with
    assert f"NumPy's BLAS: {data['blas']['library']}" in text


def test_the_blas_line_names_the_kernels_openblas_runs_and_warns_when_an_override_forces_others() -> None:
    forced = blas.BlasInfo("scipy-openblas 0.3", "Haswell", 1, {"OPENBLAS_CORETYPE": "Haswell"})
    warning = forced.warning(blas.BlasInfo("scipy-openblas 0.3", "SkylakeX", 1))
    assert warning is not None
    assert "OPENBLAS_CORETYPE=Haswell makes OpenBLAS run its Haswell kernels, where this CPU would run SkylakeX" in (
        warning
    )
    assert "env -u OPENBLAS_CORETYPE tensorplug bench" in warning
    assert forced.warning(blas.BlasInfo("scipy-openblas 0.3", "Haswell", 1)) is None  # the CPU's own choice anyway
    assert blas.BlasInfo("scipy-openblas 0.3", "SkylakeX", 1).warning(None) is None  # no override
    assert forced.text() == "scipy-openblas 0.3, Haswell kernels, 1 thread, set by OPENBLAS_CORETYPE=Haswell"


def test_the_probe_reads_the_kernels_openblas_chose_in_this_process() -> None:
    here = blas.probe()
    if here.kernel is None:
        pytest.skip(f"numpy's BLAS here ({here.library}) does not say which kernels it runs")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("OPENBLAS_CORETYPE=Haswell names x86-64 kernels")
    code = "from tensorplug._tools._bench.blas import probe; print(probe().kernel)"
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}
    forced = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert forced.stdout.strip() == "Haswell", forced.stderr  # OpenBLAS honours the override: the probe sees it


def test_an_unknown_backend_is_an_error_that_names_the_installed_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--quick", "--backend", "no_such_backend"]) == 2
    err = capsys.readouterr().err
    assert "no backend named 'no_such_backend' is installed" in err
    assert "numpy" in err


# -- another backend: measured against raw NumPy -----------------------------------------------------------------


class TwinBackend(tp.Backend):
    """NumPy storage under another name, with no kernels of its own: each one falls back to the numpy backend."""

    def from_host(self, array: np.ndarray) -> np.ndarray:
        return array.copy()

    def to_host(self, raw: np.ndarray) -> np.ndarray:
        return raw

    def dtype_of(self, raw: np.ndarray) -> str:
        return raw.dtype.name


@pytest.fixture
def twin() -> str:
    tp.register_backend("twin", TwinBackend, fallback="numpy")  # removed after the test by conftest's fixture
    return "twin"


def bench_quietly(name: str) -> workloads.BackendResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.FallbackWarning)
        return workloads.bench_backend(name, QUICK)


def test_another_backend_is_measured_against_raw_numpy_without_targets(twin: str) -> None:
    result = bench_quietly(twin)
    assert result.failures == []
    assert result.reference == "raw NumPy"
    assert {row.workload: row.reference_name for row in result.rows} == {
        name: reference for name, (reference, _) in NUMPY_ROWS.items()
    }
    for row in result.rows:
        assert row.backend == "twin"
        assert row.target is None  # the targets concern the numpy and torch backends
        assert row.reference > 0
        assert row.tensorplug > 0
    assert tp.get_backend() == "numpy"  # the backend active before is active again
    lines = report.references_text(report.Results(QUICK, "test", backends=[result]))
    assert lines == ["- backend twin (cpu): against raw NumPy (the reference for every backend other than torch)"]


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_wrong_kernel_fails_its_workloads_and_the_others_still_run(twin: str) -> None:
    def wrong_tanh(inputs: dict[str, Any], attrs: dict[str, Any], backend: object) -> np.ndarray:
        return np.tanh(inputs["x"]) + np.float32(0.5)

    tp.register_kernel("Tanh", twin, wrong_tanh)
    result = bench_quietly(twin)
    assert len(result.failures) == 2  # the gradient, eager and traced; the MLPs use no tanh
    assert result.failures[0].startswith("grad of sum(tanh(x*w+b)), 1 element on backend 'twin': BenchCheckError")
    assert result.failures[1].startswith(
        "grad of sum(tanh(x*w+b)), 1 element, tp.function on backend 'twin': BenchCheckError"
    )
    assert not {row.workload for row in result.rows} & {"grad of sum(tanh(x*w+b)), 1 element"}
    assert len(result.rows) == len(NUMPY_ROWS) - 2


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_wrong_convolution_gradient_fails_the_cnn_rows_and_the_others_still_run(twin: str) -> None:
    from tensorplug_numpy._nn import conv2d_backprop_filter

    def wrong_filter_gradient(inputs: dict[str, Any], attrs: dict[str, Any], backend: object) -> np.ndarray:
        return -conv2d_backprop_filter(inputs, attrs, backend)  # the same loss; Adam moves the filters the wrong way

    tp.register_kernel("Conv2DBackpropFilter", twin, wrong_filter_gradient)
    result = bench_quietly(twin)
    cnn = "digits CNN conv16-pool-conv32-pool-dense batch 32, Adam step"
    assert [failure.split(": ")[0] for failure in result.failures] == [
        f"{cnn} on backend 'twin'",
        f"{cnn}, tp.function on backend 'twin'",
    ]
    assert all("BenchCheckError: " in failure and "updated weight 0 differs" in failure for failure in result.failures)
    assert len(result.rows) == len(NUMPY_ROWS) - 2


@pytest.mark.parametrize("traced", [False, True])
def test_each_repeat_of_the_cnn_step_starts_again_from_the_initial_weights_and_a_fresh_adam(traced: bool) -> None:
    problem = cnn.make_cnn_problem()
    by_hand, with_tp = cnn.NumpyCNN(problem), cnn.TensorplugCNN(problem, f"test-cnn-{traced}", traced)
    first_loss, first_weights = with_tp.loss_and_weights()
    for _ in range(3):  # Adam's later steps: other weights, and the slots and step count that reset must undo
        with_tp.step()
    again_loss, again_weights = with_tp.loss_and_weights()
    expected_loss, expected_weights = by_hand.loss_and_weights()
    assert again_loss == first_loss
    for got, first, expected in zip(again_weights, first_weights, expected_weights, strict=True):
        np.testing.assert_array_equal(got, first)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    assert np.isclose(first_loss, expected_loss, rtol=1e-5)


def test_hips_autograd_is_timed_for_comparison_when_installed() -> None:
    pytest.importorskip("autograd", reason="HIPS autograd is optional (nox -s tests installs it)")
    result = workloads.bench_autograd(QUICK)
    assert result.backend == "HIPS autograd"
    eager = [name for name in NUMPY_ROWS if not name.endswith(("tp.function", "minimize"))]
    assert [row.workload for row in result.rows] == [name for name in eager if "grad" in name or "MLP" in name]
    assert all(row.reference > 0 and row.tensorplug > 0 and row.target is None for row in result.rows)
    assert {row.reference_name for row in result.rows} == {"NumPy by hand"}


# -- how repeats become a time --------------------------------------------------------------------------------------


def test_each_side_gets_the_smallest_of_its_per_round_medians_with_repeats_interleaved() -> None:
    calls: list[str] = []
    reference_times = iter([5.0, 1.0, 5.0, 2.0, 3.0, 2.0])  # round medians 5 and 2
    candidate_times = iter([4.0, 4.0, 9.0, 1.0, 8.0, 8.0])  # round medians 4 and 8

    def reference() -> float:
        calls.append("reference")
        return next(reference_times)

    def candidate() -> float:
        calls.append("candidate")
        return next(candidate_times)

    assert timing.min_of_medians(reference, candidate, rounds=2, repeats=3) == (2.0, 4.0)
    assert calls == ["reference", "candidate"] * 6


# -- the verdict ------------------------------------------------------------------------------------------------------


def made_up_results(settings: timing.Settings) -> report.Results:
    """A met, a missed and a too-close target, and a row without one, with made-up times."""
    rows = [
        workloads.Row("numpy", "cpu", "MLP 64-32-10 batch 32, SGD step, tp.function", "NumPy by hand", 1e-5, 0.95e-5),
        workloads.Row("numpy", "cpu", "MLP 64-32-10 batch 32, SGD step", "NumPy by hand", 1e-5, 5e-5),
        workloads.Row("numpy", "cpu", "a + b operator, 1 element, no tape", "np.add", 1e-7, 9e-7),
    ]
    backend = workloads.BackendResult("numpy", "cpu", "raw NumPy", rows, [])
    results = report.Results(settings, "tensorplug bench", [backend])
    results.import_row = workloads.Row(None, None, IMPORT_ROW, "import numpy, pluggy", 0.1, 0.12)  # 1.20x of 1.25x
    return results


def test_the_verdict_speaks_of_targets_and_not_history() -> None:
    results = made_up_results(FULL)
    assert report.verdict(results) == [
        "Verdict: 1 of 3 targets met, 1 missed, 1 too close to call (within 10% of the target either way, which a "
        "busy machine can swing from run to run).",
        "Missed:",
        "- numpy (cpu), MLP 64-32-10 batch 32, SGD step: 5.00x (target: ≤ 4.00x NumPy by hand)",
        "Too close to call:",
        "- python -c 'import tensorplug' (whole process): 1.20x (target: ≤ 1.25x import numpy, pluggy)",
    ]
    text = report.markdown_report(results)
    row = "| numpy (cpu) | MLP 64-32-10 batch 32, SGD step | NumPy by hand | 10 µs | 50 µs | 5.00x | ≤ 4.00x | NO |"
    assert row in text
    assert "| 1.20x | ≤ 1.25x | close |" in text
    assert [(row["met"], row["verdict"]) for row in report.json_report(results)["rows"]] == [
        (True, "met"),
        (False, "missed"),
        (None, None),
        (None, "close"),
    ]
    for page in (text, Path(workloads.__file__).read_text(encoding="utf-8"), Path(report.__file__).read_text("utf-8")):
        assert "issue" not in page.lower()
        assert not re.search(r"#\d", page)


@pytest.mark.parametrize(
    ("ratio", "verdict"),
    [(0.99, "met"), (1.01, "close"), (1.1, "close"), (1.2, "close"), (1.22, "missed")],
)
def test_a_ratio_within_a_tenth_of_its_target_either_way_is_too_close_to_call(ratio: float, verdict: str) -> None:
    row = workloads.Row("numpy", "cpu", "grad of sum(tanh(x*w+b)), 1 element, tp.function", "NumPy by hand", 1.0, ratio)
    assert row.target == 1.1
    assert row.verdict == verdict


def test_quick_settings_judge_nothing() -> None:
    results = made_up_results(QUICK)
    assert report.verdict(results) == [
        "No verdict: --quick times each workload for milliseconds, too briefly to tell whether the 3 rows with a "
        "target meet it (run `tensorplug bench` without --quick for a verdict)."
    ]
    assert [row["met"] for row in report.json_report(results)["rows"]] == [None, None, None, None]
    assert [row["verdict"] for row in report.json_report(results)["rows"]] == [None, None, None, None]
    assert "| ≤ 1.25x | - |" in report.markdown_report(results)


# -- the numpy backend against raw PyTorch ---------------------------------------------------------------------------


def made_up_backend(backend: str, device: str, reference: str, references: dict[str, str]) -> workloads.BackendResult:
    """A backend's eager rows with made-up times: 1 s for each reference, 2 s for tensorplug."""
    rows = [workloads.Row(backend, device, name, ref, 1.0, 2.0) for name, ref in references.items()]
    return workloads.BackendResult(backend, device, reference, rows, [])


NUMPY_REFERENCES = {name: reference for name, (reference, _) in NUMPY_ROWS.items()}
TORCH_REFERENCES = {name: reference for name, (reference, _) in NUMPY_AGAINST_TORCH.items()}


def test_the_numpy_rows_face_raw_pytorch_timed_in_the_torch_process_of_the_same_run() -> None:
    numpy_result = made_up_backend("numpy", "cpu", "raw NumPy", NUMPY_REFERENCES)
    numpy_result.rows[:] = [replace(row, tensorplug=0.5) for row in numpy_result.rows]  # told apart from torch's
    torch_result = made_up_backend("torch", "cpu", "raw PyTorch eager", TORCH_REFERENCES)
    torch_result.rows[:] = [replace(row, reference=0.25) for row in torch_result.rows]
    results = report.Results(FULL, "tensorplug bench", [numpy_result, torch_result])
    against_torch = [
        row
        for row in results.rows
        if row.backend == "numpy" and row.reference_name.startswith(("torch", "raw PyTorch"))
    ]
    assert [(row.workload, row.reference_name, row.target) for row in against_torch] == [
        (name, reference, target) for name, (reference, target) in NUMPY_AGAINST_TORCH.items()
    ]
    for row in against_torch:  # numpy's tensorplug time over raw PyTorch's time
        assert (row.tensorplug, row.reference, row.ratio) == (0.5, 0.25, 2.0)
    assert any("from the torch backend's process of the same run" in line for line in report.references_text(results))
    assert "| numpy (cpu) | grad of sum(tanh(x*w+b)), 1 element | torch.autograd.grad | 250 ms | 500 ms | 2.00x |" in (
        report.markdown_report(results)
    )


def test_without_the_torch_backend_on_the_cpu_the_numpy_rows_face_raw_numpy_only() -> None:
    numpy_result = made_up_backend("numpy", "cpu", "raw NumPy", NUMPY_REFERENCES)
    on_cuda = made_up_backend("torch", "cuda:0", "raw PyTorch eager", TORCH_REFERENCES)
    for backends in ([numpy_result], [numpy_result, on_cuda]):
        results = report.Results(FULL, "tensorplug bench", backends)
        assert report.cross_rows(backends) == []
        assert len(results.rows) == sum(len(result.rows) for result in backends)
        assert not any("torch backend's process" in line for line in report.references_text(results))


def test_the_numpy_traced_steps_face_jax_jit_timed_in_jax_process_of_the_same_run() -> None:
    numpy_result = made_up_backend("numpy", "cpu", "raw NumPy", NUMPY_REFERENCES)
    numpy_result.rows[:] = [replace(row, tensorplug=0.5) for row in numpy_result.rows]
    mlps = {workloads.SMALL_MLP: workloads.HAND, workloads.BIG_MLP: workloads.HAND}
    jax_result = made_up_backend(workloads.JAX_JIT, "cpu", "raw NumPy", mlps)
    jax_result.rows[:] = [replace(row, tensorplug=0.25) for row in jax_result.rows]
    results = report.Results(FULL, "tensorplug bench", [numpy_result, jax_result])
    against_jit = [row for row in results.rows if row.reference_name == workloads.JIT]
    assert [(row.workload, row.target) for row in against_jit] == [
        (workloads.SMALL_MLP_TRACED, None),
        (workloads.BIG_MLP_TRACED, 1.0),
    ]
    for row in against_jit:  # numpy's traced time over jax.jit's time
        assert (row.backend, row.tensorplug, row.reference, row.ratio) == ("numpy", 0.5, 0.25, 2.0)
    assert any("JAX's compiled step from JAX's process" in line for line in report.references_text(results))
    assert report.cross_rows([numpy_result]) == []


# -- each backend in a process of its own -----------------------------------------------------------------------------


def test_a_backend_timed_in_its_own_process_gives_the_rows_it_gives_here() -> None:
    [result] = isolated.run("numpy", QUICK).results
    assert result.failures == []
    assert (result.backend, result.device, result.reference) == ("numpy", "cpu", "raw NumPy")
    assert [(row.backend, row.workload, row.reference_name) for row in result.rows] == [
        ("numpy", name, reference) for name, (reference, _) in NUMPY_ROWS.items()
    ]
    assert all(row.reference > 0 and row.tensorplug > 0 for row in result.rows)


def test_a_timing_process_that_dies_is_a_failure_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    script = "import sys; sys.exit(3)"
    monkeypatch.setattr(isolated, "child_command", lambda group, settings, named: [sys.executable, "-c", script])
    [result] = isolated.run("numpy", QUICK).results
    assert result.rows == []
    assert result.failures == ["numpy: the process timing it exited with status 3 (its output is above)"]


class LazyTwin(TwinBackend):
    lazy = True


def refusing_factory() -> tp.Backend:
    raise tp.BackendError("no device here")


def test_the_timing_process_skips_lazy_backends_unless_named_and_those_that_do_not_initialise() -> None:
    tp.register_backend("lazytwin", LazyTwin, fallback="numpy")  # removed after the test by conftest's fixture
    tp.register_backend("refusing", refusing_factory)
    assert isolated.time_group("lazytwin", QUICK, named=False) == isolated.Outcome(skipped=isolated.LAZY)
    refused = isolated.time_group("refusing", QUICK, named=False)
    assert refused.results == []
    assert refused.skipped is not None
    assert refused.skipped.startswith("it did not initialise (")
    assert "no device here" in refused.skipped


# -- threads ----------------------------------------------------------------------------------------------------------


def test_the_timing_processes_run_one_thread_per_library_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in timing.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    one = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert timing.thread_setting() == one
    seen: list[dict[str, str]] = []
    real_run = subprocess.run

    def fake_run(command: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        if command[1:3] != ["-m", "tensorplug._tools._bench.isolated"]:
            return real_run(command, **options)  # git, asked where the code comes from
        seen.append(options["env"])
        return subprocess.CompletedProcess(command, 0, '{"results": [], "skipped": "just looking"}\n')

    monkeypatch.setattr(subprocess, "run", fake_run)
    assert isolated.run("numpy", QUICK) == isolated.Outcome(skipped="just looking")
    assert {name: seen[0][name] for name in one} == one
    assert "OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MKL_NUM_THREADS=1 (tensorplug bench's default" in (
        report.markdown_report(made_up_results(FULL))
    )

    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert timing.thread_setting() == {"OMP_NUM_THREADS": "4"}
    isolated.run("numpy", QUICK)
    assert seen[1]["OMP_NUM_THREADS"] == "4"
    assert "OPENBLAS_NUM_THREADS" not in seen[1]
    assert "OMP_NUM_THREADS=4 (set by the user)" in report.markdown_report(made_up_results(FULL))


def test_timing_processes_load_the_backends_plugins_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin that replaces gradients (tensorplug-grads-extra) would time other math than the hand-written
    reference: the timing processes get TENSORPLUG_PLUGINS naming the backends' distributions, unless the user
    set it."""
    monkeypatch.delenv("TENSORPLUG_PLUGINS", raising=False)
    backends = {info.distribution for info in tp.plugins() if info.backends and info.status == "loaded"}
    assert backends  # the numpy backend, at least
    assert isolated.timing_plugins() == sorted(backends)
    assert isolated.plugin_setting() == {"TENSORPLUG_PLUGINS": ",".join(sorted(backends))}
    gradient_only = [info for info in tp.plugins() if info.status == "loaded" and not info.backends]
    assert not {info.distribution for info in gradient_only} & set(isolated.timing_plugins() or [])
    monkeypatch.setenv("TENSORPLUG_PLUGINS", "tensorplug-numpy")
    assert isolated.timing_plugins() is None
    assert isolated.plugin_setting() == {}
    assert "set by the user" in report.timing_plugins_text()
