"""The export-onnx tests: the conformance report is printed at the end of the run (counts, what does not export)."""

from __future__ import annotations

from typing import Any

from conformance import REPORTS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for text in REPORTS:
        terminalreporter.section("ONNX export checked by ONNX Runtime")
        terminalreporter.write_line(text)
