"""The export-onnx tests: ONNX Runtime is the runner of ``pytest --tensorplug-exporter onnx``."""

from __future__ import annotations

import pytest
from conformance import RUNNER

from tensorplug.testing import ExportRunner


def pytest_tensorplug_export_runner(config: pytest.Config, format: str) -> ExportRunner | None:
    return RUNNER if format == "onnx" else None
