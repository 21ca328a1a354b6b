"""``tensorplug info`` with this backend installed: it ranks, its fallback, and which kernels run there."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from catalogue_gaps import through_the_fallback


def test_info_shows_the_fallback_and_the_kernels_that_use_it() -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "tensorplug", "info", "--json", "--init"],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    row = next(b for b in data["backends"] if b["name"] == "array_api")
    assert (row["fallback"], row["source"], row["state"]) == ("numpy", "tensorplug-array-api", "initialised")
    kernels = {k["kernel"]: k["backends"]["array_api"] for k in data["kernels"]}
    assert kernels["Erf"] == "fallback:numpy"  # no special functions in the standard
    assert kernels["Add"] == "tensorplug-array-api"
    # newer than this backend (not defined by it), and a composite of other kernels: run as the core's decomposition
    assert kernels["Softsign"] == "decomposition:tensorplug"
    through = sorted(k for k, provider in kernels.items() if provider == "fallback:numpy")
    assert through == sorted(through_the_fallback())
