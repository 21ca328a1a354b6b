"""Why the eager workloads that miss their targets miss them: the floors under tensorplug's design, in one run.

``tensorplug bench`` says how far each workload is from its target; this says
why, by timing the layers one at a time on the numpy backend, interleaved
with the raw NumPy they are compared with:

1. Dispatch of a 1-element Add: ``np.add``; the backend's kernel called
   directly under the ``kernel(inputs, attrs, backend)`` convention of
   DESIGN.md; the least any dispatcher under that convention can do (look
   the kernel up, unwrap, call, wrap: no tape, no checks); ``tp.run_kernel``;
   and the ``a + b`` operator (conversion, promotion and broadcasting checks).
2. The small gradient and the two MLP steps: how many kernels tensorplug
   runs, what the target leaves per kernel for everything that is not the
   kernel's own arithmetic, and what tensorplug spends per kernel now.
3. The big MLP step's time beyond the hand-written one, split: the Python
   work every step does whatever its sizes (the small step's time beyond
   its own hand-written one), and the update ``p.assign(p - rate * g)``
   against the hand-written ``p -= rate * g`` (a second full-size array
   per weight, where the hand-written update writes in place).

One thread per library, as ``tensorplug bench`` times (unless
``OMP_NUM_THREADS`` says otherwise).

    python benchmarks/floors.py            # ~20 s
    python benchmarks/floors.py --quick    # a smoke run (the tests use it); its figures mean little
"""

from __future__ import annotations

import os
import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one BLAS thread, as tensorplug bench times

import numpy as np  # noqa: E402  (after the thread settings)

import tensorplug as tp  # noqa: E402
from tensorplug._runtime._engine import engine  # noqa: E402
from tensorplug._runtime._tensor import Tensor  # noqa: E402
from tensorplug._tools._bench.references import NumpyMLP, make_problem  # noqa: E402
from tensorplug._tools._bench.workloads import (  # noqa: E402
    BIG_MLP,
    DISPATCH,
    HAND,
    SMALL_GRAD,
    SMALL_MLP,
    TARGETS,
    TensorplugMLP,
)

REPEATS = 9
SECONDS = 0.1  # per repeat of each function (three times that for the MLP steps)
RUN_KERNEL = 'tp.run_kernel("Add", ...)'


def _noop() -> None:
    return None


def per_call(fns: dict[str, Callable[[], Any]], scale: float = 1.0) -> dict[str, float]:
    """Median seconds per call of each function, the functions' repeats interleaved, less the cost of calling an
    empty function (as ``tensorplug bench`` times statements, not calls, the figures compare with its own)."""
    seconds = SECONDS * scale
    fns = {**fns, "(empty call)": _noop}
    numbers = {}
    for name, fn in fns.items():
        number, elapsed = 1, 0.0
        while elapsed < seconds / 10 and number < 1 << 20:
            number *= 2
            elapsed = timeit.timeit(fn, number=number)
        numbers[name] = max(1, int(number * seconds / elapsed))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(REPEATS):
        for name, fn in fns.items():
            samples[name].append(timeit.timeit(fn, number=numbers[name]) / numbers[name])
    medians = {name: statistics.median(times) for name, times in samples.items()}
    empty = medians.pop("(empty call)")
    return {name: seconds - empty for name, seconds in medians.items()}


def dispatch_floors() -> dict[str, float]:
    backend = tp.backend("numpy")
    a32, b32 = np.array([1.5], np.float32), np.array([2.5], np.float32)
    a, b = tp.tensor(a32), tp.tensor(b32)
    inputs = {"a": a, "b": b}
    raw = {"a": a32, "b": b32}
    tp.run_kernel("Add", inputs)
    kernel = engine.tables["numpy"]["Add"]
    add = np.add  # bound once, as the benchmark binds it: no attribute lookup timed
    attrs: dict[str, Any] = {}
    new = object.__new__

    def least_dispatch(name: str, inputs: dict[str, Tensor]) -> Tensor:
        fn = engine.table[name]
        out = fn({key: t._data for key, t in inputs.items()}, attrs, backend)
        t = new(Tensor)
        t._data, t._backend, t._tape, t._dtype = out, backend, None, None
        return t

    return per_call(
        {
            "np.add(a, b)": lambda: add(a32, b32),
            "Add kernel, called directly": lambda: kernel(raw, attrs, backend),
            "least dispatch under the convention": lambda: least_dispatch("Add", inputs),
            RUN_KERNEL: lambda: tp.run_kernel("Add", inputs),
            "a + b (the op: conversion, promotion, broadcast check)": lambda: a + b,
        }
    )


def small_grad() -> tuple[dict[str, float], int]:
    x32, w32, b32 = (np.array([v], np.float32) for v in (0.5, 1.5, 0.1))
    x, w, b = tp.tensor(x32), tp.tensor(w32), tp.tensor(b32)
    df = tp.grad(lambda x: tp.sum(tp.tanh(x * w + b)))

    def by_hand() -> np.ndarray:
        t = np.tanh(x32 * w32 + b32)
        _ = t.sum()
        return (1 - t * t) * w32

    kernels = len(tp.profile(df, x).kernels)
    return per_call({"NumPy by hand": by_hand, "tp.grad": lambda: df(x)}), kernels


