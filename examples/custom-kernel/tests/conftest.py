"""Every test starts on numpy with the registries as installed, and leaves them so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import tensorplug as tp


@pytest.fixture(autouse=True)
def _numpy(tensorplug_registries: object) -> Iterator[None]:
    tp.set_backend("numpy")
    yield
    tp.set_backend("numpy")
