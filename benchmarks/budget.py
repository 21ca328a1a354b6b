"""Where an eager op and a backward step spend their time, part by part (numpy backend, 1-element float32).

``benchmarks/floors.py`` says how far the eager workloads are from their floors;
this splits the time of one eager op and of one small gradient into the parts
that the eager path adds around the kernels, each timed on its own (each part
is the difference between two timings that differ only by it):

1. One op, ``a + b``, from its second call on (a checked call: ``tensorplug.ops._checked``): the NumPy
   ufunc; the kernel's direct form (NumPy's quiet context); the checked call
   (the op's entry, the dtype and shape checks, wrapping); the ``+`` operator;
   recording on a tape. Then what a first call, or an op without a checked
   call, spends instead: the backend's kernel under the ``kernel(inputs,
   attrs, backend)`` convention; dispatch (``run_kernel``: table lookup,
   unwrapping, wrapping); the op's checks (conversion, promotion, broadcasting).
2. ``tp.grads`` of ``sum(tanh(x * w + b))``: the forward ops, their recording,
   the scope, and the backward pass replayed from its program (the seed made inside it; the
   signature of the tape's records looked up among the gradient programs, the
   program's NumPy calls, the gradients wrapped: see
   ``tensorplug._tracing._gradient_programs``); and, for comparison, the same
   pass walked record by record.

    python benchmarks/budget.py            # ~15 s
    python benchmarks/budget.py --quick    # a smoke run (the tests use it); its figures mean little
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug._autodiff._backward import _check_output, _check_xs, _Scope
from tensorplug._runtime._engine import engine
from tensorplug._tracing import _gradient_programs as programs
from tensorplug._tracing._gradient_programs import BackwardProgram, _programs, replay_backward
from tensorplug.ops._promote import binary_operands

REPEATS = 15
SECONDS = 0.05  # per repeat of each function


def best(fn: Callable[[], Any]) -> float:
    """The least seconds per call of ``fn`` over the repeats, less the cost of calling an empty function."""
    number, elapsed = 1, 0.0
    while elapsed < SECONDS / 10 and number < 1 << 20:
        number *= 2
        elapsed = timeit.timeit(fn, number=number)
    number = max(1, int(number * SECONDS / elapsed))
    empty = min(timeit.repeat(lambda: None, number=number, repeat=REPEATS)) / number
    return min(timeit.repeat(fn, number=number, repeat=REPEATS)) / number - empty


def ns(seconds: float) -> str:
    return f"{seconds * 1e9:8.0f} ns"


def one_op() -> list[tuple[str, float]]:
    backend = tp.backend("numpy")
    a32, b32 = np.array([1.5], np.float32), np.array([2.5], np.float32)
    a, b = tp.tensor(a32), tp.tensor(b32)
    inputs, raw = {"a": a, "b": b}, {"a": a32, "b": b32}
    attrs: dict[str, Any] = {}
    a + b  # the first call: it makes the entry the later ones run
    kernel = engine.tables["numpy"]["Add"]
    direct, ufunc = kernel.direct, np.add  # type: ignore[attr-defined]

    def checked_path() -> tp.Tensor:  # what tp.add's first call runs: the checks, then run_kernel
        ca, cb = binary_operands("add", a, b)
        return tp.run_kernel("Add", {"a": ca, "b": cb})  # type: ignore[return-value]

    t_ufunc = best(lambda: ufunc(a32, b32))
    t_direct = best(lambda: direct(a32, b32))
    t_op = best(lambda: tp.add(a, b))
    t_operator = best(lambda: a + b)
    t_kernel = best(lambda: kernel(raw, attrs, backend))
    t_run = best(lambda: tp.run_kernel("Add", inputs))
    t_checked_path = best(checked_path)

    def hundred(records: list[Any]) -> Callable[[], None]:  # a tape's records are let go every 100 calls
        def run() -> None:
            for _ in range(100):
                a + b
            records.clear()

        return run

    t_plain = best(hundred([])) / 100
    scope = _Scope([a])
    with scope:
        t_taped = best(hundred(scope.tape.records)) / 100
    return [
        ("kernel: np.add", t_ufunc),
        ("the kernel's direct form (kernel.direct(a, b): NumPy's quiet context)", t_direct - t_ufunc),
        ("checked call: the op's entry, dtype and shape checks, wrapping (tp.add)", t_op - t_direct),
        ("operator: Tensor.__add__ -> tp.add", t_operator - t_op),
        ("= a + b, no tape", t_operator),
        ("recording one kernel on a tape (watched input)", t_taped - t_plain),
        ("a first call instead: the backend's kernel convention (fn(inputs, attrs, backend))", t_kernel - t_ufunc),
        ("  dispatch: lookup, unwrap, call, wrap (run_kernel)", t_run - t_kernel),
        ("  op checks: conversion, promotion, broadcast", t_checked_path - t_run),
        ("  = tp.add's first call (the checked path), no tape", t_checked_path),
    ]


def small_grad() -> list[tuple[str, float]]:
    """The phases of ``tp.grads``, timed in place (a copy of its steps with a clock read between them), as
    the parts of one step measured on their own run faster than they do inside it (warm caches)."""
    x, w, b = tp.tensor([0.3]), tp.tensor([0.7]), tp.tensor([0.1])

    def f(x: tp.Tensor, w: tp.Tensor, b: tp.Tensor) -> tp.Tensor:
        return tp.sum(tp.tanh(x * w + b))

    df = tp.grads(f)
    t_total = best(lambda: df([x, w, b]))
    t_forward = best(lambda: f(x, w, b))
    clock = time.perf_counter_ns
    parts = ["checks", "forward", "seed", "backward", "tick"]
    samples: dict[str, list[int]] = {part: [] for part in parts}
    steps = max(200, int(SECONDS * 4e4))
    gc.disable()  # as timeit does
    try:
        for _ in range(steps):
            t0 = clock()
            t1 = clock()
            xs = _check_xs([x, w, b], "grads")
            t2 = clock()
            scope = _Scope(xs)
            with scope:
                y = f(*xs)
            t3 = clock()
            y = _check_output(y, "grads")
            t4 = clock()
            grads = replay_backward(scope.tape.records, xs, y, None)  # None: the program makes the seed
            t5 = clock()
            assert grads is not None  # the whole pass from its program (traced by df's calls above)
            for part, value in zip(parts, (t2 - t1, t3 - t2, t4 - t3, t5 - t4, t1 - t0), strict=True):
                samples[part].append(value)
    finally:
        gc.enable()
    tick = statistics.median(samples.pop("tick"))
    m = {part: (statistics.median(v) - tick) * 1e-9 for part, v in samples.items()}
    scope = _Scope([x, w, b])
    with scope:
        y = f(x, w, b)
    y = _check_output(y, "grads")
    records = scope.tape.records
    signature_and_replay = best(lambda: replay_backward(records, [x, w, b], y, None))
    replay = next(e for e in _programs.values() if isinstance(e, BackwardProgram)).replay
    raws = [y._data, x._data, w._data, b._data, *(r.outputs[0]._data for r in records)]
    t_replay = best(lambda: replay(raws, (), ()))
    kernels = len(tp.profile(df, [x, w, b]).kernels) - 5  # less the four forward kernels and the seed
    programs.WHOLE_PASSES = False
    try:
        df([x, w, b])
        t_by_record = best(lambda: df([x, w, b]))
    finally:
        programs.WHOLE_PASSES = True
    return [
        ("forward ops, no tape (4 kernels; on their own)", t_forward),
        ("recording them (forward under a scope, in place, less the above)", m["forward"] - t_forward),
        ("argument checks", m["checks"]),
        ("the output's check (the program makes the seed)", m["seed"]),
        ("the backward pass from its program (in place)", m["backward"]),
        ("  on its own: the signature (the records, specs, shapes), replay, wrapping", signature_and_replay),
        (f"  of which the replay: the program (the seed, {kernels} gradient kernels, as NumPy calls)", t_replay),
        ("the rest: tp.grads's wrapper, results, freeing the tape", t_total - sum(m.values())),
        ("= tp.grads(f)([x, w, b])", t_total),
        ("walked record by record instead (a program per gradient)", t_by_record),
    ]


def main(argv: list[str]) -> None:
    global REPEATS, SECONDS
    if "--quick" in argv:
        REPEATS, SECONDS = 2, 0.002
    tp.set_backend("numpy")
    for title, rows in (
        ("1. One eager op, a + b (1-element float32)", one_op()),
        ("2. A gradient: tp.grads of sum(tanh(x * w + b)), 1 element", small_grad()),
    ):
        print(f"{title}\n")
        for name, seconds in rows:
            print(f"   {name:<78} {ns(seconds)}")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