def mlp(sizes: list[int], batch: int) -> tuple[dict[str, float], int]:
    problem = make_problem(sizes, batch)
    hand, tensorplug = NumpyMLP(problem), TensorplugMLP(problem, f"floors{len(sizes)}-{batch}")
    kernels = len(tp.profile(tensorplug.step).kernels)
    return per_call({"NumPy by hand": hand.step, "tensorplug": tensorplug.step}, scale=3.0), kernels


def update(sizes: list[int], batch: int) -> dict[str, float]:
    """The SGD update of the MLP's weights alone, for gradients computed once: tensorplug's ``p.assign(p - rate *
    g)`` (the bench's step) against the hand-written ``p -= rate * g``."""
    problem = make_problem(sizes, batch)
    hand, tensorplug = NumpyMLP(problem), TensorplugMLP(problem, f"floors-update{len(sizes)}-{batch}")
    _, grads = tp.variable_grads(tensorplug.loss, tensorplug.params)
    raw = [grads[p.name].numpy() for p in tensorplug.params]
    rate = tensorplug.learning_rate

    def assign() -> None:
        for p in tensorplug.params:
            p.assign(p - rate * grads[p.name])

    return per_call({"NumPy by hand": lambda: hand.update(raw), "tensorplug": assign}, scale=3.0)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:8.2f} µs"


def main(argv: list[str]) -> None:
    global REPEATS, SECONDS
    if "--quick" in argv:
        REPEATS, SECONDS = 3, 0.002
    tp.set_backend("numpy")
    target = TARGETS["numpy", DISPATCH, "np.add"]
    print(f"1. Dispatch of a 1-element float32 Add (numpy backend); ratio to np.add; the target is ≤ {target:g}x\n")
    floors = dispatch_floors()
    base = floors["np.add(a, b)"]
    for name, seconds in floors.items():
        print(f"   {name:<56} {us(seconds)}  {seconds / base:5.2f}x")
    op_cost = floors["a + b (the op: conversion, promotion, broadcast check)"] - base
    print(
        f"\n   Under the convention the kernel call alone is {floors['Add kernel, called directly'] / base:.2f}x "
        f"and the least dispatch {floors['least dispatch under the convention'] / base:.2f}x of np.add.\n"
    )
    print("2. Workloads: what the target leaves per kernel, beside what tensorplug spends per kernel now\n")
    rows = [("small grad, 1 element", *small_grad(), TARGETS["numpy", SMALL_GRAD, HAND])]
    for sizes, batch, workload in (([64, 32, 10], 32, SMALL_MLP), ([784, 256, 256, 10], 128, BIG_MLP)):
        rows.append(
            (f"MLP {'-'.join(map(str, sizes))} batch {batch}", *mlp(sizes, batch), TARGETS["numpy", workload, HAND])
        )
    header = (
        f"   {'workload':<30} {'by hand':>11} {'tensorplug':>11} {'ratio':>6} {'target':>6} {'kernels':>7} "
        f"{'left per kernel':>16} {'spent per kernel':>17}"
    )
    print(header)
    for name, times, kernels, target in rows:
        hand, ours = times["NumPy by hand"], times["tp.grad" if "tp.grad" in times else "tensorplug"]
        left = (target - 1) * hand / kernels  # what the target allows beyond the hand-written time, per kernel
        spent = (ours - hand) / kernels
        print(
            f"   {name:<30} {us(hand)} {us(ours)} {ours / hand:5.2f}x {target:5.2f}x {kernels:7d} "
            f"{us(left):>16} {us(spent):>17}"
        )
    print(
        f"\n   For scale: one op (a + b) costs {us(op_cost).strip()} beyond np.add; "
        f"run_kernel alone {us(floors[RUN_KERNEL] - base).strip()}.\n"
    )
    small, big = (times for _, times, _, _ in rows[1:])
    beyond = {name: times["tensorplug"] - times["NumPy by hand"] for name, times in (("small", small), ("big", big))}
    updates = update([784, 256, 256, 10], 128)
    second_array = updates["tensorplug"] - updates["NumPy by hand"]
    allowed = (TARGETS["numpy", BIG_MLP, HAND] - 1) * big["NumPy by hand"]
    print("3. The big MLP step beyond the hand-written one, split\n")
    print(f"   {'beyond the hand-written step':<68} {us(beyond['big'])}  (the target allows {us(allowed).strip()})")
    print(f"   {'of it, the Python work of any step (the small one, beyond its own)':<68} {us(beyond['small'])}")
    print(
        f"   {'of it, the update through assign, beyond p -= rate * g':<68} {us(second_array)}  "
        f"({us(updates['tensorplug']).strip()} against {us(updates['NumPy by hand']).strip()})"
    )
    print(f"   {'the rest':<68} {us(beyond['big'] - beyond['small'] - second_array)}")


if __name__ == "__main__":
    main(sys.argv[1:])
