"""Each backend's rows timed in a process of its own.

Two libraries' thread pools in one process get in each other's way (torch's
OpenMP threads and NumPy's OpenBLAS threads on a small machine), and a
library imported for one backend slows every garbage collection of the next
one's rows (torch brings some 150,000 objects). So ``tensorplug bench`` times
each backend, and each comparison library, in a fresh ``python`` process
running :func:`main`, which prints its results as JSON on stdout, with one
thread per library unless the user chose a count (``timing.thread_setting``),
and with the backends' plugins only (``timing_plugins``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tensorplug
from tensorplug._plugins._env import ENV_ALLOW
from tensorplug._tools._bench.timing import Settings, thread_setting
from tensorplug._tools._bench.workloads import BackendResult, Row

AUTOGRAD_GROUP = "autograd"  # the HIPS autograd rows, for comparison
JAX_GROUP = "jax"  # the JAX rows (jax.jit and eager), for comparison
LAZY = (
    "a lazy backend: these workloads on one machine's small arrays time its graph building and scheduling, not "
    "tensorplug's overhead (`--backend NAME` times them anyway; tensorplug-dask's benchmark is "
    "benchmarks/dask_regression.py, against dask.array by hand)"
)


@dataclass
class Outcome:
    """What timing one group gave: its results, or why it was not measured."""

    results: list[BackendResult] = field(default_factory=list)
    skipped: str | None = None


def timing_plugins() -> list[str] | None:
    """The plugins a timing process loads: the backends' distributions (``TENSORPLUG_PLUGINS``), unless the user
    set ``TENSORPLUG_PLUGINS`` (None). The rows compare the core's own gradients with the same math written by
    hand; a plugin that replaces gradients computes something else (tensorplug-grads-extra's safe gradients of
    RealDiv and Log guard their singularities with more kernels), so it stays out of the timing processes, and
    in the import row, which times ``import tensorplug`` with every installed plugin."""
    if ENV_ALLOW in os.environ:
        return None
    return sorted({info.distribution for info in tensorplug.plugins() if info.backends and info.status == "loaded"})


def run(group: str, settings: Settings, named: bool = False) -> Outcome:
    """Time ``group`` (a backend's name, ``"autograd"`` or ``"jax"``) in a child process.

    A backend that does not initialise is skipped, and so is a lazy one
    unless ``named`` (asked for with ``--backend``). Announcements and
    failures reach stderr as the child writes them. A child that dies is a
    failure of its own, reported as a result with no rows.
    """
    # The child imports the tensorplug that this one did: the folder above the package's.
    package_root = str(Path(tensorplug.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH", "")]))
    child = subprocess.run(
        child_command(group, settings, named),
        stdout=subprocess.PIPE,
        stderr=None,
        text=True,
        env={**os.environ, **thread_setting(), **plugin_setting(), "PYTHONPATH": path},
        check=False,
    )
    if child.returncode != 0:
        why = f"the process timing it exited with status {child.returncode} (its output is above)"
        return Outcome([BackendResult(group, "-", "-", [], [f"{group}: {why}"])])
    data = json.loads(child.stdout.splitlines()[-1])  # the last line: the JSON
    if data["skipped"] is not None:
        return Outcome(skipped=data["skipped"])
    return Outcome([result_from_json(result) for result in data["results"]])


def plugin_setting() -> dict[str, str]:
    plugins = timing_plugins()
    return {} if plugins is None else {ENV_ALLOW: ",".join(plugins)}


def child_command(group: str, settings: Settings, named: bool) -> list[str]:
    """The command line of the process that times ``group``."""
    arguments = [group, json.dumps(asdict(settings)), "named" if named else "found"]
    return [sys.executable, "-m", "tensorplug._tools._bench.isolated", *arguments]


def result_from_json(data: dict[str, Any]) -> BackendResult:
    rows = [Row(**row) for row in data.pop("rows")]
    return BackendResult(rows=rows, **data)


def main(argv: list[str]) -> int:
    """In the child: time one group with the settings given as JSON, and print the outcome as JSON."""
    group, settings_json, how = argv
    settings = Settings(**json.loads(settings_json))
    outcome = time_group(group, settings, named=how == "named")
    print(json.dumps({"results": [asdict(result) for result in outcome.results], "skipped": outcome.skipped}))
    return 0


def one_core_for_jax() -> None:
    """With one thread per library (the default), keep JAX's process on one CPU: XLA sizes its thread pools by the
    CPUs it may use and has no setting that holds its compiled programs to one thread, as OMP_NUM_THREADS and
    OPENBLAS_NUM_THREADS hold torch and NumPy."""
    if all(value == "1" for value in thread_setting().values()) and hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) > 1:
            os.sched_setaffinity(0, cpus[-1:])


def time_group(group: str, settings: Settings, named: bool) -> Outcome:
    import tensorplug as tp
    from tensorplug._tools._bench import workloads

    if group == AUTOGRAD_GROUP:
        return Outcome([workloads.bench_autograd(settings)])
    if group == JAX_GROUP:
        one_core_for_jax()
        return Outcome(workloads.bench_jax(settings))
    try:
        backend = tp.backend(group)
    except tp.BackendError as exc:
        return Outcome(skipped=f"it did not initialise ({exc})")
    if backend.lazy and not named:
        return Outcome(skipped=LAZY)
    return Outcome([workloads.bench_backend(group, settings)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
