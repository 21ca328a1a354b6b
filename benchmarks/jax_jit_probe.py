"""JAX jit beside the traced rows of issue 14: the same three workloads, JAX on the CPU against NumPy by hand.

    pip install jax jaxlib    # optional (about 600 MB); not a dependency of any tensorplug distribution
    pip install ./core && python benchmarks/jax_jit_probe.py

The gradient of sum(tanh(x*w+b)) on 1-element float32 arrays (``jax.jit(jax.grad(...))``, and JAX eager:
``jax.grad`` without jit), and one SGD step of
the 64-32-10 (batch 32) and 784-256-256-10 (batch 128) MLPs (``jax.jit`` of value_and_grad plus the update,
weights passed in and returned, as JAX programs are written), on the problems and NumPy references of
``tensorplug bench`` (tensorplug._bench.references), checked to agree first. Repeats are interleaved with the
reference's; the minimum and median per call are printed, and each ratio to NumPy by hand.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tensorplug._bench.references import NumpyMLP, make_problem, numpy_small_grad, one_element


def interleaved(fs: dict[str, Callable[[], Any]], calls: int, repeats: int = 15) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in fs}
    for f in fs.values():
        for _ in range(calls // 10 + 1):
            f()
    for _ in range(repeats):
        for name, f in fs.items():
            start = time.perf_counter()
            for _ in range(calls):
                f()
            times[name].append((time.perf_counter() - start) / calls)
    return times


def report(workload: str, times: dict[str, list[float]]) -> None:
    reference = next(iter(times))
    ref_min, ref_median = min(times[reference]), statistics.median(times[reference])
    for name, ts in times.items():
        lo, med = min(ts), statistics.median(ts)
        print(f"{workload:40} {name:16} min {lo * 1e6:9.2f} us  median {med * 1e6:9.2f} us  "
              f"ratio min {lo / ref_min:5.2f}x  median {med / ref_median:5.2f}x")  # fmt: skip


def main() -> None:
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}")
    x, w, b = one_element(0.3), one_element(-1.2), one_element(0.4)
    eager_df = jax.grad(lambda x: jnp.sum(jnp.tanh(x * w + b)))
    df = jax.jit(eager_df)
    xj = jnp.asarray(x)
    assert np.allclose(np.asarray(df(xj)), numpy_small_grad(x, w, b)[1], rtol=1e-5)
    assert np.allclose(np.asarray(eager_df(xj)), numpy_small_grad(x, w, b)[1], rtol=1e-5)
    times = interleaved(
        {
            "NumPy by hand": lambda: numpy_small_grad(x, w, b),
            "jax.jit": lambda: df(xj).block_until_ready(),
            "JAX eager": lambda: eager_df(xj).block_until_ready(),
        },
        500,
    )
    report("grad of sum(tanh(x*w+b)), 1 element", times)

    for sizes, batch in (([64, 32, 10], 32), ([784, 256, 256, 10], 128)):
        report(f"MLP {'-'.join(map(str, sizes))} batch {batch}, SGD step", mlp_times(sizes, batch))


def mlp_times(sizes: list[int], batch: int) -> dict[str, list[float]]:
    """One SGD step of the MLP, NumPy by hand and jax.jit, checked to agree, then timed interleaved."""
    problem = make_problem(sizes, batch)
    by_hand = NumpyMLP(problem)
    lr = problem.learning_rate

    def loss(params: list[Any], x: Any, onehot: Any) -> Any:
        h = x
        layers = len(params) // 2
        for i in range(layers):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i < layers - 1:
                h = jax.nn.relu(h)
        return -jnp.sum(jax.nn.log_softmax(h) * onehot) / h.shape[0]

    @jax.jit
    def step(params: list[Any], x: Any, onehot: Any) -> tuple[Any, list[Any]]:
        value, grads = jax.value_and_grad(loss)(params, x, onehot)
        return value, [p - lr * g for p, g in zip(params, grads, strict=True)]

    xj, onehot = jnp.asarray(problem.x), jnp.asarray(problem.onehot)
    initial = [jnp.asarray(p) for p in problem.weights]
    value, updated = step(initial, xj, onehot)
    expected_loss, expected_weights = by_hand.loss_and_weights()
    assert np.isclose(float(value), expected_loss, rtol=1e-4)
    for got, expected in zip(updated, expected_weights, strict=True):
        assert np.allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-6)
    state = {"params": initial}

    def jax_step() -> None:
        value, state["params"] = step(state["params"], xj, onehot)
        value.block_until_ready()

    return interleaved({"NumPy by hand": by_hand.step, "jax.jit": jax_step}, 200 if batch == 32 else 20)


if __name__ == "__main__":
    main()
