"""A unary kernel named like an ONNX operator exports by that operator without a row of its own; any other kernel
without a converter is refused with an error that names the table to add its row to."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from conformance import RUNNER

import tensorplug as tp
from tensorplug.testing import all_cases, check_export, check_exports
from tensorplug_onnx import _elementwise, _export


def _without_row(monkeypatch: pytest.MonkeyPatch, kernel: str) -> dict[str, object]:
    """The exporter as it would be if ``kernel`` had no row in the UNARY table: its converter is derived or none."""
    monkeypatch.delitem(_elementwise.UNARY, kernel)
    derived = _elementwise.derived_unary()
    monkeypatch.delitem(_export.CONVERTERS, kernel)
    if kernel in derived:
        monkeypatch.setitem(_export.CONVERTERS, kernel, derived[kernel])
    return derived  # type: ignore[return-value]


def test_no_kernel_with_a_row_is_derived() -> None:
    assert set(_elementwise.derived_unary()) & set(_elementwise.UNARY) == set()


def test_a_unary_kernel_named_like_an_onnx_operator_exports_by_it_for_float32(monkeypatch: pytest.MonkeyPatch) -> None:
    derived = _without_row(monkeypatch, "Softsign")
    assert "Softsign" in derived
    model = tp.export(tp.softsign, tp.tensor([[-2.0, 0.5]]), format="onnx")
    assert [node.op_type for node in model.graph.node] == ["Softsign"]
    cases = [c for c in all_cases() if c.kernel == "Softsign"]
    runner = dataclasses.replace(RUNNER, kernels=frozenset(_export.CONVERTERS))
    report = check_exports("onnx", runner, cases)
    assert report.count("failed") == 0, report.text()
    assert report.count("passed") >= 5, report.text()  # float32, integer and bool inputs (cast to float32), ...
    assert report.refusals.get("float32 only", 0) >= 2, report.text()  # float64 ones: ONNX Runtime's is float32 only
    with pytest.raises(tp.ExportError, match="ONNX Runtime implements Softsign for float32 only"):
        tp.export(tp.softsign, tp.tensor([1.0], "float64"), format="onnx")


def test_a_kernel_without_a_converter_is_refused_naming_the_table_to_add_its_row_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    derived = _without_row(monkeypatch, "Expm1")  # no ONNX operator is named Expm1, and it has no decomposition
    assert "Expm1" not in derived
    with pytest.raises(tp.ExportError) as caught:
        tp.export(tp.expm1, tp.tensor([1.0, 7.0]), format="onnx")
    message = str(caught.value)
    assert "Expm1" in message
    assert "add its row to tensorplug_onnx/_elementwise.py's UNARY or BINARY table" in message


def test_a_catalogue_kernel_without_a_converter_exports_as_its_decomposition(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "Relu6" not in _without_row(monkeypatch, "Relu6")  # no ONNX operator is named Relu6; it decomposes
    model = tp.export(tp.relu6, tp.tensor([-1.0, 1.0, 7.0]), format="onnx")
    assert "Relu6" not in [node.op_type for node in model.graph.node]
    (got,) = RUNNER.run(model, [np.array([-1.0, 1.0, 7.0], np.float32)])
    np.testing.assert_array_equal(got, [0.0, 1.0, 6.0])


def _float32_only_in_the_readme() -> set[str]:
    from pathlib import Path

    from tensorplug.kernel_reference import REFERENCE

    text = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    start = text.index("Some kernels export for some dtypes only")
    sentence = text[start : text.index("for float32 only", start)]
    return {name for name in re.findall(r"`(\w+)`", sentence) if name in REFERENCE}


def test_the_readme_lists_the_kernels_that_export_for_float32_only() -> None:
    """Each exportable kernel's float64 conformance cases are exported: the kernels refused as float32 only are
    those the README lists, with the derived converters (float32 only by rule)."""
    derived = set(_elementwise.derived_unary())
    cases = [c for c in all_cases() if c.kernel in _export.CONVERTERS and "float64" in c.needs]
    refused: set[str] = set()
    exported: set[str] = set()
    for case in cases:
        outcome = check_export(case, "onnx", RUNNER)
        if outcome.outcome == "refused" and outcome.refusal == "float32 only":
            refused.add(case.kernel)
        elif outcome.outcome == "passed":
            exported.add(case.kernel)
    only = refused - exported
    assert only == _float32_only_in_the_readme() | derived
