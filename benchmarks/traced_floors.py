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


def step_floors(sizes: list[int], batch: int) -> dict[str, float]:
    problem = make_problem(sizes, batch)
    hand, traced = NumpyMLP(problem), TracedMLP(problem, f"traced-floors{len(sizes)}-{batch}")
    traced.step()  # the trace
    fns: dict[str, Callable[[], Any]] = {
        "NumPy by hand": hand.step,
        "tp.function": traced.step,
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
            f"({ours / left:.2f}x); the products alone are {times['matrix products alone'] / hand:.2f}x of the step\n"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
