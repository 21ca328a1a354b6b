"""The conformance suite as a pytest plugin, run as a user would: pytest in a subprocess, outside the repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tensorplug.kernel_names import CATALOGUE
from tensorplug.testing import all_cases, optimizer_cases

SUMMARY = re.compile(
    r"^tensorplug conformance \((?P<backend>\w+)\): (?P<passed>\d+) passed, (?P<failed>\d+) failed, "
    r"(?:(?P<xfailed>\d+) known gaps? \(xfail\), )?(?:(?P<xpassed>\d+) known gaps? passing \(xpass\), )?"
    r"(?:(?P<na>\d+) not applicable, )?"
    r"(?:(?P<skipped>\d+) skipped, )?(?P<missing>\d+) missing kernels?, (?P<grads>\d+) gradient checks?$",
    flags=re.MULTILINE,
)
TESTS = Path(__file__).resolve().parents[1]

# A project of someone else's: a backend registered at run time, with Add and Multiply only.
PARTIAL_BACKEND = """
import numpy as np
import tensorplug as tp


class PartialBackend(tp.Backend):
    def from_host(self, array):
        return np.array(array, copy=True)

    def to_host(self, raw):
        return np.asarray(raw)

    def dtype_of(self, raw):
        return str(np.asarray(raw).dtype.name)


tp.register_backend("partial", PartialBackend, priority=-1)
tp.register_kernel("Add", "partial", lambda inputs, attrs, backend: np.add(inputs["a"], inputs["b"]))
tp.register_kernel("Multiply", "partial", lambda inputs, attrs, backend: np.multiply(inputs["a"], inputs["b"]))
"""


def run_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def summary(result: subprocess.CompletedProcess[str], *optional: str) -> dict[str, str | None]:
    """The headline's counts; the optional ones (xfailed, xpassed, na) only when named."""
    found = SUMMARY.search(result.stdout)
    assert found, result.stdout[-3000:] + result.stderr[-3000:]
    counts = found.groupdict()
    for key in ("xfailed", "xpassed", "na"):
        if key not in optional:
            assert counts.pop(key) is None, (key, result.stdout[-3000:])
    return counts


