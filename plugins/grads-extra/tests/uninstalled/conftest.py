"""Gate for plugins/grads-extra/tests/uninstalled: the core and NumPy backend, tensorplug-grads-extra NOT installed.

``nox -s grads_extra`` runs these after ``pip uninstall tensorplug-grads-extra``;
with the distribution still there they would test the overrides, not their
absence: stop the run with a usage error instead.
"""

from __future__ import annotations

import contextlib
import importlib.util
from importlib.metadata import PackageNotFoundError, entry_points, version

import pytest

import tensorplug as tp

DIST = "tensorplug-grads-extra"


def _problems() -> list[str]:
    problems = []
    for dist in ("tensorplug", "tensorplug-numpy"):
        try:
            version(dist)
        except PackageNotFoundError:
            problems.append(f"distribution {dist} is not installed")
    with contextlib.suppress(PackageNotFoundError):
        problems.append(f"distribution {DIST} {version(DIST)} is installed")
    if importlib.util.find_spec("tensorplug_grads_extra") is not None:
        problems.append("the package tensorplug_grads_extra is importable")
    declared = sorted(f"{ep.name} = {ep.value}" for ep in entry_points(group="tensorplug", name="grads_extra"))
    if declared:
        problems.append(f"an entry point {declared} is declared")
    if any(p.distribution == DIST for p in tp.plugins()):
        problems.append("tensorplug saw it among its plugins")
    return problems


def pytest_configure(config: pytest.Config) -> None:
    problems = _problems()
    if problems:
        raise pytest.UsageError(
            "plugins/grads-extra/tests/uninstalled needs tensorplug-grads-extra uninstalled: "
            + "; ".join(problems)
            + ". Run `nox -s grads_extra` (it uninstalls it first), or `pip uninstall tensorplug-grads-extra`."
        )


@pytest.fixture(autouse=True)
def _numpy_backend() -> None:
    tp.set_backend("numpy")
