"""The regression step on the dask backend against the same step written by hand with dask.array, in one run.

    python benchmarks/dask_regression.py                         # 1,000,000 x 64 float32, LocalCluster, 2 workers
    python benchmarks/dask_regression.py --scheduler threads     # dask's local threaded scheduler instead
    python benchmarks/dask_regression.py --rows 200000 --repeats 5

One SGD step of linear regression (mean squared error, gradients, update of w and b, all persisted together)
is timed four ways, interleaved (the order rotates from round to round), as the median of ``--repeats`` rounds
of ``--steps`` steps each:
- ``hand``: dask.array by hand (the gradients written out: X.T @ (2 (Xw + b - y) / n)), then one persist;
- ``tp eager``: ``opt.minimize`` on the dask backend (the optimizer persists w, b and the loss together);
- ``tp traced``: the same inside ``tp.function`` (each replay builds the step's graph and persists it);
- ``numpy``: the numpy backend, eager, in this process (for scale: no cluster, no chunks).
Each step ends when its results are in memory (``wait`` on a cluster). It also counts the tasks of one step's
graph (as submitted, and after dask's optimisation), and the tasks a second read of the loss runs (0 when the
step's results are persisted rather than recomputed per access).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import dask
import dask.array as da
import numpy as np

import tensorplug as tp


def _wait(client: Any, arrays: list[Any]) -> None:
    if client is not None:
        from distributed import wait

        wait([a for a in arrays])


def _tasks(arrays: list[Any], optimize: bool) -> int:
    """The tasks (keys) of the one graph that computing ``arrays`` together submits."""
    from dask.base import collections_to_expr

    return len(collections_to_expr(arrays, optimize_graph=optimize).__dask_graph__())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=10, help="steps per timed round")
    parser.add_argument("--repeats", type=int, default=7, help="rounds per variant (interleaved); the median is kept")
    parser.add_argument("--scheduler", choices=["cluster", "threads"], default="cluster")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    x_host = rng.standard_normal((args.rows, args.features), dtype=np.float32)
    y_host = (x_host @ rng.standard_normal((args.features, 1), dtype=np.float32) + np.float32(0.5)).astype(np.float32)
    lr = np.float32(0.05)

    client = cluster = None
    if args.scheduler == "cluster":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True
        )
        client = Client(cluster)
    try:
        tp.set_backend("dask", chunks={0: args.chunk_rows}, client=client)
        backend = tp.backend()
        x, y = tp.tensor(x_host), tp.tensor(y_host)  # on a cluster: scattered to the workers once
        tp.persist(x, y)
        _wait(client, [x._data, y._data])
        xd, yd = x._data, y._data  # the hand-written step uses the same chunks in the same places
        n = np.float32(args.rows)

        # -- by hand ------------------------------------------------------------------------------------------------
        hand_state: dict[str, Any] = {
            "w": da.zeros((args.features, 1), dtype=np.float32, chunks=-1),
            "b": da.zeros((1,), dtype=np.float32, chunks=-1),
        }

        def hand_graph() -> list[Any]:
            w, b = hand_state["w"], hand_state["b"]
            err = xd @ w + b - yd
            loss = (err * err).mean(dtype=np.float32)
            d = err * (np.float32(2.0) / n)
            gw = xd.T @ d
            gb = d.sum(axis=0, dtype=np.float32)
            return [w - lr * gw, b - lr * gb, loss]

        def hand_step() -> None:
            graph = hand_graph()
            done = client.persist(graph) if client is not None else list(dask.persist(*graph))
            hand_state["w"], hand_state["b"], hand_state["loss"] = done
            _wait(client, done)

        # -- tensorplug ---------------------------------------------------------------------------------------------
        def make_tp(traced: bool) -> tuple[Callable[[], None], dict[str, Any]]:
            w = tp.variable(np.zeros((args.features, 1), np.float32))
            b = tp.variable(np.zeros((1,), np.float32))
            opt = tp.train.SGD(float(lr))
            state: dict[str, Any] = {"w": w, "b": b}

            def step(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
                return opt.minimize(lambda: tp.mean(tp.square(tp.matmul(x, w) + b - y)), [w, b])

            run = tp.function(step) if traced else step

            def timed() -> None:
                loss = run(x, y)
                state["loss"] = loss
                _wait(client, [w._data, b._data, loss._data])

            return timed, state

        tp_eager, _ = make_tp(False)
        tp_traced, traced_state = make_tp(True)

        tp.set_backend("numpy")
        xn, yn = tp.tensor(x_host), tp.tensor(y_host)
        wn = tp.variable(np.zeros((args.features, 1), np.float32))
        bn = tp.variable(np.zeros((1,), np.float32))
        opt_n = tp.train.SGD(float(lr))

        def numpy_step() -> None:
            opt_n.minimize(lambda: tp.mean(tp.square(tp.matmul(xn, wn) + bn - yn)), [wn, bn])

        tp.set_backend("dask")
        variants: dict[str, Callable[[], None]] = {
            "hand": hand_step,
            "tp eager": tp_eager,
            "tp traced": tp_traced,
        }
        for fn in variants.values():  # warm up: tracing, the workers' imports
            fn()
        numpy_step()
        times: dict[str, list[float]] = {name: [] for name in [*variants, "numpy"]}
        names = list(variants)
        for round_ in range(args.repeats):
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:  # each variant first in turn
                fn = variants[name]
                start = time.perf_counter()
                for _ in range(args.steps):
                    fn()
                times[name].append((time.perf_counter() - start) / args.steps)
            tp.set_backend("numpy")
            start = time.perf_counter()
            for _ in range(args.steps):
                numpy_step()
            times["numpy"].append((time.perf_counter() - start) / args.steps)
            tp.set_backend("dask")

        # -- the graph of one step ------------------------------------------------------------------------------------
        submitted: list[list[Any]] = []
        real_persist = backend.persist

        def counting_persist(raws: Any) -> list[Any]:
            submitted.append(list(raws))
            return real_persist(raws)

        backend.persist = counting_persist  # type: ignore[method-assign]
        try:
            tp_traced()
            traced_graph = submitted[-1]
            tp_eager()
            eager_graph = submitted[-1]
        finally:
            del backend.persist
        hand = hand_graph()

        executed = 0

        def count(key: Any, dsk: Any, state: Any) -> None:
            nonlocal executed
            executed += 1

        from dask.callbacks import Callback

        loss = traced_state["loss"]
        loss.item()
        with Callback(pretask=count):
            second = loss.item()
        held = len(loss._data.__dask_graph__())  # 1: the persisted result, not the step's tasks

        # -- report -------------------------------------------------------------------------------------------------
        hand_median = statistics.median(times["hand"])
        where = f"LocalCluster, {args.workers} workers (127.0.0.1)" if client is not None else "threaded scheduler"
        print(
            f"regression step, {args.rows:,} x {args.features} float32 in chunks of {args.chunk_rows:,} rows, "
            f"{where}; median of {args.repeats} rounds of {args.steps} steps"
        )
        print(f"{'variant':<12} {'ms/step':>9} {'vs hand':>8}  (min-max ms)")
        for name, values in times.items():
            median = statistics.median(values)
            print(
                f"{name:<12} {median * 1e3:9.1f} {median / hand_median:7.2f}x  "
                f"({min(values) * 1e3:.1f}-{max(values) * 1e3:.1f})"
            )
        print("tasks in one step's graph (as built / after dask's optimisation):")
        print(f"  hand       {_tasks(hand, False):5d} / {_tasks(hand, True):5d}")
        print(f"  tp eager   {_tasks(eager_graph, False):5d} / {_tasks(eager_graph, True):5d}")
        print(f"  tp traced  {_tasks(traced_graph, False):5d} / {_tasks(traced_graph, True):5d}")
        ran = f"ran {executed} task(s) (fetching the persisted chunk, and dask's finalize)" if client is None else ""
        print(
            f"after a step, the loss's graph holds {held} task(s), the persisted result, not the step's "
            f"{_tasks(traced_graph, True)}: reading it again {ran or 'fetches that result'} (loss {second:.6f})"
        )
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
