"""The conformance suite as a pytest plugin: ``pytest --tensorplug-backend NAME`` in any project.

The ``pytest11`` entry point names the tiny top-level module
``_tensorplug_pytest``, so that pytest's start-up in any project where
tensorplug is installed imports nothing of tensorplug: that module only adds
two options and one hook, and imports this one when the options are used.
Given ``--tensorplug-backend NAME``, it adds one test item per conformance
case (value checks, and the second-order gradient check of ``grad=True``
cases) run on that installed backend, whatever the directory and with no
test file of yours, and ends the run with a coverage summary::

    tensorplug conformance (numpy): 1333 passed, 0 failed, 0 missing kernels, 145 gradient checks

A case whose kernel the backend does not register is skipped and reported
as a missing kernel, as is a case that needs another kernel the backend
lacks (a gradient check needs Cast, Sum and Multiply, say);
``--tensorplug-strict`` turns those into failures. A kernel the backend
lacks but its declared fallback backend has is tested through the fallback
and counted as such (as ``tp.coverage()`` lists it). A case needing a dtype
the backend declares unsupported is not applicable (counted, not failed).
Known gaps are declared by the ``pytest_tensorplug_known_gaps(config,
backend)`` hook, in a conftest.py: they run as expected failures, counted
as known gaps; a gap that no longer fails fails the run. Gradients
overridden by installed gradient plugins are listed; the cases check the
core's. Select cases as usual, with ``-k`` (``-k "Add and not grad"``).
``-p no:tensorplug`` disables the plugin altogether.

``--tensorplug-traced`` runs each case through ``tp.function`` too: its
replay must equal eager bit for bit, or within ``Backend.compile_ulps``
where the backend's ``compile`` made it; the summary says which tolerance
held and how many cases used it. A backend that still defines a method
removed from the backend contract (``lower(program)``) fails the run: a
failing ``backend-contract`` item and a summary line say what replaced
the method, and the exit status is a failure even when ``-k`` deselects
the item.

A backend that offers fused optimizer updates (``Backend.fused_update``) gets the shared optimizer check too, one
item per optimizer case and dtype (``tensorplug-optimizers[NAME]::Adam-defaults-float32``...; see
``tensorplug.testing._optimizer_pytest``).

tensorplug itself is imported only when the option is used: the hooks that
collect and summarise are registered by :func:`pytest_configure` then.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from tensorplug._runtime._install import pip_install
from tensorplug.testing._contract import contract_line

if TYPE_CHECKING:
    from tensorplug.testing import Case

# Keys of the user_properties our items record: they travel with every report (pytest-xdist included).
_KERNEL = "tensorplug_kernel"
_MISSING = "tensorplug_missing_kernel"  # the case's own kernel is not registered
_NEEDS = "tensorplug_needs_kernel"  # the case needs another kernel that is not registered
_GRADIENT_CHECK = "tensorplug_gradient_check"
_NOT_APPLICABLE = "tensorplug_not_applicable"  # the case needs what the backend declares it lacks
_FALLBACK = "tensorplug_fallback"  # the case's kernel ran on the backend's fallback backend
_DECOMPOSED = "tensorplug_decomposed"  # the backend has no such kernel: it ran the kernel's decomposition
_GAP = "tensorplug_known_gap"  # the known-gap entry (kernel name or case id) the case falls under
_ULPS = "tensorplug_compiled_ulps"  # how far (in ulps) a compiled replay differed from eager, within its tolerance

_NOT_REGISTERED = re.compile(r"kernel '([^']+)'")


def configure(config: pytest.Config, backend: str, strict: bool) -> None:
    """Register the conformance run (called by the ``_tensorplug_pytest`` entry-point module)."""
    _check_backend(backend)
    traced = bool(config.getoption("tensorplug_traced"))
    from tensorplug.testing._optimizer_pytest import OptimizerRun

    # registered first, so that its items follow the conformance cases (hooks run last-registered first)
    config.pluginmanager.register(OptimizerRun(backend), "tensorplug-optimizers")
    config.pluginmanager.register(
        ConformanceRun(backend, strict, traced, _contract_problem(backend)), "tensorplug-conformance"
    )


def _check_backend(name: str) -> None:
    """Raise a usage error unless ``name`` is an installed backend that initialises."""
    import tensorplug as tp

    installed = tp.list_backends()
    if name not in installed:
        listed = ", ".join(installed) if installed else f"none (install one, e.g. `{pip_install('tensorplug-numpy')}`)"
        raise pytest.UsageError(f"--tensorplug-backend {name!r}: no such backend is installed; installed: {listed}")
    try:
        tp.backend(name)
    except tp.BackendError as exc:
        raise pytest.UsageError(f"--tensorplug-backend {name!r}: {exc}") from exc


def _contract_problem(name: str) -> str | None:
    """What the backend defines that the backend contract no longer has, and what replaced it (None: nothing)."""
    import tensorplug as tp
    from tensorplug.testing import check_contract

    try:
        check_contract(tp.backend(name))
    except AssertionError as exc:
        return str(exc)
    return None


class ConformanceRun:
    """The plugin object for one ``--tensorplug-backend`` run: adds the items, tallies their reports, summarises."""

    def __init__(self, backend: str, strict: bool, traced: bool = False, contract: str | None = None) -> None:
        self.backend = backend
        self.strict = strict
        self.traced = traced
        self.contract = contract  # what the backend defines that the contract no longer has, and the migration
        # nodeid -> "passed" / "failed" / "skipped" / "xfailed" / "xpassed" / "not applicable"
        self.outcomes: dict[str, str] = {}
        self.properties: dict[str, list[tuple[str, object]]] = {}
        self.gaps: dict[str, str] = {}  # kernel name or case id -> reason, from pytest_tensorplug_known_gaps

    @pytest.hookimpl(tryfirst=True)  # before -k / -m / --deselect, so they select among our items too
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        suite = ConformanceSuite.from_parent(
            session,
            name=f"tensorplug-conformance[{self.backend}]",
            nodeid=f"tensorplug-conformance[{self.backend}]",
            backend=self.backend,
            strict=self.strict,
            traced=self.traced and self.contract is None,  # a broken contract fails the run, once
        )
        self.gaps = self._known_gaps(session.config)
        collected = list(suite.collect())
        for item in collected:
            assert isinstance(item, ConformanceItem)
            key = item.case.id if item.case.id in self.gaps else item.case.kernel
            if key in self.gaps:
                item.user_properties.append((_GAP, key))
                item.add_marker(pytest.mark.xfail(reason=f"known gap: {self.gaps[key]}", strict=False))
        if self.contract is not None:
            contract = ContractItem.from_parent(suite, name="backend-contract", backend=self.backend)
            collected.insert(0, contract)
        # Report the suite as collected, so that pytest's counts (collected, deselected) include its items.
        report = pytest.CollectReport(suite.nodeid, "passed", None, [*collected])
        session.ihook.pytest_collectreport(report=report)
        items.extend(collected)

    def _known_gaps(self, config: pytest.Config) -> dict[str, str]:
        """The gaps every ``pytest_tensorplug_known_gaps`` implementation declares; a usage error for unknown keys."""
        import difflib

        from tensorplug.testing import all_cases

        gaps: dict[str, str] = {}
        for declared in config.hook.pytest_tensorplug_known_gaps(config=config, backend=self.backend):
            if not isinstance(declared, dict):
                raise pytest.UsageError(
                    f"pytest_tensorplug_known_gaps must return a dict of kernel name or case id -> reason, "
                    f"got {type(declared).__name__}"
                )
            gaps.update({str(key): str(reason) for key, reason in declared.items()})
        known = {c.kernel for c in all_cases()} | {c.id for c in all_cases()}
        for key in gaps:
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.6)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise pytest.UsageError(
                    f"pytest_tensorplug_known_gaps: {key!r} is neither a kernel name nor a conformance case id{hint}"
                )
        return gaps

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, ConformanceItem) and report.skipped and isinstance(report.longrepr, tuple):
            # Report a skip at the suite ("tensorplug-conformance[numpy]: kernel Abs not registered ..."), as
            # skip marks are, rather than at the line of this module that skips; pytest prints no line for None.
            report.longrepr = (item.location[0], None, report.longrepr[2])  # type: ignore[assignment]
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not any(key == _KERNEL for key, _ in report.user_properties):
            return  # a user's own test, or the contract item (counted from self.contract)
        # A case's outcome is its call's, or a setup's skip; any failing phase makes it failed.
        if (report.when == "call" or not report.passed) and self.outcomes.get(report.nodeid) != "failed":
            outcome: str = report.outcome
            if hasattr(report, "wasxfail"):  # a known gap: an expected failure, or one that passed
                outcome = "xfailed" if report.skipped else "xpassed"
            elif report.skipped and any(key == _NOT_APPLICABLE for key, _ in report.user_properties):
                outcome = "not applicable"
            self.outcomes[report.nodeid] = outcome
        self.properties[report.nodeid] = list(report.user_properties)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        broken = self.contract is not None and not session.config.option.collectonly
        if (self.stale_gaps() or broken) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.outcomes and (self.contract is None or terminalreporter.config.option.collectonly):
            return  # --collect-only, or every case deselected
        for line in self.summary():
            terminalreporter.write_line(line)

    def stale_gaps(self) -> list[str]:
        """Known gaps whose cases ran and none failed: fixed, so the declaration should go."""
        ran: dict[str, set[str]] = {}
        for nodeid, outcome in self.outcomes.items():
            for key, value in self.properties[nodeid]:
                if key == _GAP:
                    ran.setdefault(str(value), set()).add(outcome)
        return sorted(gap for gap, outcomes in ran.items() if "xpassed" in outcomes and "xfailed" not in outcomes)

    def summary(self) -> list[str]:
        """The coverage summary: a headline of counts, then what is missing or failing, kernel by kernel."""
        from tensorplug import kernel_names
        from tensorplug.testing import overridden_gradients

        counts = dict.fromkeys(("passed", "failed", "xfailed", "xpassed", "not applicable", "skipped"), 0)
        status: dict[str, set[str]] = {}  # kernel -> outcomes of its cases, with "missing" if it is not registered
        missing: set[str] = set()  # every missing kernel met: the kernels under test and those their cases need
        blocked: list[str] = []  # cases of a registered kernel that need a missing one: "Add-grad (needs Sum)"
        fallback: dict[str, str] = {}  # kernel -> the backend it ran on, for kernels run through the fallback
        decomposed: set[str] = set()  # kernels the backend lacks and ran as their decomposition
        needs: dict[str, int] = {}  # why cases were not applicable -> how many
        gradient_checks = 0
        compiled_ulps: list[int] = []  # per case whose compiled replay differed from eager within the tolerance
        for nodeid, outcome in self.outcomes.items():
            counts[outcome] += 1
            props = self.properties[nodeid]
            kernel = str(next(value for key, value in props if key == _KERNEL))
            outcomes = status.setdefault(kernel, set())
            outcomes.add(outcome)
            for key, value in props:
                if key == _MISSING:
                    missing.add(str(value))
                    outcomes.add("missing")
                elif key == _NEEDS:
                    missing.add(str(value))
                    if kernel in kernel_names.CATALOGUE:
                        blocked.append(f"{nodeid.rpartition('::')[2]} (needs {value})")
                elif key == _GRADIENT_CHECK and outcome == "passed":
                    gradient_checks += 1
                elif key == _FALLBACK:
                    fallback[kernel] = str(value)
                elif key == _DECOMPOSED:
                    decomposed.add(kernel)
                elif key == _NOT_APPLICABLE:
                    needs[str(value)] = needs.get(str(value), 0) + 1
                elif key == _ULPS:
                    compiled_ulps.append(int(str(value)))
        if self.contract is not None:
            counts["failed"] += 1  # the backend-contract item, run or deselected: it fails the run either way
        extras = [
            f"{_count(counts['xfailed'], 'known gap')} (xfail)" if counts["xfailed"] else "",
            f"{_count(counts['xpassed'], 'known gap')} passing (xpass)" if counts["xpassed"] else "",
            f"{counts['not applicable']} not applicable" if counts["not applicable"] else "",
            f"{counts['skipped']} skipped" if counts["skipped"] else "",
        ]
        lines = [
            f"tensorplug conformance ({self.backend}): {counts['passed']} passed, {counts['failed']} failed, "
            + "".join(f"{extra}, " for extra in extras if extra)
            + f"{_count(len(missing), 'missing kernel')}, {_count(gradient_checks, 'gradient check')}"
        ]
        kernels = {k: s for k, s in status.items() if k in kernel_names.CATALOGUE}
        absent = sorted(k for k, s in kernels.items() if "missing" in s)
        failing = sorted(k for k, s in kernels.items() if "missing" not in s and "failed" in s)
        gaps = sorted(k for k, s in kernels.items() if "xfailed" in s and not s & {"missing", "failed"})
        passing = sorted(
            k for k, s in kernels.items() if s & {"passed", "xpassed"} and not s & {"missing", "failed", "xfailed"}
        )
        inapplicable = sorted(k for k, s in kernels.items() if s == {"not applicable"})
        untested = sorted(k for k, s in kernels.items() if s == {"skipped"})
        tally = f"  kernels: {len(passing)} passing, {len(failing)} failing, {len(absent)} missing"
        if gaps:
            tally += f", {len(gaps)} with known gaps"
        if inapplicable:
            tally += f", {len(inapplicable)} not applicable"
        if untested:
            tally += f", {len(untested)} untested (every case needs a missing kernel)"
        lines += [tally, contract_line(self.backend)]
        if self.contract is not None:
            lines += _listing("backend contract broken", [self.contract])
            if self.traced:
                lines.append("  (the traced cases did not run: tp.function ignores what the contract no longer has)")
        if self.traced and self.contract is None:
            lines.append(_traced_line(self.backend, compiled_ulps))
        lines += _listing("failing kernels", failing)
        lines += _listing("missing kernels", sorted(missing))
        lines += _listing("untested kernels", untested)
        lines += _listing("cases of registered kernels that need a missing kernel", sorted(blocked))
        lines += _listing("kernels with known gaps (expected failures)", gaps)
        stale = self.stale_gaps()
        lines += _listing("known gaps that no longer fail (remove them from pytest_tensorplug_known_gaps)", stale)
        if decomposed:
            good = sum(1 for k in decomposed if k in passing)
            lines += _listing(f"run as their decomposition, {good} of them passing", sorted(decomposed))
        for target in sorted(set(fallback.values())):
            through = sorted(k for k, t in fallback.items() if t == target)
            good = sum(1 for k in through if k in passing)
            lines += _listing(f"run through the fallback backend {target}, {good} of them passing", through)
        for reason, n in sorted(needs.items()):
            lines.append(f"  not applicable ({reason}): {_count(n, 'case')}")
        if "float64" in _unsupported(self.backend) and gradient_checks:
            lines.append("  (gradient checks run in float32: the backend declares float64 unsupported)")
        overridden = overridden_gradients()
        if overridden:
            by = ", ".join(sorted(set(overridden.values())))
            lines += _listing(f"gradients overridden by {by}, checked as the core's", sorted(overridden))
        if missing and not self.strict:
            lines.append("  (missing kernels are skipped, not failed; --tensorplug-strict fails them)")
        return lines


def _traced_line(backend: str, compiled_ulps: list[int]) -> str:
    """What the traced run compared: replays with eager, bit for bit, or within the backend's declared tolerance."""
    import tensorplug as tp

    tolerance = tp.backend(backend).compile_ulps
    line = "  traced: replays equal eager bit for bit"
    if tolerance:
        line += f", compiled replays within {_count(tolerance, 'ulp')} (Backend.compile_ulps)"
        if compiled_ulps:
            line += f"; {_count(len(compiled_ulps), 'case')} differed, by up to {_count(max(compiled_ulps), 'ulp')}"
    else:
        line += " (Backend.compile_ulps is 0)"
    return line


