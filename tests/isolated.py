"""Run a snippet in a fresh interpreter, for checks whose failure ends the process (an abort, a hang)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run_isolated(
    code: str, backend: str, imports: str = "numpy as np, tensorplug as tp"
) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter on ``backend``, with no TENSORPLUG_ variable of this process."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    prelude = f"import {imports}\ntp.set_backend({backend!r})\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
