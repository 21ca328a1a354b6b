"""torch's CPU threads against the cores free for them: the backend warns once when they oversubscribe the machine.

The machine's state (affinity, cgroup quota, load average, torch's thread
count) is made up here, so that the tests do not depend on how busy the
machine running them is.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from tensorplug_torch import ThreadsWarning, _threads
from tensorplug_torch._backend import TorchBackend
from tensorplug_torch._threads import oversubscription, usable_cpus


@pytest.mark.parametrize(
    ("threads", "usable", "load", "environ", "warns"),
    [
        (2, 2, 0.3, {}, False),  # an idle 2-core machine: torch's default fits
        (2, 2, 1.8, {}, False),  # less than one core's worth of other work
        (2, 2, 3.9, {}, True),  # other work keeps both cores busy
        (1, 2, 3.9, {}, False),  # one thread has nobody to wait for
        (2, 2, 3.9, {"OMP_NUM_THREADS": "2"}, False),  # the user chose
        (2, 2, 3.9, {"MKL_NUM_THREADS": "1"}, False),
        (2, 2, 3.9, {"OMP_NUM_THREADS": " "}, True),  # blank is not a choice
        (8, 2, 0.0, {}, True),  # more threads than the process may use (a container's quota)
        (16, 64, 40.0, {}, False),  # a big machine with room left
    ],
)
def test_oversubscription_is_judged_from_threads_cores_and_load(
    threads: int, usable: int, load: float, environ: dict[str, str], warns: bool
) -> None:
    message = oversubscription(threads, usable, load, environ)
    assert (message is not None) is warns
    if message is not None:
        assert message.startswith(f"torch backend: torch runs {threads} threads per CPU op, but ")
        assert "OMP_NUM_THREADS=1" in message
        assert "torch.set_num_threads(1)" in message


def test_the_message_says_what_the_machine_does() -> None:
    busy = oversubscription(2, 2, 3.9, {})
    assert busy is not None
    assert (
        "this process may use 2 cores and other work keeps about 2.9 of them busy (1-minute load average 3.9)" in busy
    )
    quota = oversubscription(8, 2, 0.0, {})
    assert quota is not None
    assert "this process may use only 2 cores (1-minute load average 0.0)" in quota


def test_usable_cpus_is_the_affinity_capped_by_the_cgroup_quota(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    cpu_max = tmp_path / "cpu.max"
    monkeypatch.setattr(_threads, "CGROUP_CPU_MAX", cpu_max)
    assert usable_cpus() == 4  # no cgroup file
    cpu_max.write_text("max 100000\n", encoding="ascii")
    assert usable_cpus() == 4  # no quota
    cpu_max.write_text("150000 100000\n", encoding="ascii")
    assert usable_cpus() == 2  # 1.5 cores' worth of time: two threads can run
    cpu_max.write_text("800000 100000\n", encoding="ascii")
    assert usable_cpus() == 4  # a quota above the affinity changes nothing


@pytest.fixture
def busy_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 usable cores, a load average of 3.9, torch at 2 threads, no thread variable set, no warning given yet."""
    monkeypatch.setattr(_threads, "usable_cpus", lambda: 2)
    monkeypatch.setattr(_threads.os, "getloadavg", lambda: (3.9, 3.0, 2.0))
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    for name in _threads.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_threads, "_warned", False)


@pytest.mark.usefixtures("busy_machine")
def test_the_cpu_backend_warns_once_per_process() -> None:
    with pytest.warns(ThreadsWarning, match="OMP_NUM_THREADS=1") as caught:
        TorchBackend("cpu")
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TorchBackend("cpu")  # a second backend object: no second warning


@pytest.mark.usefixtures("busy_machine")
def test_setting_omp_num_threads_silences_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TorchBackend("cpu")


@pytest.mark.usefixtures("busy_machine")
def test_torch_set_num_threads_one_silences_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)  # what torch.set_num_threads(1) leaves
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TorchBackend("cpu")


def test_the_threads_module_is_imported_when_first_used_not_by_import_tensorplug() -> None:
    code = (
        "import sys, tensorplug\n"
        "print('tensorplug_torch._threads' in sys.modules, 'pathlib' in sys.modules)\n"
        "from tensorplug_torch import ThreadsWarning\n"
        "print(ThreadsWarning.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "tensorplug_torch._threads"]
