"""torch's CPU threads against the cores that are free: a warning, once, when they oversubscribe the machine.

torch runs each CPU op on a pool of OpenMP threads, one per physical core by
default. When other programs keep those cores busy (or a container grants
fewer cores than the machine has), every op waits at its barrier for threads
that the system has put aside: a small model trained on a busy 2-core machine
took 26.7 s with torch's 2 threads against 0.9 s with one. Nothing here
changes torch's settings, which belong to the user's program; the backend
says what it sees and what to do. Setting ``OMP_NUM_THREADS`` (before Python
starts) or calling ``torch.set_num_threads`` (before the backend's first op)
decides the count and silences the warning.

Nothing here imports torch at import time (``import tensorplug`` must not).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")  # the user has chosen a thread count
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2: "QUOTA PERIOD", or "max PERIOD" for no limit

_warned = False


class ThreadsWarning(UserWarning):
    """torch will run more threads per op than the machine has cores free for them."""


def usable_cpus() -> int:
    """The cores this process may run on: its CPU affinity, capped by a cgroup CPU quota where there is one."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = CGROUP_CPU_MAX.read_text(encoding="ascii").split()[:2]
        if quota != "max":
            count = min(count, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass  # no cgroup v2 limit that can be read: the affinity decides
    return count


def oversubscription(threads: int, usable: int, load: float, environ: Mapping[str, str]) -> str | None:
    """What is wrong, and what to do, when ``threads`` per op oversubscribe ``usable`` cores under ``load``.

    ``load`` is the 1-minute load average, which counts this process's own
    running thread too. None when the user chose a thread count (an
    environment variable is set), torch runs one thread, or the threads fit
    in the cores that other work leaves free (counting a core as taken only
    when at least one core's worth of other work is running).

    >>> oversubscription(threads=2, usable=2, load=0.3, environ={}) is None
    True
    >>> print(oversubscription(threads=2, usable=2, load=3.9, environ={}))  # doctest: +ELLIPSIS
    torch backend: torch runs 2 threads per CPU op, but this process may use 2 cores and other work keeps about 2.9 ...
    >>> oversubscription(threads=2, usable=2, load=3.9, environ={"OMP_NUM_THREADS": "2"}) is None
    True
    """
    if threads <= 1 or any(environ.get(name, "").strip() for name in THREAD_VARIABLES):
        return None
    others = max(0.0, load - 1.0)  # this process's own thread is in the load average
    busy = others if others >= 1.0 else 0.0
    if threads + busy <= usable:
        return None
    if threads > usable:
        why = f"this process may use only {usable} cores"
    else:
        why = f"this process may use {usable} cores and other work keeps about {others:.1f} of them busy"
    return (
        f"torch backend: torch runs {threads} threads per CPU op, but {why} (1-minute load average {load:.1f}): "
        "each op waits for threads that the system has put aside, which can make small models run 10 to 80 times "
        "slower. Set OMP_NUM_THREADS=1 (or the number of idle cores) before starting Python, or call "
        "torch.set_num_threads(1) before the first op on the torch backend; either choice also silences this "
        "warning."
    )


def warn_if_oversubscribed() -> None:
    """Warn (once per process) when torch's CPU threads oversubscribe the cores free for them."""
    global _warned
    if _warned:
        return
    import torch

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    message = oversubscription(torch.get_num_threads(), usable_cpus(), load, os.environ)
    if message is not None:
        _warned = True
        warnings.warn(message, ThreadsWarning, stacklevel=2)
