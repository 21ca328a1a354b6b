"""Tests of the torch backend (core + tensorplug-torch installed; numpy's backend need not be).

Every test runs with "torch" as the active backend. CUDA-only tests carry
the ``cuda`` marker and are skipped when no CUDA device is visible.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tensorplug as tp

if "torch" not in tp.list_backends():
    raise pytest.UsageError(
        "plugins/backend-torch/tests needs the tensorplug-torch distribution installed (nox -s tests_torch installs it)"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cuda: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device visible to torch")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _torch_backend() -> Iterator[None]:
    tp.set_backend("torch")
    yield
    tp.set_backend("torch")
