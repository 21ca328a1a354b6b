"""``tensorplug info`` with the core alone: no backend, and the advice to install one."""

from __future__ import annotations

import json
import subprocess
import sys

from tensorplug import kernel_names


def test_info_with_no_backend_lists_the_builtin_plugin_and_what_to_install() -> None:
    done = subprocess.run([sys.executable, "-m", "tensorplug", "info", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(p["name"], p["status"]) for p in data["plugins"]] == [("tensorplug", "loaded")]
    assert data["backends"] == []
    assert data["default_backend"]["name"] is None
    assert "pip install ./plugins/backend-numpy" in data["default_backend"]["reason"]
    assert len(data["kernels"]) == len(kernel_names.CATALOGUE)
    assert all(row["backends"] == {} for row in data["kernels"])


def test_info_text_with_no_backend() -> None:
    done = subprocess.run([sys.executable, "-m", "tensorplug", "info", "--init"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Backends (" in done.stdout
    assert "  (none)" in done.stdout
    assert "default: (none)" in done.stdout
