"""Tests of the dask backend (core + tensorplug-numpy + tensorplug-dask installed; distributed for the cluster tests).

Every test runs with "dask" as the active backend, initialised once with
small chunks (``chunks=2``) so that every array of more than two elements
along an axis spans several chunks: kernels are checked across chunk
boundaries, not on one block. Run the conformance suite with
``pytest plugins/backend-dask/tests --tensorplug-backend dask --tensorplug-strict``
(``nox -s dask`` does); its known gaps are declared below.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorplug as tp

if "dask" not in tp.list_backends():
    raise pytest.UsageError("plugins/backend-dask/tests needs tensorplug-dask installed (nox -s dask installs it)")

CHUNKS = 2

# Kernel name or conformance case id -> why it fails on dask. Keep plugins/backend-dask/README.md's list in step.
KNOWN_GAPS: dict[str, str] = {}


def pytest_configure(config: pytest.Config) -> None:
    tp.set_backend("dask", chunks=CHUNKS)


def pytest_tensorplug_known_gaps(config: pytest.Config, backend: str) -> dict[str, str]:
    return dict(KNOWN_GAPS) if backend == "dask" else {}


@pytest.fixture(autouse=True)
def _dask_backend() -> Iterator[None]:
    tp.set_backend("dask")
    yield
    tp.set_backend("dask")
