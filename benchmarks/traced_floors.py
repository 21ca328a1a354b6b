"""How close the traced MLP steps on numpy are to their floor: the step's matrix products alone, in one run.

A traced SGD step (``tp.function``, numpy backend) makes the NumPy calls the
hand-written step makes, and fuses what NumPy can fuse without a compiler
(the relu gradient as one masked multiply, chains of ufuncs over one
temporary, results written into dead buffers). What no NumPy program can
avoid is the matrix products; what a compiler (``jax.jit``: XLA) can avoid and
NumPy cannot is a pass over memory for each elementwise op. This times,
interleaved in one process:

- the step written by hand in NumPy (the bench's reference);
- the same step through ``tp.function``;
- the step written in NumPy with every buffer in place: the same arithmetic,
  each result written into a buffer allocated once (``out=``), the bias add
  into the product's output, ReLU in place, its gradient as one masked
  multiply, the update in place (the least a NumPy program of the step
  costs that keeps one ufunc per elementwise op);
- the step's matrix products alone: the same ``np.matmul`` calls on the same
  shapes and memory orders, nothing else (the floor of any NumPy program of the
  step);
- ``jax.jit`` of the step, when JAX is installed.

and prints each against the hand-written step, with what is left for the
elementwise work.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/traced_floors.py   # ~30 s
    python benchmarks/traced_floors.py --quick    # a smoke run (the tests use it); its figures mean little
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one BLAS thread, as tensorplug bench times

import numpy as np  # noqa: E402  (after the thread settings)

import tensorplug as tp  # noqa: E402
from tensorplug._tools._bench.blas import probe  # noqa: E402
from tensorplug._tools._bench.references import JaxMLP, MLPProblem, NumpyMLP, jax_available, make_problem  # noqa: E402
from tensorplug._tools._bench.workloads import TracedMLP  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import floors  # noqa: E402


def matmuls_only(problem: MLPProblem) -> Callable[[], Any]:
    """The hand-written step's matrix products, on arrays of its shapes and memory orders, and nothing else."""
    params = [p.copy() for p in problem.weights]
    layers = len(params) // 2
    inputs, h = [], problem.x
    for i in range(layers):
        inputs.append(h)
        h = np.maximum(h @ params[2 * i] + params[2 * i + 1], 0)
    dz_last = np.ones_like(h)

    def run() -> None:
        for i in range(layers):
            np.matmul(inputs[i], params[2 * i])
        dz = dz_last
        for i in reversed(range(layers)):
            np.matmul(inputs[i].T, dz)
            if i > 0:
                dz = np.matmul(dz, params[2 * i].T)

    return run


class InPlaceMLP:
    """The hand-written step with every result written into a buffer allocated once: the same arithmetic, one
    ufunc call per elementwise op, no fresh array but the reductions' small ones."""

    def __init__(self, problem: MLPProblem) -> None:
        self.params = [p.copy() for p in problem.weights]
        self.x, self.onehot = problem.x, problem.onehot
        self.layers, batch = len(self.params) // 2, self.x.shape[0]
        self.rate, self.count = np.float32(problem.learning_rate), np.float32(batch)
        widths = [self.params[2 * i].shape[1] for i in range(self.layers)]
        self.outs = [np.empty((batch, width), np.float32) for width in widths]  # pre-activations, then ReLU'd
        self.upstream = [np.empty((batch, width), np.float32) for width in widths]
        self.masks = [np.empty((batch, width), bool) for width in widths]
        self.grads = [np.empty_like(p) for p in self.params]
        self.shifted, self.probs = np.empty_like(self.outs[-1]), np.empty_like(self.outs[-1])

    def step(self) -> float:
        params, outs, count = self.params, self.outs, self.count
        h = self.x
        for i in range(self.layers):
            z = outs[i]
            np.matmul(h, params[2 * i], out=z)
            np.add(z, params[2 * i + 1], out=z)
            if i < self.layers - 1:
                np.maximum(z, 0, out=z)  # the gradient's mask reads it: relu(z) > 0 exactly where z > 0
            h = z
        shifted, probs = self.shifted, self.probs
        np.subtract(h, h.max(axis=1, keepdims=True), out=shifted)
        np.exp(shifted, out=probs)
        total = probs.sum(axis=1, keepdims=True)
        np.subtract(shifted, np.log(total), out=shifted)  # the log-probabilities
        loss = -np.vdot(shifted, self.onehot) / count
        dz = self.upstream[-1]
        np.divide(probs, total, out=dz)
        np.subtract(dz, self.onehot, out=dz)
        np.divide(dz, count, out=dz)
        for i in reversed(range(self.layers)):
            np.matmul((self.x if i == 0 else outs[i - 1]).T, dz, out=self.grads[2 * i])
            np.sum(dz, axis=0, out=self.grads[2 * i + 1])
            if i > 0:
                below = self.upstream[i - 1]
                np.matmul(dz, params[2 * i].T, out=below)
                np.multiply(below, np.greater(outs[i - 1], 0, out=self.masks[i - 1]), out=below)
                dz = below
        for p, g in zip(params, self.grads, strict=True):
            np.multiply(g, self.rate, out=g)
            np.subtract(p, g, out=p)
        return float(loss)


def check_in_place(problem: MLPProblem) -> None:
    """The step in place computes the hand-written step: the same loss and weights after a step (to rounding)."""
    hand, best = NumpyMLP(problem), InPlaceMLP(problem)
    loss, weights = hand.loss_and_weights()
    got = best.step()
    if not np.isclose(got, loss, rtol=1e-5) or not all(
        np.allclose(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(best.params, weights, strict=True)
    ):
        raise SystemExit(f"the step in place gave loss {got}, the hand-written step {loss}: they differ")


def step_floors(sizes: list[int], batch: int) -> dict[str, float]:
    problem = make_problem(sizes, batch)
    check_in_place(problem)
    hand, traced = NumpyMLP(problem), TracedMLP(problem, f"traced-floors{len(sizes)}-{batch}")
    traced.step()  # the trace
    fns: dict[str, Callable[[], Any]] = {
        "NumPy by hand": hand.step,
        "tp.function": traced.step,
        "NumPy by hand, in place": InPlaceMLP(problem).step,
        "matrix products alone": matmuls_only(problem),
    }
    if jax_available():
        jitted = JaxMLP(problem)
        jitted.step()  # the compilation
        fns["jax.jit"] = jitted.step
    return floors.per_call(fns, scale=3.0)


def main(argv: list[str]) -> None:
    if "--quick" in argv:
        floors.REPEATS, floors.SECONDS = 3, 0.002
    tp.set_backend("numpy")
    print(f"NumPy's BLAS: {probe().text()}\n")
    for sizes, batch in (([64, 32, 10], 32), ([784, 256, 256, 10], 128)):
        times = step_floors(sizes, batch)
        hand = times["NumPy by hand"]
        print(f"MLP {'-'.join(map(str, sizes))} batch {batch}, SGD step")
        for name, seconds in times.items():
            print(f"   {name:<24} {floors.us(seconds)}  {seconds / hand:5.2f}x")
        left = hand - times["matrix products alone"]
        ours = times["tp.function"] - times["matrix products alone"]
        print(
            f"   elementwise work: {floors.us(left).strip()} by hand, {floors.us(ours).strip()} through tp.function "
            f"({ours / left:.2f}x); the products alone are {times['matrix products alone'] / hand:.2f}x of the step"
        )
        best = times["NumPy by hand, in place"]
        print(f"   tp.function against the step in place: {times['tp.function'] / best:.2f}x\n")


if __name__ == "__main__":
    main(sys.argv[1:])
