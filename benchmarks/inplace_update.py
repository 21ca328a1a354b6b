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

from tensorplug._tools._bench.references import NumpyMLP, make_problem
from tensorplug._tools._bench.workloads import TensorplugMLP


class NewArraysMLP(NumpyMLP):
    """The hand-written step, with the update written as tensorplug's must be: ``w = w - lr * g``."""

    def update(self, grads: list[np.ndarray]) -> None:
        self.params = [p - self.learning_rate * g for p, g in zip(self.params, grads, strict=True)]


def main(argv: list[str]) -> None:
    sizes = [int(s) for s in argv[0].split(",")] if argv else [784, 256, 256, 10]
    batch = int(argv[1]) if len(argv) > 1 else 128
    problem = make_problem(sizes, batch)
    steps = {
        "NumPy by hand, in place (w -= lr * g)": NumpyMLP(problem).step,
        "NumPy by hand, new arrays (w = w - lr * g)": NewArraysMLP(problem).step,
        "tensorplug (numpy backend)": TensorplugMLP(problem, "inplace-check").step,
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
