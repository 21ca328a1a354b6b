"""The dask backend on a dask.distributed LocalCluster (127.0.0.1, 2 workers), and docs/dask.md's example.

Each test starts its cluster and stops it; the subprocess runs are bounded by timeouts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

distributed = pytest.importorskip("distributed", reason="the cluster tests need dask.distributed (nox -s dask has it)")

ROOT = Path(__file__).resolve().parents[3]  # the repository: its docs/ and examples/


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True
    )
    client = distributed.Client(cluster, timeout=60)
    try:
        yield client
    finally:
        client.close(timeout=30)
        cluster.close(timeout=30)


@pytest.fixture
def on_cluster(client: Any) -> Iterator[Any]:
    tp.set_backend("dask", chunks={0: 5000}, client=client)
    try:
        yield client
    finally:
        tp.set_backend("dask", chunks=2)


def test_work_runs_on_the_workers_and_results_stay_there(on_cluster: Any) -> None:
    rng = np.random.default_rng(1)
    host = rng.standard_normal((40_000, 8)).astype(np.float32)  # 1.2 MiB: scattered to the workers, not in the graph
    x = tp.tensor(host)
    assert x._data.numblocks == (8, 1)
    y = tp.sum(tp.tanh(x) * 2.0, axis=0)
    tp.persist(y)  # returns at once: the work goes on on the workers
    distributed.wait(y._data)
    held = {k for keys in on_cluster.has_what().values() for k in keys}  # what the workers hold in memory
    assert set(y._data.__dask_keys__()) <= held
    np.testing.assert_allclose(y.numpy(), (np.tanh(host) * 2.0).sum(axis=0), rtol=1e-4)


def test_regression_on_the_cluster_matches_the_numpy_backend(on_cluster: Any) -> None:
    rng = np.random.default_rng(2)
    x_host = rng.standard_normal((50_000, 16), dtype=np.float32)
    y_host = (x_host @ rng.standard_normal((16, 1), dtype=np.float32) + np.float32(0.5)).astype(np.float32)

    def train() -> list[float]:
        x, y = tp.tensor(x_host), tp.tensor(y_host)
        w = tp.variable(np.zeros((16, 1), np.float32))
        b = tp.variable(np.zeros((1,), np.float32))
        opt = tp.train.SGD(0.1)
        return [
            float(opt.minimize(lambda: tp.mean(tp.square(tp.matmul(x, w) + b - y)), [w, b]).item()) for _ in range(5)
        ]

    on_dask = train()
    tp.set_backend("numpy")
    on_numpy = train()
    tp.set_backend("dask")
    np.testing.assert_allclose(on_dask, on_numpy, rtol=1e-5)
    assert on_dask[-1] < on_dask[0] / 2


def test_moving_between_numpy_and_the_cluster(on_cluster: Any) -> None:
    tp.set_backend("numpy")
    a = tp.tensor(np.arange(12_000, dtype=np.float32))
    tp.set_backend("dask")
    b = a.to_backend("dask") * 2.0
    back = b.to_backend("numpy")
    np.testing.assert_array_equal(back.numpy(), np.arange(12_000, dtype=np.float32) * 2.0)


def test_the_dask_guide_example_trains_on_a_local_cluster() -> None:
    """docs/dask.md runs `python examples/dask_regression.py`: 1,000,000 x 64 rows, as the guide says."""
    guide = (ROOT / "docs" / "dask.md").read_text()
    assert "python examples/dask_regression.py" in guide
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "dask_regression.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "data: 1,000,000 x 64 float32" in done.stdout
    assert "losses match the numpy backend's" in done.stdout
    worst = float(re.search(r"largest relative difference of the losses: (\S+)", done.stdout).group(1))  # type: ignore[union-attr]
    assert worst < 1e-4


def run_example(*args: str) -> subprocess.CompletedProcess[str]:
    script = ROOT / "examples" / "dask_regression.py"
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=180, cwd=ROOT, check=False
    )


def test_dask_regression_trains_on_a_running_cluster_and_leaves_it_running() -> None:
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, host="127.0.0.1", protocol="tcp://", dashboard_address=None, processes=False
    ) as cluster:
        address = cluster.scheduler_address
        done = run_example("--scheduler", address, "--rows", "2000", "--features", "4", "--chunk-rows", "500",
                           "--steps", "3")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"cluster: 1 workers at {address} (a running cluster)" in done.stdout
        assert "losses match the numpy backend's" in done.stdout
        with distributed.Client(address, timeout=10) as client:  # still running
            assert len(client.scheduler_info()["workers"]) == 1
