"""Linear regression on 1,000,000 x 64 float32 rows with tp.train.SGD, on a Dask cluster (local or running).

The same program runs on the numpy backend and on the dask backend; only
``tp.set_backend`` differs. The data is split into blocks of rows
(``--chunk-rows``), sent to the cluster's workers once, and each training
step (a ``tp.function``: forward, gradients and the SGD update) becomes one
dask graph, computed on the workers and persisted, so the next step starts
from its results. At the end the numpy backend trains on the same data from
the same start, and the two loss curves are compared.

    pip install ./core ./plugins/backend-numpy "./plugins/backend-dask[distributed]"
    python examples/dask_regression.py                # 1,000,000 x 64, 2 workers on 127.0.0.1
    python examples/dask_regression.py --rows 200000 --steps 5
    python examples/dask_regression.py --scheduler tcp://10.0.0.5:8786   # a cluster that is already running

Without ``--scheduler``, the script starts its own cluster, which listens on
127.0.0.1 only and is shut down at the end; with it, the script connects to
that scheduler and leaves the cluster running.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

import tensorplug as tp


def make_data(rows: int, features: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows x features standard normal inputs; targets from a random linear model plus noise, as float32."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features), dtype=np.float32)
    true_w = rng.standard_normal((features, 1), dtype=np.float32)
    y = x @ true_w + np.float32(0.5) + np.float32(0.1) * rng.standard_normal((rows, 1), dtype=np.float32)
    return x, y


def train(x_host: np.ndarray, y_host: np.ndarray, steps: int, lr: float) -> tuple[list[float], float]:
    """SGD on the mean squared error from zero weights, on the active backend: the losses and seconds per step."""
    x, y = tp.tensor(x_host), tp.tensor(y_host)
    w = tp.variable(tp.initializers.zeros((x_host.shape[1], 1)), name="w")  # on the active backend from the start
    b = tp.variable(tp.initializers.zeros((1,)), name="b")
    opt = tp.train.SGD(lr)

    @tp.function
    def step(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        return opt.minimize(lambda: tp.mean(tp.square(tp.matmul(x, w) + b - y)), [w, b])

    losses = [step(x, y)]  # the first call traces
    start = time.perf_counter()
    for _ in range(steps - 1):
        losses.append(step(x, y))
    values = [float(loss.item()) for loss in losses]  # reading the losses waits for the last step
    seconds = (time.perf_counter() - start) / max(steps - 1, 1)
    return values, seconds


@contextlib.contextmanager
def cluster_client(scheduler: str | None, workers: int) -> Iterator[tuple[Any, str]]:
    """A dask.distributed Client and how to describe its cluster: of the running cluster at ``scheduler``, or of
    a local cluster of ``workers`` processes started here (and shut down on leaving)."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        with Client(scheduler) as client:  # closing the client leaves the cluster running
            count = len(client.scheduler_info()["workers"])
            yield client, f"{count} workers at {client.scheduler.address} (a running cluster)"
        return
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client, f"{workers} workers at {cluster.scheduler_address} (started here)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of training data (default: %(default)s)")
    parser.add_argument("--features", type=int, default=64, help="features (columns) per row (default: %(default)s)")
    parser.add_argument("--chunk-rows", type=int, default=100_000, help="rows per dask chunk (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=20, help="SGD steps, each one dask graph (default: %(default)s)")
    parser.add_argument("--lr", type=float, default=0.1, help="SGD's learning rate (default: %(default)s)")
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="worker processes of the local cluster (default: %(default)s; not used with --scheduler)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated data (default: %(default)s)")
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="the address of a running cluster's scheduler, such as tcp://10.0.0.5:8786 (default: start a local "
        "cluster of --workers processes)",
    )
    args = parser.parse_args()

    x, y = make_data(args.rows, args.features, args.seed)
    print(
        f"data: {args.rows:,} x {args.features} float32 ({x.nbytes / 2**20:.0f} MiB) "
        f"in chunks of {args.chunk_rows:,} rows"
    )
    with cluster_client(args.scheduler, args.workers) as (client, described):
        print(f"cluster: {described}")
        workers = len(client.scheduler_info()["workers"])
        tp.set_backend("dask", chunks={0: args.chunk_rows}, client=client)
        dask_losses, dask_seconds = train(x, y, args.steps, args.lr)
    tp.set_backend("numpy")
    numpy_losses, numpy_seconds = train(x, y, args.steps, args.lr)

    for i in sorted({0, 1, args.steps // 2, args.steps - 1}):
        print(f"step {i:3d}: loss {dask_losses[i]:.6f} on dask, {numpy_losses[i]:.6f} on numpy")
    worst = max(abs(a - b) / abs(b) for a, b in zip(dask_losses, numpy_losses, strict=True))
    print(f"seconds per step: {dask_seconds:.3f} on dask ({workers} workers), {numpy_seconds:.3f} on numpy")
    print(f"largest relative difference of the losses: {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("the dask and numpy losses differ by more than float32 summation order explains")
    print("losses match the numpy backend's")


if __name__ == "__main__":
    main()
