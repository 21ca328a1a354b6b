"""The ONNX format's runner for the exporter conformance kit of ``tensorplug.testing``: ONNX Runtime.

``pytest --tensorplug-exporter onnx`` (``conftest.py`` hands the kit :data:`RUNNER`) exports every conformance
case whose kernels the exporter writes, runs it with ONNX Runtime's CPU provider on the same inputs and
compares it with tensorplug's numpy result; ``docs/export.md`` ("Testing an exporter") says how each case is
classified. What is ONNX's here: how a model runs, the kernels it writes, and the refusals a case may meet
although each of its kernels exports for other dtypes.

``python plugins/export-onnx/tests/conformance.py`` prints the report.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

import tensorplug_onnx
from tensorplug.testing import ExportRunner, check_exports

# The words of the refusals a case may meet although each of its kernels is exportable for other dtypes.
EXPECTED_REFUSALS = {
    "float32 only": re.compile(r"ONNX Runtime implements \w+ for float32 only"),
    "integer MaxPool": re.compile(r"ONNX's MaxPool takes float32 or float64, not integers"),
}


def run_in_onnx_runtime(model: Any, inputs: list[np.ndarray]) -> list[Any]:
    """Run an exported ``onnx.ModelProto`` with ONNX Runtime's CPU provider, its inputs in the graph's order."""
    import onnxruntime as ort

    feed = {i.name: value for i, value in zip(model.graph.input, inputs, strict=True)}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs: list[Any] = session.run(None, feed)
    return outputs


RUNNER = ExportRunner(
    run=run_in_onnx_runtime,
    refusals=EXPECTED_REFUSALS,
    kernels=tensorplug_onnx.exportable_kernels(),
    name="ONNX Runtime",
)


if __name__ == "__main__":
    print(check_exports("onnx", RUNNER).text())
