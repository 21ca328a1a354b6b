"""The ONNX exporter against the exporter conformance kit, and what the kit's run alone does not check.

The conformance cases themselves run as items of ``pytest --tensorplug-exporter onnx --tensorplug-strict``
(``nox -s export_onnx``), with ``conformance.py``'s ONNX Runtime runner: every case whose kernels export must
give tensorplug's numpy values, and every kernel the exporter writes must be exercised by a passing case. The
kit's summary is printed at the end of the run.
"""

from __future__ import annotations

import pytest
from conformance import RUNNER

import tensorplug as tp
import tensorplug_onnx
from tensorplug import kernel_names as K
from tensorplug.testing import all_cases, check_exports


def test_the_conformance_cases_run_in_onnx_runtime(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.getoption("tensorplug_exporter") == "onnx", (
        "run these tests with --tensorplug-exporter onnx --tensorplug-strict (nox -s export_onnx does), so that "
        "every conformance case is exported and run in ONNX Runtime"
    )


def test_the_runner_knows_the_kernels_the_exporter_writes() -> None:
    assert RUNNER.kernels == tensorplug_onnx.exportable_kernels()


def test_the_kernels_not_exported_are_the_documented_ones() -> None:
    refused = tensorplug_onnx.not_exported()
    translated = {t.kernel_name for t in tp.translations("onnx")} - set(K.CATALOGUE)  # installed distributions'
    assert set(refused) | tensorplug_onnx.exportable_kernels() == set(K.CATALOGUE) | translated
    assert not set(refused) & tensorplug_onnx.exportable_kernels()
    assert sorted(refused) == sorted(
        [K.CONV2D_BACKPROP_FILTER, K.MAX_POOL_GRAD, K.AVG_POOL_GRAD, K.RANDOM_UNIFORM, K.RANDOM_NORMAL]
    )


def test_a_converter_giving_other_values_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug_onnx import _export

    monkeypatch.setitem(_export.CONVERTERS, K.EXP, lambda g, s: g.op("Exp", g.op("Abs", s.x("x"))))  # exp(|x|)
    cases = [case for case in all_cases() if case.kernel == K.EXP]
    wrong = check_exports("onnx", RUNNER, cases)
    assert any(case_id.startswith("Exp-") for case_id in wrong.failures), wrong.text()
