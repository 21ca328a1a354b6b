"""A worker dies holding host data scattered to it: the error says what was lost and what to do; scatter=False survives.

Each test runs a LocalCluster (127.0.0.1, 2 worker processes) in a subprocess bounded by a timeout: it makes a
tensor from a host array, kills (SIGKILL) a worker that holds one of its blocks, waits until the scheduler has
removed that worker, then computes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("distributed", reason="the cluster tests need dask.distributed (nox -s dask has it)")

SCENARIO = """
import json, os, signal, time
import distributed
import numpy as np
import tensorplug as tp

if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                                  processes=True) as cluster, distributed.Client(cluster, timeout=60) as client:
        tp.set_backend("dask", chunks={0: 5000}, client=client, **OPTIONS)
        host = np.arange(40_000 * 8, dtype=np.float32).reshape(40_000, 8)  # 1.2 MiB: above the scatter threshold
        x = tp.tensor(host)
        tp.persist(x)
        distributed.wait(x.raw)
        holders = [workers[0] for workers in client.who_has().values() if workers]
        victim = holders[0]
        os.kill(client.run(os.getpid)[victim], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while victim in client.scheduler_info()["workers"]:  # the scheduler notices the closed connection
            assert time.monotonic() < deadline, "the scheduler never removed the killed worker"
            time.sleep(0.05)
        try:
            total = tp.sum(tp.cast(x, "float64")).item()
            print(json.dumps({"value": total, "expected": float(host.sum(dtype=np.float64))}))
        except Exception as exc:
            print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
"""


def run_scenario(**options: object) -> dict[str, object]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    code = textwrap.dedent(SCENARIO).replace("**OPTIONS", f"**{options!r}")
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_losing_scattered_data_with_a_worker_says_what_happened_and_what_to_do() -> None:
    result = run_scenario()
    assert result.get("error") == "BackendError", result
    message = str(result["message"])
    for part in (
        "dask backend: computing float64[] failed: the cluster lost data it cannot compute again",
        "lost dependencies",
        "scattered to the workers",
        "a worker that died or left took its blocks with it",
        "Rerun: make those tensors again",
        "scatter=False",
        "tp.persist(x)",
    ):
        assert part in message, (part, message)
    assert "Fix the values reaching that op" not in message  # not a kernel's check: nothing is wrong with the values


def test_with_scatter_off_and_persisted_the_cluster_recomputes_what_a_lost_worker_held() -> None:
    result = run_scenario(scatter=False)
    assert "error" not in result, result
    assert result["value"] == result["expected"]
