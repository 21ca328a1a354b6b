"""The exporter conformance kit as a pytest plugin: ``pytest --tensorplug-exporter FORMAT``.

Loaded by the ``_tensorplug_pytest`` entry-point module when the option is given. The format's runner (a
:class:`tensorplug.testing.ExportRunner`) comes from the ``pytest_tensorplug_export_runner(config, format)``
hook, which the format's tests implement in a conftest.py. Each conformance case becomes one test item: it
passes when the exported case gives tensorplug's values, fails when it gives others, raises, or is refused
without one of the runner's expected refusals, and is skipped, with its class as the reason, when it is not
an inference program or uses a kernel the exporter does not write. The run ends with a summary::

    tensorplug export conformance (onnx): 1041 passed, 0 failed, 37 refused, 11 kernel not exportable, ...

``--tensorplug-strict`` also fails the run when a kernel the runner says the exporter writes is exercised by
no passing case (checked when every case ran: not under ``-k``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Iterable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tensorplug.testing import Case, ExportRunner

# Keys of the user_properties the items record: they travel with every report (pytest-xdist included).
_CASE = "tensorplug_export_case"
_OUTCOME = "tensorplug_export_outcome"
_REFUSAL = "tensorplug_export_refusal"
_KERNELS = "tensorplug_export_kernels"  # the kernels of a passing case's program, comma-separated


def configure(config: pytest.Config, format: str, strict: bool) -> None:
    """Register the export conformance run (called by the ``_tensorplug_pytest`` entry-point module)."""
    _check_format(format)
    config.pluginmanager.register(ExportConformanceRun(format, strict), "tensorplug-export-conformance")


def _check_format(format: str) -> None:
    """Raise a usage error unless ``format`` is a format ``tp.export`` writes."""
    import tensorplug as tp

    installed = [spec.format for spec in tp.exporters()]
    if format not in installed:
        listed = ", ".join(installed) if installed else "none (an exporter plugin adds one, e.g. tensorplug-onnx)"
        raise pytest.UsageError(
            f"--tensorplug-exporter {format!r}: no exporter writes this format; installed: {listed}"
        )


def _runner(config: pytest.Config, format: str) -> ExportRunner:
    """The runner the ``pytest_tensorplug_export_runner`` hook gives for ``format``; a usage error if none."""
    from tensorplug.testing import ExportRunner

    runner = config.hook.pytest_tensorplug_export_runner(config=config, format=format)
    if runner is None:
        raise pytest.UsageError(
            f"--tensorplug-exporter {format!r}: no runner for this format; implement "
            "pytest_tensorplug_export_runner(config, format) in a conftest.py of the tests you run, returning a "
            "tensorplug.testing.ExportRunner (see docs/export.md, 'Testing an exporter')"
        )
    if not isinstance(runner, ExportRunner):
        raise pytest.UsageError(
            f"pytest_tensorplug_export_runner returned {type(runner).__name__} for {format!r}; "
            "it must return a tensorplug.testing.ExportRunner or None"
        )
    return runner


class ExportConformanceRun:
    """The plugin object of one ``--tensorplug-exporter`` run: adds the items, tallies their reports, summarises."""

    def __init__(self, format: str, strict: bool) -> None:
        self.format = format
        self.strict = strict
        self.runner: ExportRunner | None = None  # from the hook, at collection
        self.outcomes: dict[str, str] = {}  # nodeid -> class
        self.refusals: Counter[str] = Counter()
        self.kernels_seen: set[str] = set()

    @pytest.hookimpl(tryfirst=True)  # before -k / -m / --deselect, so they select among our items too
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        self.runner = _runner(session.config, self.format)
        name = f"tensorplug-conformance[{self.format}-format]"  # no "export" in it: -k Exp selects Exp's cases
        suite = ExportSuite.from_parent(session, name=name, nodeid=name, format=self.format, runner=self.runner)
        collected = list(suite.collect())
        # Report the suite as collected, so that pytest's counts (collected, deselected) include its items.
        session.ihook.pytest_collectreport(report=pytest.CollectReport(suite.nodeid, "passed", None, [*collected]))
        items.extend(collected)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, ExportItem) and report.skipped and isinstance(report.longrepr, tuple):
            report.longrepr = (item.location[0], None, report.longrepr[2])  # type: ignore[assignment]
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if _CASE not in props or (report.when != "call" and report.passed):
            return  # a user's own test, or a phase that decided nothing
        self.outcomes[report.nodeid] = "failed" if report.failed else str(props.get(_OUTCOME, "failed"))
        if _REFUSAL in props:
            self.refusals[str(props[_REFUSAL])] += 1
        if report.passed and props.get(_KERNELS):
            self.kernels_seen |= set(str(props[_KERNELS]).split(","))

    def unexercised(self) -> list[str]:
        """Kernels the runner says the exporter writes that no passing case exercised (empty if cases were left out)."""
        from tensorplug.testing import all_cases

        if self.runner is None or self.runner.kernels is None or len(self.outcomes) < len(all_cases()):
            return []
        return sorted(set(self.runner.kernels) - self.kernels_seen)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.runner is None and self.outcomes:  # the items ran elsewhere (pytest-xdist's workers)
            self.runner = _runner(session.config, self.format)
        if self.strict and self.unexercised() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.outcomes or self.runner is None:
            return  # --collect-only, or every case deselected
        from tensorplug.testing._export_kit import export_summary

        counts = Counter(self.outcomes.values())
        for line in export_summary(self.format, self.runner, counts, self.refusals, self.kernels_seen):
            terminalreporter.write_line(line)
        unexercised = self.unexercised()
        if unexercised:
            fails = "fails the run (--tensorplug-strict)" if self.strict else "--tensorplug-strict fails the run"
            terminalreporter.write_line(
                f"  kernels the exporter writes that no passing case exercises ({len(unexercised)}; {fails}): "
                + ", ".join(unexercised)
            )


class ExportSuite(pytest.Collector):
    """Every case of :func:`tensorplug.testing.all_cases` as an item, exported in one format."""

    def __init__(self, *, format: str, runner: ExportRunner, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.format = format
        self.runner = runner

    def collect(self) -> Iterable[pytest.Item]:
        from tensorplug.testing import all_cases

        return [
            ExportItem.from_parent(self, name=case.id, case=case, format=self.format, runner=self.runner)
            for case in all_cases()
        ]


class ExportItem(pytest.Item):
    """One conformance case, exported in one format and run by the format's runner."""

    def __init__(self, *, case: Case, format: str, runner: ExportRunner, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.format = format
        self.runner = runner
        self.user_properties.append((_CASE, case.id))
        self.extra_keyword_matches.add(case.kernel)

    def runtest(self) -> None:
        from tensorplug.testing import check_export

        done = check_export(self.case, self.format, self.runner)
        self.user_properties.append((_OUTCOME, done.outcome))
        if done.refusal is not None:
            self.user_properties.append((_REFUSAL, done.refusal))
        if done.outcome == "passed":
            self.user_properties.append((_KERNELS, ",".join(sorted(done.kernels))))
        elif done.outcome == "failed":
            pytest.fail(f"{self.case.id} exported as {self.format!r}: {done.detail}", pytrace=False)
        elif done.outcome == "refused":
            pytest.skip(f"refused ({done.refusal})")  # short reasons, so that -rs groups the cases
        elif done.outcome == "kernel not exportable":
            pytest.skip(done.detail)
        else:
            pytest.skip(done.outcome)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return f"tensorplug-conformance[{self.format}-format]", None, self.name
