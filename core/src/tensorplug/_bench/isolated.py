"""Each backend's rows timed in a process of its own.

Two libraries' thread pools in one process get in each other's way (torch's
OpenMP threads and NumPy's OpenBLAS threads on a small machine), and a
library imported for one backend slows every garbage collection of the next
one's rows (torch brings some 150,000 objects). So ``tensorplug bench`` times
each backend, and each comparison library, in a fresh ``python`` process
running :func:`main`, which prints its results as JSON on stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tensorplug._bench.timing import Settings
from tensorplug._bench.workloads import BackendResult, Row

AUTOGRAD_GROUP = "autograd"  # the HIPS autograd rows, for comparison
JAX_GROUP = "jax"  # the JAX rows (jax.jit and eager), for comparison


def run(group: str, settings: Settings) -> list[BackendResult]:
    """Time ``group`` (a backend's name, ``"autograd"`` or ``"jax"``) in a child process; its results.

    Announcements and failures reach stderr as the child writes them. A child
    that dies is a failure of its own, reported as a result with no rows.
    """
    package_root = str(Path(__file__).resolve().parents[2])  # the child imports the tensorplug that this one did
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH", "")]))
    child = subprocess.run(
        child_command(group, settings),
        stdout=subprocess.PIPE,
        stderr=None,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )
    if child.returncode != 0:
        why = f"the process timing it exited with status {child.returncode} (its output is above)"
        return [BackendResult(group, "-", "-", [], [f"{group}: {why}"])]
    return [result_from_json(data) for data in json.loads(child.stdout.splitlines()[-1])]  # the last line: JSON


def child_command(group: str, settings: Settings) -> list[str]:
    """The command line of the process that times ``group``."""
    return [sys.executable, "-m", "tensorplug._bench.isolated", group, json.dumps(asdict(settings))]


def result_from_json(data: dict[str, Any]) -> BackendResult:
    rows = [Row(**row) for row in data.pop("rows")]
    return BackendResult(rows=rows, **data)


def main(argv: list[str]) -> int:
    """In the child: time one group with the settings given as JSON, and print its results as JSON."""
    group, settings_json = argv
    settings = Settings(**json.loads(settings_json))
    from tensorplug._bench import workloads

    if group == AUTOGRAD_GROUP:
        results = [workloads.bench_autograd(settings)]
    elif group == JAX_GROUP:
        results = workloads.bench_jax(settings)
    else:
        results = [workloads.bench_backend(group, settings)]
    print(json.dumps([asdict(result) for result in results]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
