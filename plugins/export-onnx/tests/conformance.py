"""The ONNX format's runner for the exporter conformance kit of ``tensorplug.testing``: ONNX Runtime.

``pytest --tensorplug-exporter onnx`` (``conftest.py`` hands the kit :data:`RUNNER`) exports every conformance
case whose kernels the exporter writes, runs it with ONNX Runtime's CPU provider on the same inputs and
compares it with tensorplug's numpy result; ``docs/export.md`` ("Testing an exporter") says how each case is
classified. The runner is the package's own (``tensorplug_onnx._runner``, which the format's ``ExporterSpec``
declares for ``tp.testing.check_kernel`` too): how a model runs, the kernels it writes, and the refusals a case
may meet although each of its kernels exports for other dtypes.

``python plugins/export-onnx/tests/conformance.py`` prints the report.
"""

from __future__ import annotations

from tensorplug.testing import check_exports
from tensorplug_onnx._runner import EXPECTED_REFUSALS, run_in_onnx_runtime, runner

__all__ = ["EXPECTED_REFUSALS", "RUNNER", "run_in_onnx_runtime"]

RUNNER = runner()


if __name__ == "__main__":
    print(check_exports("onnx", RUNNER).text())
