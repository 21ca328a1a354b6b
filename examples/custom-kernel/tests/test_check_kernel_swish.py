"""Swish, as installed, passes ``tp.testing.check_kernel`` on every installed backend (its NumPy kernel, and its
decomposition elsewhere) and through the ONNX exporter (its translation, and its decomposition without it)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorplug as tp
from tensorplug.testing import check_kernel

X32 = {"x": np.array([-4.0, -0.3, 0.0, 0.5, 6.0], np.float32)}
X64 = {"x": np.array([[0.25, -1.5], [2.0, -8.0]], np.float64)}


def test_swish_passes_check_kernel_on_every_backend_and_in_onnx_runtime() -> None:
    report = check_kernel("Swish", X32, X64, beta=1.5)
    for backend in [b for b in ("numpy", "torch", "dask") if b in tp.list_backends()]:
        assert report.outcome("runs", backend) == "passed", report.text()
        assert report.outcome("gradient", backend) == "passed", report.text()
    assert report.outcome("decomposition", "numpy") == "passed"
    exports = [c.outcome for c in report.checks if c.check == "export" and c.where == "onnx on numpy"]
    assert exports in ([], ["passed", "passed"]), report.text()  # [] where ONNX is not installed


def test_swish_exports_as_its_decomposition_without_its_translation() -> None:
    if "onnx" not in [spec.format for spec in tp.exporters()]:
        pytest.skip("the ONNX exporter is not installed")
    with pytest.warns(tp.PluginWarning, match="removed the translation"):  # the distribution's own, for the test
        tp.unregister_translation("onnx", "Swish")
    report = check_kernel("Swish", X32, backends=["numpy"], exporters=["onnx"], beta=1.5)
    assert report.outcome("export", "onnx on numpy") == "passed"
