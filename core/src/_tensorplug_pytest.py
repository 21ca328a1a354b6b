"""pytest's entry point for tensorplug: the conformance suite's two options, the ``tensorplug_registries`` fixture,
and nothing imported until used.

It lives outside the ``tensorplug`` package so that pytest starting up in any
project where tensorplug is installed does not import tensorplug (and run
its plugin discovery). ``pytest --tensorplug-backend NAME`` loads
``tensorplug.testing.pytest_plugin``, which adds the suite.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def tensorplug_registries() -> Iterator[None]:
    """Whatever the test registers or unregisters (kernels, gradients, gradient sets) is undone after it.

    Built on the registries' snapshot and restore (``tensorplug.testing.restored_registries``): added entries go,
    removed ones come back in their place. Backends are not covered; a kernel's ``dispose`` hook is not called.
    """
    from tensorplug.testing import restored_registries

    with restored_registries():
        yield


class HookSpecs:
    """The hook a backend's tests implement (in a conftest.py, or a module loaded with ``-p``)."""

    @staticmethod
    @pytest.hookspec
    def pytest_tensorplug_known_gaps(config: pytest.Config, backend: str) -> dict[str, str]:  # type: ignore[empty-body]
        """Known gaps of ``backend``: kernel name or case id -> why it fails, run as expected failures.

        The run reports them as known gaps, not as failures; a gap none of whose
        cases fails any more fails the run, so that fixing one is noticed.
        """


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
        help="with --tensorplug-backend: a kernel the backend does not register fails instead of being skipped",
    )
    group.addoption(
        "--tensorplug-traced",
        action="store_true",
        default=False,
        help="with --tensorplug-backend: also run each case through tp.function and check that its replay (the "
        "backend's lowering) equals eager, bit for bit (a compiled replay: within the backend's compile_ulps)",
    )


def pytest_configure(config: pytest.Config) -> None:
    backend = config.getoption("tensorplug_backend")
    strict = bool(config.getoption("tensorplug_strict"))
    if backend is None:
        if strict or config.getoption("tensorplug_traced"):
            option = "--tensorplug-strict" if strict else "--tensorplug-traced"
            raise pytest.UsageError(f"{option} needs --tensorplug-backend NAME")
        return
    from tensorplug.testing import pytest_plugin

    pytest_plugin.configure(config, backend, strict)
