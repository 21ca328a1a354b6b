"""Every test runs on the array_api backend (tensorplug-numpy installed as its fallback).

The namespace is array_api_strict, or the one TENSORPLUG_ARRAY_API_NAMESPACE
names (``TENSORPLUG_ARRAY_API_NAMESPACE=torch pytest`` runs the suite on
torch's); tests about array_api_strict itself ask for the ``strict`` fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import tensorplug as tp

if "array_api" not in tp.list_backends():
    raise pytest.UsageError("these tests need tensorplug-array-api installed: pip install ./examples/array-api-backend")


@pytest.fixture(scope="session", autouse=True)
def namespace() -> str:
    """The namespace of this run."""
    chosen = os.environ.get("TENSORPLUG_ARRAY_API_NAMESPACE", "").strip() or "array_api_strict"
    tp.set_backend("array_api", namespace=chosen)
    return chosen


@pytest.fixture(autouse=True)
def _array_api_backend(namespace: str) -> Iterator[None]:
    tp.set_backend("array_api")
    yield
    tp.set_backend("array_api")


@pytest.fixture
def strict(namespace: str) -> Iterator[None]:
    """The backend over array_api_strict for one test, whatever the run's namespace."""
    tp.set_backend("array_api", namespace="array_api_strict")
    yield
    tp.set_backend("array_api", namespace=namespace)