def test_the_whole_suite_passes_on_numpy_from_an_empty_directory(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--tensorplug-backend", "numpy", "-q")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    cases = all_cases()
    assert summary(result) == {
        "backend": "numpy",
        "passed": str(len(cases)),
        "failed": "0",
        "skipped": None,
        "missing": "0",
        "grads": str(sum(1 for c in cases if c.grad)),
    }
    assert f"  kernels: {len(CATALOGUE)} passing, 0 failing, 0 missing" in result.stdout
    optimizer_items = 2 * len(optimizer_cases())  # the shared optimizer check, float32 and float64: numpy fuses
    assert f"{len(cases) + optimizer_items} passed" in result.stdout.splitlines()[-1]
    assert f"tensorplug optimizers (numpy): {optimizer_items} passed, 0 failed" in result.stdout


def test_items_are_named_by_case_id_and_selected_with_k(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--tensorplug-backend=numpy", "-v", "-k", "Add-float32 or Multiply-grad")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "tensorplug-conformance[numpy]::Add-float32 PASSED" in result.stdout
    assert "tensorplug-conformance[numpy]::Multiply-grad PASSED" in result.stdout
    collected = len(all_cases()) + 2 * len(optimizer_cases())  # the cases, then the optimizer items
    assert f"collected {collected} items / {collected - 3} deselected / 3 selected" in result.stdout
    found = summary(result)
    assert (found["failed"], found["missing"]) == ("0", "0")
    assert int(found["grads"]) >= 2  # Multiply-grad and Multiply-grad-scalar


def test_an_unknown_backend_is_a_usage_error_naming_the_installed_ones(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--tensorplug-backend", "nosuch")
    assert result.returncode == 4  # pytest's ExitCode.USAGE_ERROR
    assert "--tensorplug-backend 'nosuch': no such backend is installed; installed: " in result.stderr
    assert "numpy" in result.stderr.partition("installed: ")[2]


def test_strict_without_a_backend_is_a_usage_error(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--tensorplug-strict")
    assert result.returncode == 4
    assert "--tensorplug-strict needs --tensorplug-backend" in result.stderr


def test_missing_kernels_are_skipped_and_listed_and_strict_fails_them(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(PARTIAL_BACKEND)
    selection = ["-k", "Add-float32 or Add-grad or Add-promote-int32-int64 or Abs-float32 or Multiply-int32", "-rs"]
    result = run_pytest(tmp_path, "--tensorplug-backend", "partial", *selection)
    assert result.returncode == 0, result.stdout[-3000:]
    assert summary(result) == {
        "backend": "partial",
        "passed": "2",
        "failed": "0",
        "skipped": "4",
        "missing": "3",
        "grads": "0",
    }
    out = result.stdout
    assert "  kernels: 2 passing, 0 failing, 1 missing" in out
    assert "  missing kernels (3): Abs, Cast, Sum" in out
    assert "Add-grad (needs Sum)" in out
    assert "tensorplug-conformance[partial]: kernel Abs not registered for backend partial" in out
    assert "its values pass, but the gradient check needs kernel Sum, not registered for backend partial" in out

    strict = run_pytest(tmp_path, "--tensorplug-backend", "partial", "--tensorplug-strict", *selection)
    assert strict.returncode == 1
    found = summary(strict)
    assert (found["passed"], found["failed"], found["missing"]) == ("2", "4", "3")
    assert "kernel Abs not registered for backend partial (--tensorplug-strict)" in strict.stdout


def test_a_failing_kernel_is_a_failure_naming_the_case(tmp_path: Path) -> None:
    broken = PARTIAL_BACKEND.replace("np.multiply(", "np.add(")
    (tmp_path / "conftest.py").write_text(broken)
    result = run_pytest(tmp_path, "--tensorplug-backend", "partial", "-k", "Multiply-int32")
    assert result.returncode == 1
    assert "Multiply-int32 (output 0)" in result.stdout  # run_case's message, not a traceback of pytest's runner
    assert "  failing kernels (1): Multiply" in result.stdout


def test_without_the_option_the_plugin_adds_nothing_and_imports_no_case_table(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(
        textwrap.dedent(
            """
            import sys

            def test_mine(pytestconfig):
                assert "tensorplug.testing.cases" not in sys.modules
                assert pytestconfig.pluginmanager.has_plugin("tensorplug")  # loaded through pytest11...
                assert not pytestconfig.pluginmanager.has_plugin("tensorplug-conformance")  # ...and idle
            """
        )
    )
    result = run_pytest(tmp_path, "-q")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "1 passed" in result.stdout
    assert "tensorplug conformance" not in result.stdout


def test_user_tests_and_the_suite_run_together(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    pass\n")
    result = run_pytest(tmp_path, "--tensorplug-backend", "numpy", "-q", "-k", "mine or Abs-float32")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "2 passed" in result.stdout.splitlines()[-1]
    assert summary(result)["passed"] == "1"


# -- known gaps: pytest_tensorplug_known_gaps -----------------------------------------------------------------------

BROKEN_MULTIPLY = PARTIAL_BACKEND.replace("np.multiply(", "np.add(")
GAPS = """

def pytest_tensorplug_known_gaps(config, backend):
    assert backend == "partial"
    return {GAPS}
"""


def test_known_gaps_are_counted_as_expected_failures_not_as_passing_kernels(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(BROKEN_MULTIPLY + GAPS.replace("{GAPS}", '{"Multiply": "adds (a bug)"}'))
    result = run_pytest(tmp_path, "--tensorplug-backend", "partial", "-k", "Multiply-int32 or Multiply-float32 or "
                        "Add-float32", "-rx")  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    assert summary(result, "xfailed") == {
        "backend": "partial",
        "passed": "1",
        "failed": "0",
        "xfailed": "2",
        "skipped": None,
        "missing": "0",
        "grads": "0",
    }
    assert "  kernels: 1 passing, 0 failing, 0 missing, 1 with known gaps" in result.stdout
    assert "  kernels with known gaps (expected failures) (1): Multiply" in result.stdout
    assert "XFAIL tensorplug-conformance[partial]::Multiply-int32 - known gap: adds (a bug)" in result.stdout


def test_a_case_id_can_be_a_known_gap_and_one_that_passes_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        PARTIAL_BACKEND + GAPS.replace("{GAPS}", '{"Add-float32": "was wrong once", "Multiply": "still broken?"}')
    )
    result = run_pytest(tmp_path, "--tensorplug-backend", "partial", "-k", "Add-float32 or Multiply-int32 or Add-int32")
    assert result.returncode == 1, result.stdout[-3000:]
    found = summary(result, "xpassed")
    assert (found["passed"], found["failed"], found["xpassed"]) == ("1", "0", "2")
    assert (
        "  known gaps that no longer fail (remove them from pytest_tensorplug_known_gaps) (2): Add-float32, Multiply"
        in result.stdout
    )


def test_an_unknown_known_gap_is_a_usage_error_with_a_suggestion(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(PARTIAL_BACKEND + GAPS.replace("{GAPS}", '{"Multipy": "typo"}'))
    result = run_pytest(tmp_path, "--tensorplug-backend", "partial")
    assert result.returncode == 4
    assert "'Multipy' is neither a kernel name nor a conformance case id; did you mean Multiply" in result.stderr


# -- fallback kernels, dtypes the backend lacks ---------------------------------------------------------------------

FALLBACK_BACKEND = PARTIAL_BACKEND.replace(
    'tp.register_backend("partial", PartialBackend, priority=-1)',
    'tp.register_backend("partial", PartialBackend, priority=-1, fallback="numpy")',
)


def test_kernels_served_by_the_fallback_are_tested_through_it_and_reported_as_such(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        FALLBACK_BACKEND
        + "\n\ndef pytest_terminal_summary(terminalreporter):\n"
        + "    terminalreporter.write_line(f'coverage says: {tp.coverage().fallback_for(\"partial\")[:3]}')\n"
    )
    result = run_pytest(tmp_path, "--tensorplug-backend", "partial", "-k", "Add-float32 or Abs-float32 or Acos-float32")
    assert result.returncode == 0, result.stdout[-3000:]
    assert summary(result) == {
        "backend": "partial",
        "passed": "3",
        "failed": "0",
        "skipped": None,
        "missing": "0",
        "grads": "0",
    }
    assert "  run through the fallback backend numpy, 2 of them passing (2): Abs, Acos" in result.stdout
    assert "coverage says: ['Abs', 'Acos', 'Acosh']" in result.stdout  # tp.coverage() lists them as fallback too
    assert "FallbackWarning" not in result.stdout


def test_a_backend_without_float64_runs_what_applies_and_says_what_does_not(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport float32_backend\nfloat32_backend.register()\n"
    )
    result = run_pytest(tmp_path, "--tensorplug-backend", "float32only", "-q")
    assert result.returncode == 0, result.stdout[-3000:]
    cases = all_cases()
    needs_float64 = [c for c in cases if "float64" in c.needs and not (c.grad and "float64" not in c.dtypes)]
    assert summary(result, "na") == {
        "backend": "float32only",
        "passed": str(len(cases) - len(needs_float64)),
        "failed": "0",
        "na": str(len(needs_float64)),
        "skipped": None,
        "missing": "0",
        "grads": str(sum(1 for c in cases if c.grad)),
    }
    assert f"  kernels: {len(CATALOGUE)} passing, 0 failing, 0 missing" in result.stdout
    assert f"  not applicable (needs float64): {len(needs_float64)} cases" in result.stdout
    assert "  (gradient checks run in float32: the backend declares float64 unsupported)" in result.stdout


def test_traced_runs_each_case_through_the_backends_lowering(tmp_path: Path) -> None:
    """A lowering that is wrong only in replays passes the eager run and fails the traced one, naming the case."""
    wrong_lowering = PARTIAL_BACKEND + (
        "\n\ndef lower_step(self, program, index):\n"
        "    step = program.steps[index]\n"
        "    return tp.StepLowering(np.subtract) if step.kernel == 'Add' else None\n\n\n"
        "PartialBackend.lower_step = lower_step\n"
    )
    (tmp_path / "conftest.py").write_text(wrong_lowering)
    eager = run_pytest(tmp_path, "--tensorplug-backend", "partial", "-k", "Add-float32")
    assert eager.returncode == 0, eager.stdout[-3000:]
    traced = run_pytest(tmp_path, "--tensorplug-backend", "partial", "--tensorplug-traced", "-k", "Add-float32")
    assert traced.returncode == 1
    assert "Add-float32 (traced values, output 0): the replay differs from eager" in traced.stdout
    usage = run_pytest(tmp_path, "--tensorplug-traced")
    assert "--tensorplug-traced needs --tensorplug-backend" in usage.stderr


def test_any_project_isolates_its_registrations_with_the_tensorplug_registries_fixture(tmp_path: Path) -> None:
    (tmp_path / "test_project.py").write_text(
        textwrap.dedent(
            """
            import pytest
            import tensorplug as tp


            def seven(inputs, attrs, backend):
                return inputs["a"] * 0 + 7


            @pytest.mark.usefixtures("tensorplug_registries")
            def test_registers_and_fails_midway():
                tp.register_kernel("Add", "numpy", seven, override=True)
                tp.register_kernel("ProjectKernel", "numpy", seven)
                tp.unregister_gradient("Relu")
                tp.register_gradient_set("project_set", lambda: [], "undone after the test")
                assert (tp.tensor([1.0]) + 1.0).tolist() == [7.0]
                raise RuntimeError("a failure leaves nothing behind")


            def test_the_next_test_sees_the_registries_as_they_were():
                tp.set_backend("numpy")
                assert (tp.tensor([1.0]) + 1.0).tolist() == [2.0]
                assert tp.get_kernel("ProjectKernel", "numpy") is None
                assert tp.get_gradient("Relu") is not None
                assert "project_set" not in [s.name for s in tp.gradient_sets()]
            """
        )
    )
    result = run_pytest(tmp_path, "-q", "test_project.py")
    assert "1 failed, 1 passed" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    assert "RuntimeError: a failure leaves nothing behind" in result.stdout


def test_a_backend_still_defining_the_removed_lower_fails_the_run_with_the_migration(tmp_path: Path) -> None:
    """tp.function never calls lower(program): the run fails, saying what replaced it, even with the item
    deselected; pytest's run and tensorplug check's alike."""
    old_backend = PARTIAL_BACKEND + "\n\nPartialBackend.lower = lambda self, program: None\n"
    (tmp_path / "conftest.py").write_text(old_backend)
    migration = (
        "backend 'partial' defines lower(program), which the backend contract no longer has (removed in tensorplug "
        "0.1.0), so the core never calls it: rename it compile(program)"
    )
    selected = run_pytest(
        tmp_path, "--tensorplug-backend", "partial", "--tensorplug-traced", "-k", "Add-float32 or backend-contract"
    )
    assert selected.returncode == 1, selected.stdout[-3000:]
    assert "tensorplug-conformance[partial]::backend-contract" in selected.stdout
    flat = " ".join(selected.stdout.split())
    assert migration in flat
    assert "lower_step(program, index)" in flat
    assert "wrap_replay(replay)" in flat
    assert "backend contract broken (1):" in selected.stdout
    assert "(the traced cases did not run: tp.function ignores what the contract no longer has)" in selected.stdout
    assert summary(selected)["failed"] == "1"

    deselected = run_pytest(tmp_path, "--tensorplug-backend", "partial", "-k", "Add-float32")
    assert deselected.returncode == 1, deselected.stdout[-3000:]
    assert migration in " ".join(deselected.stdout.split())

    (tmp_path / "conftest.py").unlink()
    (tmp_path / "old_partial.py").write_text(old_backend)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "tensorplug", "check", "partial", "-p", "old_partial", "--tensorplug-traced"]
    checked = subprocess.run(
        [*command, "-k", "Add-float32"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert checked.returncode == 1, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert migration in " ".join(checked.stdout.split())


def test_traced_holds_compiled_replays_to_the_ulps_the_backend_declares_and_reports_them(tmp_path: Path) -> None:
    """A compiler one ulp off eager (a fusing one) passes the traced run with compile_ulps = 1, not with 0."""
    selection = ["-k", "Add-float32 or Add-grad or Cast-float-to-int-truncates"]
    for declared in (1, 0):
        conftest = f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport fusing_backend\n"
        (tmp_path / "conftest.py").write_text(conftest + f"fusing_backend.register({declared})\n")
        result = run_pytest(tmp_path, "--tensorplug-backend", "fusing", "--tensorplug-traced", *selection)
        if declared:
            assert result.returncode == 0, result.stdout[-3000:]
            assert summary(result)["passed"] == "4"  # Add-grad-outer too
            assert (
                "  traced: replays equal eager bit for bit, compiled replays within 1 ulp (Backend.compile_ulps); "
                "3 cases differed, by up to 1 ulp" in result.stdout
            )
        else:
            assert result.returncode == 1, result.stdout[-3000:]
            assert summary(result)["failed"] == "3"
            assert (
                "Add-float32 (traced values, output 0): the replay differs from eager by up to 1 ulps" in result.stdout
            )
            assert "  traced: replays equal eager bit for bit (Backend.compile_ulps is 0)" in result.stdout