def _unsupported(backend: str) -> frozenset[str]:
    """The dtypes the backend declares it lacks."""
    import tensorplug as tp

    return tp.backend(backend).unsupported_dtypes


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _listing(title: str, names: list[str]) -> list[str]:
    if not names:
        return []
    text = f"{title} ({len(names)}): {', '.join(names)}"
    return textwrap.wrap(text, width=110, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)


class ConformanceSuite(pytest.Collector):
    """Every case of :func:`tensorplug.testing.all_cases` as an item, on one backend."""

    def __init__(self, *, backend: str, strict: bool, traced: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backend = backend
        self.strict = strict
        self.traced = traced

    def collect(self) -> Iterable[pytest.Item]:
        from tensorplug.testing import all_cases

        return [
            ConformanceItem.from_parent(
                self, name=case.id, case=case, backend=self.backend, strict=self.strict, traced=self.traced
            )
            for case in all_cases()
        ]


class ContractItem(pytest.Item):
    """Fails: the backend defines a method removed from the backend contract (see ``check_contract``)."""

    def __init__(self, *, backend: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backend = backend

    def runtest(self) -> None:
        import tensorplug as tp
        from tensorplug.testing import check_contract

        check_contract(tp.backend(self.backend))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return f"tensorplug-conformance[{self.backend}]", None, self.name


class ConformanceItem(pytest.Item):
    """One conformance case on one backend: its values, then (for ``grad=True`` cases) its gradient check."""

    def __init__(self, *, case: Case, backend: str, strict: bool, traced: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.backend = backend
        self.strict = strict
        self.traced = traced
        self.user_properties.append((_KERNEL, case.kernel))
        self.extra_keyword_matches.add(case.kernel)

    def runtest(self) -> None:
        import dataclasses
        import warnings

        import tensorplug as tp
        from tensorplug import kernel_names
        from tensorplug._inspection._coverage import FALLBACK_PREFIX, _through_fallback
        from tensorplug.testing import not_applicable, run_case

        case = self.case
        tp.set_backend(self.backend)
        reason = not_applicable(case, tp.backend())
        if reason is not None:
            self.user_properties.append((_NOT_APPLICABLE, reason.partition(", which")[0]))  # "needs float64"
            pytest.skip(f"not applicable: {reason}")
        if case.kernel in kernel_names.CATALOGUE and tp.get_kernel(case.kernel, self.backend) is None:
            through = _through_fallback(case.kernel, self.backend)
            if tp.decomposition_stack(case.kernel):  # run as the backend's own ops, before any fallback
                self.user_properties.append((_DECOMPOSED, True))
            elif through is None:
                self._missing(_MISSING, case.kernel, f"kernel {case.kernel} not registered for backend {self.backend}")
            else:
                self.user_properties.append((_FALLBACK, through.removeprefix(FALLBACK_PREFIX)))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", tp.FallbackWarning)  # the summary lists what ran on the fallback
                run_case(case)
                if self.traced:
                    ulps = run_case(case, traced=True)
                    if ulps:
                        self.user_properties.append((_ULPS, ulps))
        except (tp.KernelNotFoundError, AssertionError) as exc:
            needed = _missing_kernel(exc)
            if needed is None:
                raise
        else:
            if case.grad:
                self.user_properties.append((_GRADIENT_CHECK, case.kernel))
            return
        what = "the case"
        if case.grad and _passes(dataclasses.replace(case, grad=False)):
            what = "its values pass, but the gradient check"
        self._missing(_NEEDS, needed, f"{what} needs kernel {needed}, not registered for backend {self.backend}")

    def _missing(self, key: str, kernel: str, reason: str) -> NoReturn:
        self.user_properties.append((key, kernel))
        if self.strict:
            pytest.fail(f"{reason} (--tensorplug-strict)", pytrace=False)
        pytest.skip(reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, AssertionError) and str(excinfo.value):
            return str(excinfo.value)  # run_case's messages name the case, the output and what differs
        excinfo.traceback = excinfo.traceback.cut(path=Path(__file__))  # from runtest on, without pytest's runner
        if style is None and self.config.getoption("tbstyle", "auto") == "auto":
            style = "short"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return f"tensorplug-conformance[{self.backend}]", None, self.name


def _passes(case: Case) -> bool:
    from tensorplug.testing import run_case

    try:
        run_case(case)
    except Exception:
        return False
    return True


def _missing_kernel(exc: BaseException) -> str | None:
    """The kernel a KernelNotFoundError (raised directly, or as the cause of a case's AssertionError) names."""
    from tensorplug import KernelNotFoundError

    error = exc if isinstance(exc, KernelNotFoundError) else exc.__cause__
    if not isinstance(error, KernelNotFoundError):
        return None
    name = getattr(error, "kernel_name", None)
    if isinstance(name, str):
        return name
    found = _NOT_REGISTERED.search(str(error))
    return found.group(1) if found else str(error)
