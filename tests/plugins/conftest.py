"""Gate for tests/plugins: the fixture distributions must be installed for real, as ``nox -s plugins`` does.

Every test here runs Python in a subprocess against what is installed in
this interpreter's environment, so a missing distribution would make the
tests meaningless: stop the run loudly instead of skipping.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, entry_points, version

import pytest

REQUIRED_DISTRIBUTIONS = (
    "tensorplug",
    "tensorplug-numpy",
    "tensorplug-fixture-good",
    "tensorplug-fixture-broken",
    "tensorplug-fixture-conflict",
    "tensorplug-fixture-dupname",
    "tensorplug-fixture-hostile",
    "tensorplug-fixture-grown",
    "tensorplug-fixture-abrupt",
    "tensorplug-fixture-legacy",
    "tensorplug-fixture-contract",
)
REQUIRED_ENTRY_POINTS = (
    *("numpy", "good", "broken", "half", "hookraise", "sneaky", "typo", "conflict", "elsewhere"),
    *("debugscope", "endless", "exits", "fallback", "imports", "interrupt", "lazy", "patches", "rleu", "scope"),
    *("silent", "squat", "strname", "switches", "thread", "unregisters", "grown", "baseimport", "basehook", "genexit"),
    "legacy",
    *("future", "newer", "unversioned", "malformed"),
)
INSTALL = (
    "run `nox -s plugins`, or `pip install ./core ./plugins/backend-numpy ./tests/fixtures/tp-fixture-good "
    "./tests/fixtures/tp-fixture-broken ./tests/fixtures/tp-fixture-conflict ./tests/fixtures/tp-fixture-dupname "
    "./tests/fixtures/tp-fixture-hostile ./tests/fixtures/tp-fixture-grown ./tests/fixtures/tp-fixture-abrupt "
    "./tests/fixtures/tp-fixture-legacy ./tests/fixtures/tp-fixture-contract`"
)


def _problems() -> list[str]:
    problems = []
    for dist in REQUIRED_DISTRIBUTIONS:
        try:
            version(dist)
        except PackageNotFoundError:
            problems.append(f"distribution {dist} is not installed")
    declared = {ep.name for ep in entry_points(group="tensorplug")}
    for name in REQUIRED_ENTRY_POINTS:
        if name not in declared:
            problems.append(f"no entry point {name!r} in the group 'tensorplug' (reinstall the fixtures)")
    return problems


_found = _problems()
if _found:
    pytest.exit(
        "tests/plugins cannot run here: " + "; ".join(_found) + f". To fix it, {INSTALL}.",
        returncode=pytest.ExitCode.USAGE_ERROR,
    )
