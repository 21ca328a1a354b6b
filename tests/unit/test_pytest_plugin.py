"""The conformance suite as a pytest plugin, run as a user would: pytest in a subprocess, outside the repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tensorplug.testing import all_cases

SUMMARY = re.compile(
    r"^tensorplug conformance \((?P<backend>\w+)\): (?P<passed>\d+) passed, (?P<failed>\d+) failed, "
    r"(?:(?P<skipped>\d+) skipped, )?(?P<missing>\d+) missing kernels?, (?P<grads>\d+) gradient checks?$",
    flags=re.MULTILINE,
)

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


def summary(result: subprocess.CompletedProcess[str]) -> dict[str, str | None]:
    found = SUMMARY.search(result.stdout)
    assert found, result.stdout[-3000:] + result.stderr[-3000:]
    return found.groupdict()


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
    assert "  kernels: 111 passing, 0 failing, 0 missing" in result.stdout
    assert f"{len(cases)} passed" in result.stdout.splitlines()[-1]


def test_items_are_named_by_case_id_and_selected_with_k(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--tensorplug-backend=numpy", "-v", "-k", "Add-float32 or Multiply-grad")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "tensorplug-conformance[numpy]::Add-float32 PASSED" in result.stdout
    assert "tensorplug-conformance[numpy]::Multiply-grad PASSED" in result.stdout
    assert f"collected {len(all_cases())} items / {len(all_cases()) - 3} deselected / 3 selected" in result.stdout
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
