"""Every conformance case whose kernels all export runs in ONNX Runtime and gives tensorplug's numpy values.

See ``conformance.py`` beside this file for how each case is classified; the report is printed at the end of
the run. A converter that gives other values must fail here: the last test swaps one in and sees it caught.
"""

from __future__ import annotations

import pytest
from conformance import REPORTS, Report, run_all

import tensorplug as tp
import tensorplug_onnx
from tensorplug import kernel_names as K
from tensorplug.testing import all_cases


@pytest.fixture(scope="module")
def report() -> Report:
    done = run_all()
    REPORTS.append(done.text())
    return done


def test_every_exported_case_gives_tensorplugs_values_in_onnx_runtime(report: Report) -> None:
    assert report.failures == {}, report.text()
    exported = report.count("passed")
    assert exported >= 1000, report.text()  # (1039 with onnxruntime 1.32: a sudden drop means cases stopped exporting)


def test_every_exportable_kernel_is_exercised_by_a_passing_case(report: Report) -> None:
    assert report.kernels_seen == set(tensorplug_onnx.exportable_kernels())


def test_the_kernels_not_exported_are_the_documented_ones() -> None:
    refused = tensorplug_onnx.not_exported()
    assert set(refused) | tensorplug_onnx.exportable_kernels() == set(K.CATALOGUE)
    assert not set(refused) & tensorplug_onnx.exportable_kernels()
    assert sorted(refused) == sorted(
        [K.CONV2D_BACKPROP_FILTER, K.MAX_POOL_GRAD, K.AVG_POOL_GRAD, K.RANDOM_UNIFORM, K.RANDOM_NORMAL]
    )


def test_each_case_left_out_has_its_reason(report: Report) -> None:
    by_id = {case.id: case for case in all_cases()}
    for case_id, outcome in report.outcomes.items():
        case = by_id[case_id]
        if outcome == "expects an error":
            assert case.raises is not None
        elif outcome == "statistical":
            assert case.check is not None
        elif outcome == "kernel not exportable":
            program = tp.function(case.op).program(*[_tensor(v) for v in case.inputs])
            assert {s.kernel for s in program.kernel_steps} & set(tensorplug_onnx.not_exported()), case_id
    assert report.count("refused") == sum(report.refusals.values())


def _tensor(value: object) -> object:
    import numpy as np

    if isinstance(value, np.ndarray):
        return tp.tensor(value)
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [tp.tensor(v) for v in value]
    return value


def test_a_converter_giving_other_values_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug_onnx import _export

    monkeypatch.setitem(_export.CONVERTERS, K.EXP, lambda g, s: g.op("Exp", g.op("Abs", s.x("x"))))  # exp(|x|)
    cases = [case for case in all_cases() if case.kernel == K.EXP]
    wrong = run_all(cases)
    assert any(case_id.startswith("Exp-") for case_id in wrong.failures), wrong.text()
