"""pytest's entry point for tensorplug: the conformance suite's options (for a backend, for an exporter), the
``tensorplug_registries`` and ``tensorplug_check_kernel`` fixtures, and nothing imported until used.

It lives outside the ``tensorplug`` package so that pytest starting up in any
project where tensorplug is installed does not import tensorplug (and run
its plugin discovery). ``pytest --tensorplug-backend NAME`` loads
``tensorplug.testing.pytest_plugin``, which adds the suite;
``pytest --tensorplug-exporter FORMAT`` loads the exporter conformance kit
(``tensorplug.testing._export_pytest``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tensorplug.testing import ExportRunner, KernelReport


@pytest.fixture
def tensorplug_registries() -> Iterator[None]:
    """Whatever the test registers or unregisters (kernels, gradients, gradient sets) is undone after it.

    Built on the registries' snapshot and restore (``tensorplug.testing.restored_registries``): added entries go,
    removed ones come back in their place. Backends are not covered; a kernel's ``dispose`` hook is not called.
    """
    from tensorplug.testing import restored_registries

    with restored_registries():
        yield


@pytest.fixture
def tensorplug_check_kernel() -> Iterator[Callable[..., KernelReport]]:
    """``tensorplug.testing.check_kernel``, for a test that registers a kernel and checks it: whatever the test
    registers is undone after it (as ``tensorplug_registries`` does), and the active backend is the one before.

    >>> def test_swish(tensorplug_check_kernel):  # doctest: +SKIP
    ...     tp.register_kernel("Swish", "numpy", swish)
    ...     tensorplug_check_kernel("Swish", {"x": np.array([0.5, -1.0], np.float32)}, beta=1.0)
    """
    import tensorplug as tp
    from tensorplug.testing import check_kernel, restored_registries

    backend = tp.get_backend()
    try:
        with restored_registries():
            yield check_kernel
    finally:
        tp.set_backend(backend)


class HookSpecs:
    """The hooks a backend's or an exporter's tests implement (in a conftest.py, or a module loaded with ``-p``)."""

    @staticmethod
    @pytest.hookspec
    def pytest_tensorplug_known_gaps(config: pytest.Config, backend: str) -> dict[str, str]:  # type: ignore[empty-body]
        """Known gaps of ``backend``: kernel name or case id -> why it fails, run as expected failures.

        The run reports them as known gaps, not as failures; a gap none of whose
        cases fails any more fails the run, so that fixing one is noticed.
        """

    @staticmethod
    @pytest.hookspec(firstresult=True)
    def pytest_tensorplug_export_runner(config: pytest.Config, format: str) -> ExportRunner | None:
        """How ``--tensorplug-exporter`` runs what the exporter of ``format`` makes (None: another format's)."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(HookSpecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tensorplug", "tensorplug conformance suite")
    group.addoption(
        "--tensorplug-backend",
        metavar="NAME",
        default=None,
        help="run tensorplug's conformance suite (values and gradient checks) on the installed backend NAME",
    )
    group.addoption(
        "--tensorplug-strict",
        action="store_true",
        default=False,
        help="with --tensorplug-backend: a kernel the backend does not register fails instead of being skipped; "
        "with --tensorplug-exporter: a kernel the exporter writes that no passing case exercises fails the run",
    )
    group.addoption(
        "--tensorplug-traced",
        action="store_true",
        default=False,
        help="with --tensorplug-backend: also run each case through tp.function and check that its replay (the "
        "backend's lowering) equals eager, bit for bit (a compiled replay: within the backend's compile_ulps)",
    )
    group.addoption(
        "--tensorplug-exporter",
        metavar="FORMAT",
        default=None,
        help="export each conformance case in FORMAT (a format tp.export writes) and run it with the runner that "
        "the pytest_tensorplug_export_runner hook gives, against the values of its reference backend (numpy)",
    )


def pytest_configure(config: pytest.Config) -> None:
    backend = config.getoption("tensorplug_backend")
    exporter = config.getoption("tensorplug_exporter")
    strict = bool(config.getoption("tensorplug_strict"))
    if exporter is not None:
        from tensorplug.testing import _export_pytest

        _export_pytest.configure(config, exporter, strict)
    if backend is None:
        if config.getoption("tensorplug_traced"):
            raise pytest.UsageError("--tensorplug-traced needs --tensorplug-backend NAME")
        if strict and exporter is None:
            raise pytest.UsageError(
                "--tensorplug-strict needs --tensorplug-backend NAME or --tensorplug-exporter FORMAT"
            )
        return
    from tensorplug.testing import pytest_plugin

    pytest_plugin.configure(config, backend, strict)
