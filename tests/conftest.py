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
    """Whatever the test registers or unregisters (kernels, gradients, gradient sets) is undone after it.

    Built on the registries' own snapshot and restore, as a plugin that fails to load is rolled back: what was
    added goes, what was removed comes back, in its place in its stack. A kernel's ``dispose`` hook is not
    called; a test of that hook unregisters by hand. Backends are not covered (tests/unit's conftest puts
    those back).
    """
    from tensorplug._plugin_guard import REGISTRIES  # the registries a plugin's rollback restores

    saved = [(registry, registry.snapshot()) for registry in REGISTRIES]
    yield
    for registry, before in saved:
        registry.restore(before)
