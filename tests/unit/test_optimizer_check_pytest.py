"""The shared optimizer check under ``pytest --tensorplug-backend NAME``, run as a user would (pytest in a
subprocess, outside the repository): one item per optimizer case and dtype where the backend fuses updates, none
where it does not, and a wrong fused update fails its items with what differs."""

from __future__ import annotations

from pathlib import Path

from test_pytest_plugin import PARTIAL_BACKEND, run_pytest

from tensorplug.testing import optimizer_cases

# numpy's Adam, its second moment taking the gradient instead of its square
WRONG_ADAM = """
import numpy as np
import tensorplug_numpy._train as fused


def wrong_adam(inputs, attrs, backend):
    m = inputs["m"] * inputs["beta1"] + inputs["grad"] * inputs["one_minus_beta1"]
    v = inputs["v"] * inputs["beta2"] + inputs["grad"] * inputs["one_minus_beta2"]
    var = inputs["var"] - m / (np.sqrt(np.abs(v)) + inputs["epsilon"]) * inputs["step_size"]
    return [var, m, v]


fused.FUSED_UPDATES["ApplyAdam"] = wrong_adam
"""


def test_a_backend_that_fuses_updates_gets_an_item_per_optimizer_case_and_dtype(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "--tensorplug-backend", "numpy", "-v", "-k", "optimizers")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    count = 2 * len(optimizer_cases())
    assert f"{count} passed" in result.stdout.splitlines()[-1]
    assert "tensorplug-optimizers[numpy]::Momentum-nesterov-float64 PASSED" in result.stdout
    assert f"tensorplug optimizers (numpy): {count} passed, 0 failed" in result.stdout


def test_a_wrong_fused_update_fails_its_items_naming_what_differs(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(WRONG_ADAM)
    result = run_pytest(tmp_path, "--tensorplug-backend", "numpy", "-q", "-k", "optimizers and Adam")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "tensorplug optimizers (numpy): 0 passed, 4 failed" in result.stdout
    assert (
        "Adam (defaults) on backend 'numpy', float32, fused update ApplyAdam, step 1: var of variable 0 (shape [3, 4]) "
        "differs from the reference formula" in result.stdout
    )


def test_a_backend_without_fused_updates_gets_no_optimizer_items(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(PARTIAL_BACKEND)
    result = run_pytest(tmp_path, "--tensorplug-backend", "partial", "-q", "-k", "optimizers or Add-float32")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout.splitlines()[-1]
    assert "tensorplug optimizers" not in result.stdout
