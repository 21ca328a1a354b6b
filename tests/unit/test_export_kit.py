"""The exporter conformance kit of tensorplug.testing, against a tiny format of its own (tests/steps_format.py).

In the test process (``check_exports``) and as a user runs it (``pytest --tensorplug-exporter FORMAT`` in a
subprocess, outside the repository): a runner giving other values fails the case, a refusal without the runner's
expected words fails it, strict mode fails a run in which a kernel the exporter writes is exercised by no
passing case.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from test_pytest_plugin import run_pytest

import tensorplug as tp
from tensorplug.testing import EXPORT_OUTCOMES, Case, all_cases, check_export, check_exports, f32

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import steps_format  # noqa: E402

SUMMARY = re.compile(r"^tensorplug export conformance \(numpy-steps\): (?P<counts>.*)$", flags=re.MULTILINE)
CONFTEST = f"""
import dataclasses
import sys
sys.path.insert(0, {str(TESTS)!r})
import steps_format

steps_format.register()


def pytest_tensorplug_export_runner(config, format):
    return {{runner}} if format == steps_format.FORMAT else None
"""
RIGHT = "steps_format.runner()"
WRONG = "steps_format.runner(wrong_exp=True)"
# A runner that says the exporter writes Abs, which it refuses (an expected refusal): no Abs case passes.
CLAIMS_ABS = (
    "dataclasses.replace(steps_format.runner(), kernels={'Exp', 'Neg', 'Abs'}, "
    "refusals={**steps_format.REFUSALS, 'not written': 'does not write'})"
)


@pytest.fixture
def steps() -> Iterator[None]:
    steps_format.register()
    yield
    tp.unregister_exporter(steps_format.FORMAT)


def unary_cases() -> list[Case]:
    return [case for case in all_cases() if case.kernel in ("Exp", "Neg")]


@pytest.mark.usefixtures("steps")
def test_each_case_ends_in_its_class() -> None:
    report = check_exports(steps_format.FORMAT, steps_format.runner(), unary_cases())
    assert report.failures == {}, report.text()
    assert report.outcomes["Exp-float32"] == "passed"
    assert report.outcomes["Neg-int32"] == "passed"
    assert report.outcomes["Exp-float64"] == "refused"  # the runner expects "for float32 only"
    assert report.outcomes["Exp-int32"] == "kernel not exportable"  # a Cast before the Exp
    assert report.outcomes["Neg-bool"] == "expects an error"
    assert report.refusals == {"float32 only": report.count("refused")}
    assert report.kernels_seen == {"Exp", "Neg"}
    assert set(report.outcomes.values()) <= set(EXPORT_OUTCOMES)
    assert report.text().startswith("tensorplug export conformance (numpy-steps): 12 passed, 0 failed, 4 refused")


@pytest.mark.usefixtures("steps")
def test_a_runner_giving_other_values_fails_the_case() -> None:
    report = check_exports(steps_format.FORMAT, steps_format.runner(wrong_exp=True), unary_cases())
    assert "Exp-float32" in report.failures
    assert report.failures["Exp-float32"].startswith("output 0: Not equal to tolerance rtol=1e-06, atol=1e-06")
    assert not any(case_id.startswith("Neg-") for case_id in report.failures)


@pytest.mark.usefixtures("steps")
def test_a_refusal_without_the_expected_words_fails_the_case() -> None:
    case = next(case for case in unary_cases() if case.id == "Exp-float64")
    done = check_export(case, steps_format.FORMAT, steps_format.runner(refusals={"integers": "not integers"}))
    assert done.outcome == "failed"
    assert "numpy-steps writes Exp for float32 only (expected refusals: 'not integers')" in done.detail


@pytest.mark.usefixtures("steps")
def test_a_runner_that_raises_or_gives_another_dtype_fails_the_case() -> None:
    case = Case("Exp", tp.exp, (f32([0.0, 1.0]),), np.exp(f32([0.0, 1.0])))
    raising = tp.testing.ExportRunner(run=lambda program, inputs: [][0], name="a broken runtime")
    done = check_export(case, steps_format.FORMAT, raising)
    assert (done.outcome, done.detail) == ("failed", "a broken runtime raised IndexError: list index out of range")
    widening = tp.testing.ExportRunner(run=lambda program, inputs: [np.exp(inputs[0].astype(np.float64))])
    done = check_export(case, steps_format.FORMAT, widening)
    assert (done.outcome, done.detail) == ("failed", "output 0: float64[2], tensorplug gives float32[2]")


@pytest.mark.usefixtures("steps")
def test_the_pytest_option_adds_one_item_per_case_and_a_summary(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST.format(runner=RIGHT))
    result = run_pytest(tmp_path, "--tensorplug-exporter", "numpy-steps", "-k", "Exp or Neg", "-rs")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = SUMMARY.search(result.stdout)
    assert found, result.stdout[-3000:]
    # -k matches the case id or its kernel, case-insensitively: Expm1's and ExpandDims' cases too.
    selected = [c for c in all_cases() if "exp" in f"{c.id} {c.kernel}".lower() or "neg" in c.id.lower()]
    in_process = check_exports(steps_format.FORMAT, steps_format.runner(), selected)
    assert found[0] == in_process.text().splitlines()[0]
    assert found["counts"].startswith("12 passed, 0 failed, 4 refused")
    assert "  refused (float32 only): 4" in result.stdout
    assert "tensorplug-conformance[numpy-steps-format]: refused (float32 only)" in result.stdout  # -ra's skip reasons


def test_the_pytest_option_fails_a_case_whose_exported_values_differ(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST.format(runner=WRONG))
    result = run_pytest(tmp_path, "--tensorplug-exporter", "numpy-steps", "-k", "Exp or Neg")
    assert result.returncode == 1, result.stdout[-3000:]
    found = SUMMARY.search(result.stdout)
    assert found, result.stdout[-3000:]
    assert found["counts"].startswith("9 passed, 3 failed, 4 refused")
    assert "FAILED tensorplug-conformance[numpy-steps-format]::Exp-float32" in result.stdout
    assert "Exp-float32 exported as 'numpy-steps': output 0: Not equal to tolerance" in result.stdout


def test_strict_fails_a_run_where_a_kernel_the_exporter_writes_has_no_passing_case(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST.format(runner=CLAIMS_ABS))
    listed = "  kernels the exporter writes that no passing case exercises (1; {}): Abs"
    strict = run_pytest(tmp_path, "--tensorplug-exporter", "numpy-steps", "--tensorplug-strict", "-q")
    assert strict.returncode == 1, strict.stdout[-3000:]
    assert "0 failed" in strict.stdout
    assert listed.format("fails the run (--tensorplug-strict)") in strict.stdout
    lenient = run_pytest(tmp_path, "--tensorplug-exporter", "numpy-steps", "-q")
    assert lenient.returncode == 0, lenient.stdout[-3000:]
    assert listed.format("--tensorplug-strict fails the run") in lenient.stdout
    selected = run_pytest(tmp_path, "--tensorplug-exporter", "numpy-steps", "--tensorplug-strict", "-k", "Exp or Neg")
    assert selected.returncode == 0, selected.stdout[-3000:]  # not every case ran: coverage is not judged
    assert "no passing case exercises" not in selected.stdout


def test_the_pytest_option_says_what_is_missing(tmp_path: Path) -> None:
    unknown = run_pytest(tmp_path, "--tensorplug-exporter", "nope")
    assert unknown.returncode == 4
    assert "--tensorplug-exporter 'nope': no exporter writes this format; installed:" in unknown.stderr
    only_the_format = f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport steps_format\nsteps_format.register()\n"
    (tmp_path / "conftest.py").write_text(only_the_format)
    no_runner = run_pytest(tmp_path, "--tensorplug-exporter", "numpy-steps")
    assert no_runner.returncode == 4
    assert "no runner for this format; implement pytest_tensorplug_export_runner(config, format)" in no_runner.stderr
