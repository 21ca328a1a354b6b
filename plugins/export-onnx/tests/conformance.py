"""Every conformance case of ``tensorplug.testing``, exported to ONNX and run in ONNX Runtime.

For each case, the op runs on tensorplug's numpy backend (the values to match), is traced with
``tp.function`` to learn its kernels, and, when every kernel is one the exporter writes, is exported with
``tp.export`` and run by ONNX Runtime's CPU provider on the same inputs. Each output must have the numpy
result's dtype and shape, integers and bools equal, floats within the case's ``rtol`` and ``atol`` (NaN
where NaN). A case ends in one of these classes:

- ``passed``: exported, and ONNX Runtime gives tensorplug's values;
- ``failed``: exported, and ONNX Runtime gives other values, or raised, or the export failed unexplained;
- ``refused``: a kernel exports, but not for this case (float64 where ONNX Runtime has float32 only, say):
  the ExportError must say so in one of ``EXPECTED_REFUSALS``'s words, else the case fails;
- ``kernel not exportable``: a kernel of its program is one the exporter does not write;
- ``records gradients``: the case's op takes a gradient (``tp.grad`` inside it): not an inference program;
- ``returns no tensor``: the op returns an empty tuple (a model would compute nothing);
- ``expects an error`` / ``statistical``: the case checks that the op raises, or checks random values by
  statistics; neither is a value an exported model can be compared on;
- ``not traceable``: the op reads a value back to Python, so it has no program.

``python plugins/export-onnx/tests/conformance.py`` prints the report.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tensorplug as tp
import tensorplug_onnx
from tensorplug.testing import Case, all_cases

# The words of the refusals a case may meet although each of its kernels is exportable for other dtypes.
EXPECTED_REFUSALS = {
    "float32 only": re.compile(r"ONNX Runtime implements \w+ for float32 only"),
    "integer MaxPool": re.compile(r"ONNX's MaxPool takes float32 or float64, not integers"),
}


REPORTS: list[str] = []  # the reports of this run, printed at its end (conftest.py)


@dataclass
class Report:
    outcomes: dict[str, str] = field(default_factory=dict)  # case id -> class
    failures: dict[str, str] = field(default_factory=dict)  # case id -> why
    refusals: Counter[str] = field(default_factory=Counter)  # refusal reason -> cases
    kernels_seen: set[str] = field(default_factory=set)  # kernels of exported cases that passed

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes.values() if o == outcome)

    def text(self) -> str:
        catalogue = tp.kernel_names.CATALOGUE
        exportable = tensorplug_onnx.exportable_kernels()
        total = len(self.outcomes)
        exported = self.count("passed") + self.count("failed")
        lines = [
            f"ONNX export: {len(exportable & set(catalogue))} of the {len(catalogue)} catalogue kernels export; not "
            f"exported: {', '.join(k for k in catalogue if k not in exportable)}",
            f"conformance cases: {total}; exported and run in ONNX Runtime: {exported}, of which passing: "
            f"{self.count('passed')}, failing: {self.count('failed')}",
        ]
        others = ("refused", "kernel not exportable", "records gradients", "returns no tensor", "expects an error",
                  "statistical", "not traceable")  # fmt: skip
        for outcome in others:
            lines.append(f"  {outcome}: {self.count(outcome)}")
        for reason, n in sorted(self.refusals.items()):
            lines.append(f"    refused ({reason}): {n}")
        lines.append(f"  kernels exercised by passing cases: {len(self.kernels_seen)}")
        for case_id, why in sorted(self.failures.items()):
            lines.append(f"  FAILED {case_id}: {why}")
        return "\n".join(lines)


def _tensors(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return tp.tensor(value)
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [tp.tensor(v) for v in value]
    return value


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, list | tuple) else [out]


def _leaves(args: list[Any]) -> list[Any]:
    """The tensor arguments in the order of the trace (each tensor once)."""
    found: list[Any] = []
    seen: set[int] = set()

    def walk(value: Any) -> None:
        if isinstance(value, tp.Tensor):
            if not isinstance(value, tp.Variable) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    walk(args)
    return found


def run_case(case: Case, report: Report) -> None:
    import onnxruntime as ort

    if case.raises is not None:
        report.outcomes[case.id] = "expects an error"
        return
    if case.check is not None:
        report.outcomes[case.id] = "statistical"
        return
    args = [_tensors(v) for v in case.inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = [np.asarray(o.numpy()) for o in _outputs(case.op(*args))]
        try:
            program = tp.function(case.op).program(*args)
        except tp.TensorplugError:
            report.outcomes[case.id] = "not traceable"
            return
    kernels = {step.kernel for step in program.kernel_steps}
    if any(step.gradient_of is not None for step in program.kernel_steps):
        report.outcomes[case.id] = "records gradients"
        return
    if not program.outputs:
        report.outcomes[case.id] = "returns no tensor"
        return
    if kernels - tensorplug_onnx.exportable_kernels():
        report.outcomes[case.id] = "kernel not exportable"
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = tp.export(case.op, *args, format="onnx")
    except tp.ExportError as exc:
        for reason, pattern in EXPECTED_REFUSALS.items():
            if pattern.search(str(exc)):
                report.outcomes[case.id] = "refused"
                report.refusals[reason] += 1
                return
        report.outcomes[case.id] = "failed"
        report.failures[case.id] = f"export refused: {exc}"
        return
    feed = {i.name: np.asarray(t.numpy()) for i, t in zip(model.graph.input, _leaves(args), strict=True)}
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = session.run(None, feed)
    except Exception as exc:
        report.outcomes[case.id] = "failed"
        report.failures[case.id] = f"ONNX Runtime raised {type(exc).__name__}: {str(exc)[:300]}"
        return
    problem = _compare(case, got, expected)
    if problem is None:
        report.outcomes[case.id] = "passed"
        report.kernels_seen |= kernels
    else:
        report.outcomes[case.id] = "failed"
        report.failures[case.id] = problem


def _compare(case: Case, got: list[np.ndarray], expected: list[np.ndarray]) -> str | None:
    if len(got) != len(expected):
        return f"{len(got)} outputs, tensorplug gives {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        g = np.asarray(g)
        if g.dtype != e.dtype or g.shape != e.shape:
            return f"output {i}: {g.dtype}{list(g.shape)}, tensorplug gives {e.dtype}{list(e.shape)}"
        try:
            if e.dtype.kind in "biu":
                np.testing.assert_array_equal(g, e)
            else:
                np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol, equal_nan=True)
        except AssertionError as exc:
            return f"output {i}: {' '.join(str(exc).split())[:400]}"
    return None


def run_all(cases: list[Case] | None = None) -> Report:
    tp.set_backend("numpy")
    report = Report()
    for case in all_cases() if cases is None else cases:
        run_case(case, report)
    return report


if __name__ == "__main__":
    print(run_all().text())
