"""``tp.testing.check_kernel`` through the ONNX exporter: the format declares its runner (ONNX Runtime), so a
kernel the exporter writes is exported and run there; a kernel it cannot write is reported as not exportable."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing import check_kernel

X32 = {"x": np.array([-3.0, -0.5, 0.0, 0.7, 4.0], np.float32)}
X64 = {"x": np.array([[-1.25, 0.5], [2.0, 8.0]], np.float64)}


def test_the_onnx_format_declares_onnx_runtime_as_its_runner() -> None:
    (spec,) = [s for s in tp.exporters() if s.format == "onnx"]
    assert spec.runner == "tensorplug_onnx._runner:runner"


def test_a_catalogue_kernel_round_trips_through_onnx_runtime() -> None:
    report = check_kernel("Softplus", X32, X64, backends=["numpy"], exporters=["onnx"])
    exports = [c for c in report.checks if c.check == "export"]
    assert [(c.where, c.outcome) for c in exports] == [("onnx on numpy", "passed")] * 2, report.text()
    assert exports[0].detail == "run by ONNX Runtime"


def test_a_kernel_the_exporter_cannot_write_is_not_exportable(tensorplug_registries: Any) -> None:
    tp.register_kernel("CheckedTwice", "numpy", lambda inputs, attrs, backend: inputs["x"] * 2)
    report = check_kernel("CheckedTwice", X32, backends=["numpy"], order=0)
    (export,) = [c for c in report.checks if c.check == "export"]
    assert export.outcome == "skipped"
    assert export.detail.startswith("not exportable: tp.export('CheckedTwice'")
    named = r"- export on onnx on numpy, example 1 \(x: float32\[5\]\): not exportable"
    with pytest.raises(AssertionError, match=named):
        check_kernel("CheckedTwice", X32, backends=["numpy"], order=0, exporters=["onnx"])


def test_without_onnx_runtime_the_round_trip_is_skipped_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if it were not installed
    report = check_kernel("Softplus", X32, backends=["numpy"], exporters=["onnx"])
    (export,) = [c for c in report.checks if c.check == "export"]
    assert export.outcome == "skipped"
    assert "its runner cannot be loaded: ONNX Runtime (the onnxruntime package) is not installed" in export.detail
