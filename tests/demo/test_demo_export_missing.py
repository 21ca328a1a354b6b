"""``tensorplug demo --export`` where the ONNX exporter is not installed: it says what to install, before training.

The demo session installs no tensorplug-onnx; the allowlist (``TENSORPLUG_PLUGINS``) makes sure of it here
whatever is installed. The export itself is tested with the plugin (plugins/export-onnx/tests).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def test_export_without_the_plugin_names_the_distribution_to_install(tmp_path: Path) -> None:
    script = shutil.which("tensorplug", path=str(Path(sys.executable).parent))
    assert script, f"the tensorplug console script is not installed beside {sys.executable}"
    target = tmp_path / "model.onnx"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    environ["TENSORPLUG_PLUGINS"] = "numpy"
    done = subprocess.run(
        [script, "demo", "--export", str(target)], capture_output=True, text=True, env=environ, timeout=120
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--export needs the ONNX exporter: pip install ./plugins/export-onnx" in done.stderr
    assert "epoch" not in done.stdout  # said before training
    assert not target.exists()
