"""Tests of the numpy backend's own behaviour (core + tensorplug-numpy installed): its floating-point policy, its
fast paths. The core's tests (tests/unit) run on this backend too; these check what is particular to it.

Every test runs with "numpy" as the active backend.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorplug as tp

if "numpy" not in tp.list_backends():
    raise pytest.UsageError(
        "plugins/backend-numpy/tests needs the tensorplug-numpy distribution installed (nox -s tests installs it)"
    )


@pytest.fixture(autouse=True)
def _numpy_backend() -> Iterator[None]:
    tp.set_backend("numpy")
    yield
    tp.set_backend("numpy")
