"""Hypothesis profiles for every test directory: "ci" by default, "long" for local bug hunts.

    TENSORPLUG_HYPOTHESIS_PROFILE=long pytest tests/unit/test_bad_input.py

"ci" is derandomized (the same examples on every run) and bounded, so that CI stays fast and reproducible;
"long" draws fresh examples on every run, many more of them. Tests with their own ``@settings`` keep those.

Tests that register kernels, gradients or gradient sets isolate them with the ``tensorplug_registries`` fixture of
tensorplug's pytest plugin (``tensorplug.testing.restored_registries``), as any project's tests can.
"""

from __future__ import annotations

import os

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
