"""Tests that need every backend distribution installed together (nox -s tests_all)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorplug as tp

missing = {"numpy", "torch"} - set(tp.list_backends())
if missing:
    raise pytest.UsageError(f"tests/all needs the backends {sorted(missing)} installed (nox -s tests_all)")


@pytest.fixture(autouse=True)
def _start_on_numpy() -> Iterator[None]:
    tp.set_backend("numpy")
    yield
    tp.set_backend("numpy")


@pytest.fixture
def on_torch() -> Iterator[None]:
    """The test runs on the torch backend: ``pytestmark = pytest.mark.usefixtures("on_torch")``."""
    tp.set_backend("torch")
    yield
    tp.set_backend("numpy")
