"""``tensorplug info`` with tensorplug-grads-extra installed: its overrides and named sets are shown."""

from __future__ import annotations

import json
import subprocess
import sys

DIST = "tensorplug-grads-extra"


def run_info(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tensorplug", "info", *args], capture_output=True, text=True)


def test_overridden_gradients_name_the_shadowed_provider() -> None:
    done = run_info("--json")
    assert done.returncode == 0, done.stderr
    rows = {row["kernel"]: row for row in json.loads(done.stdout)["kernels"]}
    for kernel in ("Sqrt", "Pow", "Log", "RealDiv"):  # the safe gradients, shadowing the core's
        assert (rows[kernel]["gradient"], rows[kernel]["shadows"]) == (DIST, ["tensorplug"])
    assert rows["FloorDiv"]["differentiable"] is True  # straight-through, where the core declares none
    assert rows["Add"]["shadows"] == []


def test_text_lists_the_overrides_and_the_gradient_sets() -> None:
    done = run_info("--brief")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    overrides = text[text.index("Gradient overrides in effect:") :].split("\n\n")[0]
    assert "  Sqrt: tensorplug-grads-extra (shadows tensorplug)" in overrides
    sets = text[text.index("Gradient sets (") :].split("\n\n")[0]
    for name in ("straight_through", "guided_backprop", "sigmoid_surrogate", "clip"):
        assert f"  {name} ({DIST})" in sets
