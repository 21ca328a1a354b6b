"""Timing: a statement run in a ``timeit`` loop, calibrated to a duration; two workloads timed side by side.

Each workload is timed twice in the same process, once for a reference and
once for tensorplug, with the repeats of the two interleaved so that drift in
the machine's speed affects both alike. A repeat runs the workload many times
in a loop (as ``timeit`` does). The repeats come in rounds; each side's time
is the smallest of its per-round medians ("min of medians"): other programs
on a shared machine only ever add time, so the quietest round is the best
estimate of the workload's own cost, and the median inside a round keeps one
lucky or unlucky repeat from deciding it. The garbage collector stays
enabled, as it is in real programs.
"""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """How long to time: seconds per repeat (the loop count is calibrated to it), repeats and import-time runs
    per round, rounds, and whether the results are judged against their targets at all."""

    seconds_per_repeat: float
    repeats: int
    import_runs: int
    rounds: int = 1
    judged: bool = True


FULL = Settings(seconds_per_repeat=0.1, repeats=5, rounds=5, import_runs=5)
# A smoke test: times too short on a shared machine to tell a met target from a missed one, so nothing is judged.
QUICK = Settings(seconds_per_repeat=0.002, repeats=3, rounds=1, import_runs=3, judged=False)


# The libraries' thread counts: OpenMP (torch), OpenBLAS (NumPy's usual BLAS), MKL.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def thread_setting() -> dict[str, str]:
    """The thread counts the timing processes run with: the user's where any is set, else one for every library.

    One thread keeps the figures from depending on what else the machine
    runs: a thread pool on a busy machine waits for threads that the system
    has put aside, for the reference and tensorplug alike, which drowns the
    overhead being measured (the big MLP step's ratio was 1.0 in some runs
    and 1.6 in others on two shared cores, and 1.4-1.7 in every run with one
    thread). ``OMP_NUM_THREADS=4 tensorplug bench`` times with four.
    """
    chosen = {name: os.environ[name] for name in THREAD_VARIABLES if os.environ.get(name, "").strip()}
    return chosen or dict.fromkeys(THREAD_VARIABLES, "1")


class Workload:
    """A statement timed in a ``timeit`` loop, with an optional context opened afresh around each repeat.

    The statement is a string compiled by ``timeit`` so that no extra Python
    call per iteration inflates sub-microsecond timings. ``calls`` says how
    many calls of the measured operation one execution of the statement makes.

    >>> w = Workload("x + 1", {"x": 1})
    >>> w.calibrate(0.001)
    >>> w.run(w.number) > 0
    True
    """

    def __init__(
        self,
        stmt: str,
        namespace: dict[str, object],
        around: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
        calls: int = 1,
    ) -> None:
        self.timer = timeit.Timer(stmt, setup="gc.enable()", globals={"gc": gc, **namespace})
        self.around = around
        self.calls = calls
        self.number = 1

    def run(self, number: int) -> float:
        """Seconds per call, for one repeat of ``number`` executions of the statement."""
        with self.around():
            return self.timer.timeit(number) / (number * self.calls)

    def calibrate(self, seconds: float) -> None:
        """Pick the loop count so that one repeat lasts about ``seconds`` (at least one execution)."""
        self.run(1)  # warm up caches (kernel tables, BLAS buffers)
        number = 1
        while True:
            elapsed = self.run(number) * number * self.calls
            if elapsed >= seconds or number >= 10_000_000:
                break
            number = max(number * 2, int(number * seconds / max(elapsed, 1e-9) * 1.1))
        self.number = number


def compare(reference: Workload, candidate: Workload, settings: Settings) -> tuple[float, float]:
    """Seconds per call of each workload, their repeats interleaved: the smallest of the per-round medians."""
    reference.calibrate(settings.seconds_per_repeat)
    candidate.calibrate(settings.seconds_per_repeat)
    return min_of_medians(
        lambda: reference.run(reference.number),
        lambda: candidate.run(candidate.number),
        settings.rounds,
        settings.repeats,
    )


def min_of_medians(
    reference: Callable[[], float], candidate: Callable[[], float], rounds: int, repeats: int
) -> tuple[float, float]:
    """Time both ``repeats`` times per round, interleaved; each one's smallest per-round median."""
    reference_medians, candidate_medians = [], []
    for _ in range(rounds):
        reference_times, candidate_times = [], []
        for _ in range(repeats):
            reference_times.append(reference())
            candidate_times.append(candidate())
        reference_medians.append(statistics.median(reference_times))
        candidate_medians.append(statistics.median(candidate_times))
    return min(reference_medians), min(candidate_medians)


def compare_processes(reference: str, candidate: str, settings: Settings) -> tuple[float, float]:
    """Whole-process seconds of ``python -c CODE`` for each of two snippets, runs interleaved (min of medians).

    Bytecode caching is allowed (PYTHONDONTWRITEBYTECODE is dropped) and one
    warm-up run of each comes first, as an installed package is used: with no
    .pyc files, compiling the sources would dominate the figure.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(thread_setting())
    _time_process(reference, env)
    _time_process(candidate, env)
    return min_of_medians(
        lambda: _time_process(reference, env),
        lambda: _time_process(candidate, env),
        settings.rounds,
        settings.import_runs,
    )


def _time_process(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start
