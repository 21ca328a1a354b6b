"""Eager vs tp.function (traced replay) vs hand-written NumPy, on the bench's own workloads and references.

    python benchmarks/function_vs_eager.py [--repeats N] [--seconds S]

Runs on the numpy backend: (a) the gradient of sum(tanh(x*w+b)) on 1-element tensors, (b) an SGD step of a
64-32-10 MLP on a batch of 32, (c) of a 784-256-256-10 MLP on a batch of 128. For each, the reference (NumPy by
hand, from tensorplug._tools._bench.references), the eager tensorplug step and the traced one (``tp.function`` of the
same step; "traced plain" with ``lower=False``, each kernel called in turn, "traced lowered" with the numpy
backend's lowering: direct NumPy calls and buffer reuse) are timed in one process, their repeats interleaved,
as ``tensorplug bench`` does; the table shows the minimum and the median seconds per call over the repeats,
and each one's ratio to the reference.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import tensorplug as tp
from tensorplug._tools._bench.references import NumpyReference, make_problem, one_element
from tensorplug._tools._bench.timing import Workload
from tensorplug._tools._bench.workloads import MLPS, SMALL_GRAD, TensorplugMLP, restarted


def interleaved(workloads: dict[str, Workload], seconds: float, repeats: int) -> dict[str, list[float]]:
    for w in workloads.values():
        w.calibrate(seconds)
    times: dict[str, list[float]] = {name: [] for name in workloads}
    for _ in range(repeats):
        for name, w in workloads.items():
            times[name].append(w.run(w.number))
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=0.2)
    options = parser.parse_args()
    tp.set_backend("numpy")
    reference = NumpyReference()
    rows = []

    x_np, w_np, b_np = one_element(0.3), one_element(-1.2), one_element(0.4)
    x, w, b = tp.tensor(x_np), tp.tensor(w_np), tp.tensor(b_np)
    df = tp.grad(lambda x: tp.sum(tp.tanh(x * w + b)))
    traced_df = tp.function(df)
    plain_df = tp.function(df, lower=False)
    timed, expected = reference.small_grad(x_np, w_np, b_np)
    assert traced_df(x).numpy().tobytes() == df(x).numpy().tobytes() == plain_df(x).numpy().tobytes()
    assert np.allclose(traced_df(x).numpy(), expected, rtol=1e-5)
    workloads = {
        timed.name: timed.workload,
        "eager": Workload("df(x)", {"df": df, "x": x}),
        "traced plain": Workload("df(x)", {"df": plain_df, "x": x}),
        "traced lowered": Workload("df(x)", {"df": traced_df, "x": x}),
    }
    rows.append((SMALL_GRAD, interleaved(workloads, options.seconds, options.repeats)))

    for workload, (sizes, batch) in MLPS.items():
        problem = make_problem(sizes, batch)
        by_hand = reference.mlp(problem)
        eager = TensorplugMLP(problem, f"eager-{batch}")
        traced_model = TensorplugMLP(problem, f"traced-{batch}")
        traced_step = tp.function(traced_model.step)
        plain_model = TensorplugMLP(problem, f"plain-{batch}")
        plain_step = tp.function(plain_model.step, lower=False)
        eager.reset()
        traced_model.reset()
        plain_model.reset()
        for _ in range(2):
            expected = eager.step().numpy().tobytes()
            assert traced_step().numpy().tobytes() == expected == plain_step().numpy().tobytes()
        assert traced_step.trace_count == plain_step.trace_count == 1
        workloads = {
            reference.mlp_name: Workload("m.step()", {"m": by_hand}, around=lambda m=by_hand: restarted(m)),
            "eager": Workload("m.step()", {"m": eager}, around=lambda m=eager: restarted(m)),
            "traced plain": Workload("s()", {"s": plain_step}, around=lambda m=plain_model: restarted(m)),
            "traced lowered": Workload("s()", {"s": traced_step}, around=lambda m=traced_model: restarted(m)),
        }
        rows.append((workload, interleaved(workloads, options.seconds, options.repeats)))

    print(f"{'workload':44} {'what':16} {'min us':>10} {'median us':>10} {'min ratio':>10} {'median ratio':>13}")
    for workload, times in rows:
        names = list(times)
        ref_min, ref_median = min(times[names[0]]), statistics.median(times[names[0]])
        for name in names:
            lo, med = min(times[name]), statistics.median(times[name])
            figures = f"{lo * 1e6:10.2f} {med * 1e6:10.2f} {lo / ref_min:10.2f} {med / ref_median:13.2f}"
            print(f"{workload:44} {name:16} {figures}")


if __name__ == "__main__":
    main()
