"""The shared optimizer check as items of ``pytest --tensorplug-backend NAME``, where the backend offers fused updates.

One item per case of :func:`tensorplug.testing.optimizer_cases` and dtype the backend supports, named
``tensorplug-optimizers[NAME]::<optimizer>-<option>-<dtype>`` (select them with ``-k optimizers``), each running
:func:`tensorplug.testing.check_optimizer`; the run ends with one summary line::

    tensorplug optimizers (numpy): 20 passed, 0 failed (op by op and fused, against each optimizer's update rule)

A backend that offers no fused update gets no items: its optimizers run the core's ops, which the conformance cases
cover kernel by kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tensorplug as tp
from tensorplug.testing._optimizers import OptimizerCase, check_optimizer, optimizer_cases

_CASE = "tensorplug_optimizer_case"  # the user property our items record


class OptimizerRun:
    """The plugin object for the optimizer items of one ``--tensorplug-backend`` run."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.outcomes: dict[str, str] = {}  # nodeid -> "passed" / "failed" / "skipped"

    @pytest.hookimpl(tryfirst=True)  # before -k / -m / --deselect, so they select among our items too
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        backend = tp.backend(self.backend)
        if not any(backend.fused_update(str(update)) is not None for update in tp.train.FUSED_UPDATES):
            return
        name = f"tensorplug-optimizers[{self.backend}]"
        suite = OptimizerSuite.from_parent(session, name=name, nodeid=name)
        collected: list[pytest.Item] = [
            OptimizerItem.from_parent(suite, name=f"{case.id}-{dtype}", case=case, dtype=dtype, backend=self.backend)
            for dtype in ("float32", "float64")
            if dtype not in backend.unsupported_dtypes
            for case in optimizer_cases()
        ]
        session.ihook.pytest_collectreport(report=pytest.CollectReport(suite.nodeid, "passed", None, [*collected]))
        items.extend(collected)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not any(key == _CASE for key, _ in report.user_properties):
            return
        if (report.when == "call" or not report.passed) and self.outcomes.get(report.nodeid) != "failed":
            self.outcomes[report.nodeid] = report.outcome

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.outcomes:
            return
        passed = sum(1 for o in self.outcomes.values() if o == "passed")
        failed = sum(1 for o in self.outcomes.values() if o == "failed")
        terminalreporter.write_line(
            f"tensorplug optimizers ({self.backend}): {passed} passed, {failed} failed "
            "(op by op and fused, against each optimizer's update rule)"
        )


class OptimizerSuite(pytest.Collector):
    """Holds the optimizer items (they are made by :class:`OptimizerRun`)."""

    def collect(self) -> list[pytest.Item]:
        return []


class OptimizerItem(pytest.Item):
    """One optimizer case in one dtype on one backend: :func:`tensorplug.testing.check_optimizer`."""

    def __init__(self, *, case: OptimizerCase, dtype: str, backend: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.dtype = dtype
        self.backend = backend
        self.user_properties.append((_CASE, case.id))

    def runtest(self) -> None:
        check_optimizer(self.case, self.backend, self.dtype)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, AssertionError) and str(excinfo.value):
            return str(excinfo.value)  # names the optimizer, option, backend, dtype, step and what differs
        excinfo.traceback = excinfo.traceback.cut(path=Path(__file__))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return f"tensorplug-optimizers[{self.backend}]", None, self.name
