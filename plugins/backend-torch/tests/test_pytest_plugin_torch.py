"""`pytest --tensorplug-backend torch`, run from a directory outside the repository, passes the whole suite."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def test_the_conformance_plugin_passes_on_torch(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TENSORPLUG_"))}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tensorplug-backend", "torch"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    pattern = r"tensorplug conformance \(torch\): (\d+) passed, (\d+) failed, (\d+) missing kernels"
    line = re.search(pattern, result.stdout)
    assert line, result.stdout[-3000:]
    passed, failed, missing = (int(g) for g in line.groups())
    assert (failed, missing) == (0, 0)
    assert passed > 1000
