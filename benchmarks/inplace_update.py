"""How much of the big-MLP gap is immutability: NumPy by hand, updating the weights in place or not.

tensorplug's tensors are immutable, so an SGD step makes new weight arrays
(``w = w - lr * g``, as TensorFlow.js does) where the hand-written NumPy
reference of ``tensorplug bench`` updates them in place (``w -= lr * g``).
This times both NumPy versions of the step (same problem as the benchmark)
and tensorplug's, interleaved, and prints medians and ratios::

    python benchmarks/inplace_update.py            # 784-256-256-10, batch 128
    python benchmarks/inplace_update.py 64,32,10 32
"""

from __future__ import annotations

import statistics
import sys
import timeit

import numpy as np

from tensorplug._bench.references import MLPProblem, NumpyMLP, make_problem
from tensorplug._bench.workloads import TensorplugMLP


def out_of_place_step(model: NumpyMLP, problem: MLPProblem) -> None:
    """The hand-written step of NumpyMLP, with ``w = w - lr * g`` for the update."""
    params = model.params
    layers = len(params) // 2
    inputs, pre_activations = [], []
    h = problem.x
    for i in range(layers):
        inputs.append(h)
        z = h @ params[2 * i] + params[2 * i + 1]
        pre_activations.append(z)
        h = np.maximum(z, 0) if i < layers - 1 else z
    shifted = h - h.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    dz = (np.exp(log_probs) - problem.onehot) / np.float32(h.shape[0])
    grads: list[np.ndarray] = [dz] * len(params)
    for i in reversed(range(layers)):
        grads[2 * i] = inputs[i].T @ dz
        grads[2 * i + 1] = dz.sum(axis=0)
        if i > 0:
            dz = (dz @ params[2 * i].T) * (pre_activations[i - 1] > 0)
    rate = np.float32(problem.learning_rate)
    model.params = [p - rate * g for p, g in zip(params, grads, strict=True)]


def main(argv: list[str]) -> None:
    sizes = [int(s) for s in argv[0].split(",")] if argv else [784, 256, 256, 10]
    batch = int(argv[1]) if len(argv) > 1 else 128
    problem = make_problem(sizes, batch)
    in_place, out_of_place, with_tp = NumpyMLP(problem), NumpyMLP(problem), TensorplugMLP(problem, "inplace-check")
    steps = {
        "NumPy by hand, in place (w -= lr * g)": in_place.step,
        "NumPy by hand, new arrays (w = w - lr * g)": lambda: out_of_place_step(out_of_place, problem),
        "tensorplug (numpy backend)": with_tp.step,
    }
    number = max(1, round(0.05 / min(timeit.timeit(f, number=3) / 3 for f in steps.values())))
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(15):  # interleaved repeats
        for name, step in steps.items():
            times[name].append(timeit.timeit(step, number=number) / number)
    base = statistics.median(times[next(iter(steps))])
    print(f"MLP {'-'.join(map(str, sizes))}, batch {batch}: median of 15 repeats of {number} steps")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:45s} {median * 1e3:8.3f} ms  {median / base:5.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
