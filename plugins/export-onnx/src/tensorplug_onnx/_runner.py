"""How to run what the ONNX exporter writes, for checks: ONNX Runtime's CPU provider.

The format's ``ExporterSpec.runner`` names :func:`runner`, which ``tensorplug.testing.check_kernel`` (and the
exporter conformance kit, ``pytest --tensorplug-exporter onnx``) call to run an exported model on the inputs it
was exported for. ONNX Runtime is imported only when a model runs; without it, :func:`runner` raises an
ImportError that says how to install it (``check_kernel`` then skips the ONNX round trip, with that reason).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tensorplug.testing import ExportRunner

__all__ = ["EXPECTED_REFUSALS", "run_in_onnx_runtime", "runner"]

# The words of the refusals a case may meet although each of its kernels is exportable for other dtypes.
EXPECTED_REFUSALS = {
    "float32 only": re.compile(r"ONNX Runtime implements \w+ for float32 only"),
    "integer MaxPool": re.compile(r"ONNX's MaxPool takes float32 or float64, not integers"),
}


def run_in_onnx_runtime(model: Any, inputs: list[np.ndarray]) -> list[Any]:
    """Run an exported ``onnx.ModelProto`` with ONNX Runtime's CPU provider, its inputs in the graph's order."""
    ort: Any = importlib.import_module("onnxruntime")  # untyped: imported by name
    feed = {i.name: value for i, value in zip(model.graph.input, inputs, strict=True)}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs: list[Any] = session.run(None, feed)
    return outputs


def runner() -> ExportRunner:
    """The ONNX format's :class:`~tensorplug.testing.ExportRunner`: ONNX Runtime, the kernels the exporter writes,
    and the refusals a conformance case may meet; an ImportError when ONNX Runtime is not installed."""
    from tensorplug.testing import ExportRunner
    from tensorplug_onnx import exportable_kernels

    if importlib.util.find_spec("onnxruntime") is None:
        raise ImportError(
            "ONNX Runtime (the onnxruntime package) is not installed, and it runs the exported models: "
            "pip install './plugins/export-onnx[test]' (from the root of a checkout)"
        )
    return ExportRunner(
        run=run_in_onnx_runtime,
        refusals=EXPECTED_REFUSALS,
        kernels=exportable_kernels(),
        name="ONNX Runtime",
    )
