"""``tensorplug info`` with the torch backend alone (no tensorplug-numpy): torch is the default once initialised."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch


def test_info_init_makes_torch_the_default_on_its_device() -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    environ["TENSORPLUG_PLUGINS"] = "torch"  # torch alone, whatever else this Python has installed
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "info", "--json", "--init"],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [b["name"] for b in data["backends"]] == ["torch"]
    expected_device = f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
    assert data["backends"][0]["device"] == expected_device
    assert data["default_backend"]["name"] == "torch"
    rows = {row["kernel"]: row for row in data["kernels"]}
    assert rows["BatchMatMul"]["backends"] == {"torch": "tensorplug-torch"}
