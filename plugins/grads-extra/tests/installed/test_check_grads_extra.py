"""``tensorplug check numpy`` with tensorplug-grads-extra installed: the backend is checked against the core's
gradients (grads-extra's choices, such as a differentiable FloorDiv, never fail it), and the run says which
gradients the plugin overrides."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tensorplug as tp
from tensorplug.testing import all_cases, overridden_gradients

DIST = "tensorplug-grads-extra"


def test_the_plugins_overrides_are_in_effect_here() -> None:
    assert overridden_gradients() == {k: DIST for k in ("FloorDiv", "Log", "Pow", "RealDiv", "Sqrt")}
    assert tp.get_gradient("FloorDiv").grad is not None  # differentiable, where the core says it is not


def test_check_numpy_passes_and_names_the_overridden_gradients(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "check", "numpy", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    cases = all_cases()
    assert (
        f"tensorplug conformance (numpy): {len(cases)} passed, 0 failed, 0 missing kernels, "
        f"{sum(1 for c in cases if c.grad)} gradient checks" in done.stdout
    )
    assert f"  gradients overridden by {DIST}, checked as the core's (5): FloorDiv, Log, Pow, RealDiv, Sqrt" in (
        done.stdout
    )
