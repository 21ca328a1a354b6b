"""Fixtures for the unit tests (core + NumPy backend installed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorplug as tp
from tensorplug._runtime._engine import engine


@pytest.fixture(autouse=True)
def _numpy_backend() -> Iterator[None]:
    """Every test starts on the numpy backend and leaves the engine as it found it."""
    specs = dict(engine.specs)
    instances = dict(engine.instances)
    tp.set_backend("numpy")
    yield
    for name in list(engine.specs):
        if name not in specs:
            tp.remove_backend(name)
    engine.specs.update(specs)
    engine.instances.update(instances)
    tp.set_backend("numpy")
