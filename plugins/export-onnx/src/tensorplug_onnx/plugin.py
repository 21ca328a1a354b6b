"""The module named by the ``tensorplug`` entry point: it declares the ``"onnx"`` format for ``tp.export``.

The exporter is named lazily (``"module:attr"``), so discovery imports only this module and tensorplug;
``onnx`` is imported at the first ``tp.export(..., format="onnx")``.
"""

from __future__ import annotations

from tensorplug import ExporterSpec, hookimpl

TENSORPLUG_CONTRACT = "1.1"  # the version of tensorplug's plugin contract this plugin is written for


@hookimpl
def tensorplug_exporters() -> list[ExporterSpec]:
    return [
        ExporterSpec(
            "onnx",
            "tensorplug_onnx._export:export",
            "ONNX models (opset 18 by default), inference programs: tp.export(fn, *example_args, path='model.onnx')",
            runner="tensorplug_onnx._runner:runner",  # ONNX Runtime runs what it exports, for checks
        )
    ]
