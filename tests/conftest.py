"""Hypothesis profiles for every test directory: "ci" by default, "long" for local bug hunts.

    TENSORPLUG_HYPOTHESIS_PROFILE=long pytest tests/unit/test_bad_input.py

"ci" is derandomized (the same examples on every run) and bounded, so that CI stays fast and reproducible;
"long" draws fresh examples on every run, many more of them. Tests with their own ``@settings`` keep those.

The ``registries`` fixture puts the kernel, gradient and gradient set registries back as they were after the test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=20, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long",
    max_examples=400,
    derandomize=False,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("TENSORPLUG_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def registries() -> Iterator[None]:
    """Whatever the test registers or unregisters (kernels, gradients, gradient sets) is undone after it."""
    from registry_state import restored_registries

    with restored_registries():
        yield
