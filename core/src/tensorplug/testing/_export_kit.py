"""The exporter conformance kit: every conformance case, exported in a format and run by that format's runtime.

For each case, the op runs eagerly on a reference backend (numpy by default: the values to match), is traced
with ``tp.function`` to learn its kernels, and, when it is an inference program whose kernels the exporter
writes, is exported with ``tp.export(..., format=FORMAT)`` and handed to the format's :class:`ExportRunner`
with the same inputs. Each output must have the reference's dtype and shape, integers and bools equal, floats
within the case's ``rtol`` and ``atol`` (NaN where NaN). A case ends in one of :data:`EXPORT_OUTCOMES`:

- ``passed``: exported, and the runner gives tensorplug's values;
- ``failed``: exported, and the runner gives other values, or raised, or the export failed unexplained;
- ``refused``: the export raised an ExportError whose message matches one of the runner's ``refusals``
  (a kernel the format writes, but not for this case: float64 where the runtime has float32 only, say);
- ``kernel not exportable``: a kernel of its program is not among the runner's ``kernels``;
- ``records gradients``: the case's op takes a gradient (``tp.grad`` inside it): not an inference program;
- ``returns no tensor``: the op returns an empty tuple (a model would compute nothing);
- ``expects an error`` / ``statistical``: the case checks that the op raises, or checks random values by
  statistics; neither is a value an exported model can be compared on;
- ``not traceable``: the op reads a value back to Python, so it has no program.

Only the runner is the format's: ``pytest --tensorplug-exporter FORMAT`` runs the kit with the runner that a
``pytest_tensorplug_export_runner`` hook returns (see ``docs/export.md``, "Testing an exporter"), and
:func:`check_exports` runs it from Python.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorplug.testing._conformance import Case, _to_tensors, all_cases

# Every class a case can end in, in the order reports list them.
EXPORT_OUTCOMES = (
    "passed",
    "failed",
    "refused",
    "kernel not exportable",
    "records gradients",
    "returns no tensor",
    "expects an error",
    "statistical",
    "not traceable",
)


@dataclass(frozen=True)
class ExportRunner:
    """What the conformance kit needs from a format's author: how to run what the exporter made.

    ``run(artefact, inputs)`` runs the artefact that ``tp.export(..., format=FORMAT)`` returned on ``inputs``
    (NumPy arrays, one per tensor argument of the function, in the order of the traced program's arguments:
    ``ExportRequest.input_names``' order) and returns its outputs, in order, as arrays. ``refusals`` maps a
    short reason to a regular expression: an ExportError whose message matches one is an expected refusal
    (``refused``, counted by reason), any other fails the case. ``kernels`` are the kernels the exporter writes
    (None: every case is exported, and the exporter's refusals decide). ``backend`` makes the reference values
    and the trace; ``name`` names the runtime in messages.

    >>> import tensorplug as tp
    >>> runner = ExportRunner(run=lambda artefact, inputs: artefact(*inputs), name="Python")
    >>> spec = tp.register_exporter("python-exp", lambda request: lambda x: [np.exp(x)])
    >>> case = Case("Exp", tp.exp, (np.array([0.0, 1.0], np.float32),), np.exp(np.array([0.0, 1.0], np.float32)))
    >>> check_export(case, "python-exp", runner).outcome
    'passed'
    >>> _ = tp.unregister_exporter("python-exp")
    """

    run: Callable[[Any, list[np.ndarray]], Sequence[Any]]
    refusals: Mapping[str, str | re.Pattern[str]] = field(default_factory=dict)
    kernels: Collection[str] | None = None
    backend: str = "numpy"
    name: str = "the runner"


@dataclass(frozen=True)
class ExportOutcome:
    """How one case ended: its class (one of :data:`EXPORT_OUTCOMES`), why, and the kernels of its program.

    ``refusal`` is the runner's reason for a ``refused`` case; ``detail`` says what failed or was left out.
    """

    case_id: str
    outcome: str
    detail: str = ""
    kernels: frozenset[str] = frozenset()
    refusal: str | None = None


def check_export(case: Case, format: str, runner: ExportRunner) -> ExportOutcome:
    """Export ``case``'s op in ``format``, run it with ``runner`` and compare it with the reference backend's values."""
    import tensorplug as tp

    def ended(outcome: str, detail: str = "", kernels: frozenset[str] = frozenset()) -> ExportOutcome:
        return ExportOutcome(case.id, outcome, detail, kernels)

    if case.raises is not None:
        return ended("expects an error", f"the case expects {case.raises.__name__}")
    if case.check is not None:
        return ended("statistical", "the case checks its values by statistics")
    tp.set_backend(runner.backend)
    args = [_to_tensors(v) for v in case.inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = [np.asarray(o.numpy()) for o in _outputs(case.op(*args))]
        try:
            program = tp.function(case.op).program(*args)
        except tp.TensorplugError as exc:
            return ended("not traceable", str(exc))
    kernels = frozenset(step.kernel for step in program.kernel_steps)
    if any(step.gradient_of is not None for step in program.kernel_steps):
        return ended("records gradients", "the op takes a gradient", kernels)
    if not program.outputs:
        return ended("returns no tensor", "the op returns no tensor", kernels)
    if runner.kernels is not None:
        outside = sorted(kernels - set(runner.kernels))
        if outside:
            return ended("kernel not exportable", f"the exporter does not write {', '.join(outside)}", kernels)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            artefact = tp.export(case.op, *args, format=format)
    except tp.ExportError as exc:
        for reason, pattern in runner.refusals.items():
            if re.search(pattern, str(exc)):
                return ExportOutcome(case.id, "refused", str(exc), kernels, reason)
        expected_words = ", ".join(repr(_pattern(p)) for p in runner.refusals.values()) or "none declared"
        return ended("failed", f"export refused: {exc} (expected refusals: {expected_words})", kernels)
    inputs = [np.asarray(t.numpy()) for t in _leaves(args)]
    try:
        got = list(runner.run(artefact, inputs))
    except Exception as exc:
        return ended("failed", f"{runner.name} raised {type(exc).__name__}: {str(exc)[:300]}", kernels)
    problem = _compare(case, got, expected)
    if problem is not None:
        return ended("failed", problem, kernels)
    return ended("passed", "", kernels)


def _pattern(pattern: str | re.Pattern[str]) -> str:
    return pattern if isinstance(pattern, str) else pattern.pattern


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, list | tuple) else [out]


def _leaves(args: list[Any]) -> list[Any]:
    """The tensor arguments in the order of the trace (each tensor once; Variables are weights, not inputs)."""
    import tensorplug as tp

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


def _compare(case: Case, got: list[Any], expected: list[np.ndarray]) -> str | None:
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


@dataclass
class ExportReport:
    """The outcomes of a run of the kit, and its report (:meth:`text`)."""

    format: str
    runner: ExportRunner
    outcomes: dict[str, str] = field(default_factory=dict)  # case id -> class
    failures: dict[str, str] = field(default_factory=dict)  # case id -> why
    refusals: Counter[str] = field(default_factory=Counter)  # refusal reason -> cases
    kernels_seen: set[str] = field(default_factory=set)  # kernels of exported cases that passed

    def add(self, done: ExportOutcome) -> None:
        self.outcomes[done.case_id] = done.outcome
        if done.outcome == "failed":
            self.failures[done.case_id] = done.detail
        elif done.outcome == "refused" and done.refusal is not None:
            self.refusals[done.refusal] += 1
        elif done.outcome == "passed":
            self.kernels_seen |= done.kernels

    def count(self, outcome: str) -> int:
        return sum(1 for o in self.outcomes.values() if o == outcome)

    def text(self) -> str:
        """The report: what exports, how many cases ran and passed, why the others did not run, what failed."""
        lines = export_summary(
            self.format,
            self.runner,
            Counter(self.outcomes.values()),
            self.refusals,
            self.kernels_seen,
        )
        lines += [f"  FAILED {case_id}: {why}" for case_id, why in sorted(self.failures.items())]
        return "\n".join(lines)


def export_summary(
    format: str,
    runner: ExportRunner,
    counts: Mapping[str, int],
    refusals: Mapping[str, int],
    kernels_seen: Collection[str],
) -> list[str]:
    """The summary lines of a run: a headline of counts per class, then the kernels, then the refusals."""
    from tensorplug import kernel_names

    passed, failed = counts.get("passed", 0), counts.get("failed", 0)
    headline = f"tensorplug export conformance ({format}): {passed} passed, {failed} failed"
    others = [f"{counts[o]} {o}" for o in EXPORT_OUTCOMES[2:] if counts.get(o)]
    lines = [headline + "".join(f", {other}" for other in others)]
    catalogue = kernel_names.CATALOGUE
    if runner.kernels is not None:
        written = set(runner.kernels)
        left = [k for k in catalogue if k not in written]
        line = f"  kernels: {len(written & set(catalogue))} of the {len(catalogue)} catalogue kernels export"
        if 0 < len(left) <= 20:
            line += f"; not exported: {', '.join(left)}"
        lines.append(line)
    lines.append(f"  kernels exercised by passing cases: {len(set(kernels_seen))}")
    lines += [f"  refused ({reason}): {n}" for reason, n in sorted(refusals.items())]
    return lines


def check_exports(format: str, runner: ExportRunner, cases: Sequence[Case] | None = None) -> ExportReport:
    """Run :func:`check_export` on every case (or ``cases``) and collect the outcomes.

    ``python -c "..."`` or a format's own script can print ``check_exports("onnx", RUNNER).text()``.
    """
    report = ExportReport(format, runner)
    for case in all_cases() if cases is None else cases:
        report.add(check_export(case, format, runner))
    return report
