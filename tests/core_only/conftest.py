"""Gate for tests/core_only: they need the core alone, with no backend installed (``nox -s core_only``).

With tensorplug-numpy (or any other tensorplug plugin) installed these tests
would test something else, so stop the run loudly instead of skipping.
"""

from __future__ import annotations

import importlib.util
from importlib.metadata import entry_points

import pytest


def _problems() -> list[str]:
    problems = []
    if importlib.util.find_spec("tensorplug") is None:
        problems.append("tensorplug is not installed (pip install ./core)")
    if importlib.util.find_spec("tensorplug_numpy") is not None:
        problems.append("tensorplug_numpy is importable, but these tests need the core with no backend")
    plugins = sorted(f"{ep.name} = {ep.value}" for ep in entry_points(group="tensorplug"))
    if plugins:
        problems.append(f"tensorplug plugins are installed ({', '.join(plugins)})")
    return problems


_found = _problems()
if _found:
    pytest.exit(
        "tests/core_only cannot run here: " + "; ".join(_found) + ". Run `nox -s core_only`, or use a fresh "
        "virtualenv with only `pip install ./core pytest`.",
        returncode=pytest.ExitCode.USAGE_ERROR,
    )
