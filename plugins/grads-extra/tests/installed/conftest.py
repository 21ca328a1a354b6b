"""Gate and fixtures for plugins/grads-extra/tests/installed: tensorplug-grads-extra must be really installed.

``nox -s grads_extra`` installs it (not editable, so its entry point is the
one pip wrote) beside the core and the NumPy backend. Without it these
tests would test the core: stop the run with a usage error instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib.metadata import PackageNotFoundError, entry_points, version

import pytest

import tensorplug as tp

DIST = "tensorplug-grads-extra"
INSTALL = "run `nox -s grads_extra`, or `pip install ./core ./plugins/backend-numpy ./plugins/grads-extra pytest`"


def _problems() -> list[str]:
    problems = []
    for dist in ("tensorplug", "tensorplug-numpy", DIST):
        try:
            version(dist)
        except PackageNotFoundError:
            problems.append(f"distribution {dist} is not installed")
    declared = {ep.value for ep in entry_points(group="tensorplug", name="grads_extra")}
    if declared != {"tensorplug_grads_extra.plugin"}:
        problems.append(f"the entry point grads_extra = tensorplug_grads_extra.plugin is not declared ({declared})")
    rows = [p for p in tp.plugins() if p.distribution == DIST]
    if not problems and [(p.name, p.status) for p in rows] != [("grads_extra", "loaded")]:
        found = [(p.name, p.status, p.error) for p in rows]
        problems.append(f"tensorplug did not load it (name, status, why): {found}")
    return problems


def pytest_configure(config: pytest.Config) -> None:
    problems = _problems()
    if problems:
        raise pytest.UsageError(
            "plugins/grads-extra/tests/installed needs tensorplug-grads-extra installed and loaded: "
            + "; ".join(problems)
            + f". To fix it, {INSTALL}."
        )
    # The safe gradients feed stand-in values to their masked branches: no kernel may compute 0 * inf or x / 0.
    config.addinivalue_line("filterwarnings", "error::RuntimeWarning")


@pytest.fixture(autouse=True)
def _numpy_backend() -> Iterator[None]:
    """Every test runs on the numpy backend, outside any override scope."""
    tp.set_backend("numpy")
    yield
    tp.set_backend("numpy")


RunPython = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_python() -> RunPython:
    """Run ``code`` in a fresh interpreter (tensorplug loads its plugins on import) with extra environment."""

    def run(code: str, **variables: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_") and k != "PYTHONWARNINGS"}
        env.update(variables)
        return subprocess.run(
            [sys.executable, "-P", "-c", textwrap.dedent(code)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run
