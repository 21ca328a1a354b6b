"""``tensorplug info`` with numpy and torch installed: torch stays unimported until ``--init``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

NO_TORCH_CHECK = (
    "import sys; from tensorplug._tools._cli import main; status = main(sys.argv[1:]); "
    "print('TORCH_IMPORTED', 'torch' in sys.modules, file=sys.stderr); sys.exit(status)"
)


def info(*args: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")} | (env or {})
    done = subprocess.run(
        [sys.executable, "-c", NO_TORCH_CHECK, "info", "--json", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data, done.stderr


def test_torch_is_listed_but_not_imported_without_init() -> None:
    data, stderr = info()
    assert "TORCH_IMPORTED False" in stderr
    torch_row = next(b for b in data["backends"] if b["name"] == "torch")
    assert torch_row["state"] == "not initialised"
    assert torch_row["source"] == "tensorplug-torch"
    assert torch_row["priority_from"] == "tensorplug_torch._probe:priority"  # decided without importing torch
    rows = {row["kernel"]: row for row in data["kernels"]}
    assert rows["Add"]["backends"] == {"numpy": "tensorplug-numpy", "torch": "tensorplug-torch"}


def test_init_imports_torch_and_shows_its_device() -> None:
    data, stderr = info("--init", env={"TENSORPLUG_TORCH_DEVICE": "cpu"})
    assert "TORCH_IMPORTED True" in stderr
    torch_row = next(b for b in data["backends"] if b["name"] == "torch")
    assert (torch_row["state"], torch_row["device"], torch_row["priority"]) == ("initialised", "cpu", 0)
    assert [b["name"] for b in data["backends"]] == ["numpy", "torch"]  # on the CPU torch ranks below numpy
    assert data["default_backend"]["name"] == "numpy"
    assert data["environment"] == {"TENSORPLUG_TORCH_DEVICE": "cpu"}


def test_a_backend_that_fails_to_initialise_is_shown_failed_and_the_next_one_is_the_default() -> None:
    # "cuda:bad" is no torch device: torch ranks first (a cuda device asked for: priority 2) and fails
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "tensorplug", "info", "--json", "--init"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
        | {"TENSORPLUG_TORCH_DEVICE": "cuda:bad"},
        timeout=300,
    )
    data = json.loads(done.stdout)
    torch_row = next(b for b in data["backends"] if b["name"] == "torch")
    assert torch_row["priority"] == 2
    assert torch_row["state"] == "failed"
    assert "cuda:bad" in torch_row["error"]
    assert data["default_backend"]["name"] == "numpy"
    assert data["default_backend"]["reason"] == "the highest priority that initialised (torch failed)"
    assert done.returncode == 1
