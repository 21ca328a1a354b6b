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

    python benchmarks/floors.py            # ~20 s
    python benchmarks/floors.py --quick    # a smoke run (the tests use it); its figures mean little
"""

from __future__ import annotations

import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug._runtime._engine import engine
from tensorplug._runtime._tensor import Tensor
from tensorplug._tools._bench.references import NumpyMLP, make_problem
from tensorplug._tools._bench.workloads import TensorplugMLP

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


def us(seconds: float) -> str:
    return f"{seconds * 1e6:8.2f} µs"


def main(argv: list[str]) -> None:
    global REPEATS, SECONDS
    if "--quick" in argv:
        REPEATS, SECONDS = 3, 0.002
    tp.set_backend("numpy")
    print("1. Dispatch of a 1-element float32 Add (numpy backend); ratio to np.add; the target is ≤ 3x\n")
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
    rows = [("small grad, 1 element", *small_grad(), 5.0)]
    for sizes, batch, target in (([64, 32, 10], 32, 3.0), ([784, 256, 256, 10], 128, 1.10)):
        rows.append((f"MLP {'-'.join(map(str, sizes))} batch {batch}", *mlp(sizes, batch), target))
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
        f"run_kernel alone {us(floors[RUN_KERNEL] - base).strip()}."
    )


if __name__ == "__main__":
    main(sys.argv[1:])
