"""Threads and leaks on the torch backend (CPU, or CUDA where torch sees one).

The same checks as tests/unit/test_threads.py and tests/unit/test_leaks.py, on torch storage:
threads computing gradients at once get the serial results bit for bit; 5 000 gradient calls
(half of them raising midway) leave no Python memory, tape or tensor behind; and on a CUDA
device, 10 000 give back all the device memory they used.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from leak_check import assert_no_leak

import tensorplug as tp

PAIRS = 2_500  # of gradient calls, one plain and one raising midway (torch under tracemalloc: ~1 ms a pair)


pytestmark = pytest.mark.usefixtures("on_torch")


def square_sum(x: tp.Tensor) -> tp.Tensor:
    return tp.sum(x * x)


def bad_shapes(x: tp.Tensor) -> tp.Tensor:
    return tp.matmul(x * x, tp.ones((4, 4)))  # x is (3,): a ShapeError midway, with a record on the tape


def calls_of(x: tp.Tensor) -> Callable[[], None]:
    """One plain gradient call, then one that raises midway."""
    g, failing = tp.grad(square_sum), tp.grad(bad_shapes)

    def call() -> None:
        g(x)
        try:
            failing(x)
        except tp.ShapeError:
            return
        raise AssertionError("expected a ShapeError")

    return call


def test_gradient_calls_leave_no_python_memory_tape_or_tensor_behind() -> None:
    assert_no_leak(calls_of(tp.tensor([1.0, 2.0, 3.0])), PAIRS)  # each call: one plain gradient, one raising


@pytest.mark.skipif(not torch.cuda.is_available(), reason="device memory is checked only where torch sees CUDA")
def test_gradient_calls_give_back_all_the_cuda_memory_they_used() -> None:
    tp.set_backend("torch", device="cuda")
    x = tp.tensor(np.linspace(-1.0, 1.0, 1000, dtype=np.float32))
    assert x.device.startswith("cuda")
    call = calls_of(x)
    for _ in range(50):
        call()
    gc.collect()
    torch.cuda.synchronize()
    start = torch.cuda.memory_allocated()
    for _ in range(2 * PAIRS):  # 10 000 gradient calls: on CUDA, untraced, they are cheap
        call()
    gc.collect()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == start


def doubled_relu(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    (x,) = saved
    return (tp.where(x > 0, dy * 2.0, tp.zeros_like(dy)),)


def test_threads_get_the_results_of_a_serial_run() -> None:
    """8 threads x 100 gradient computations on torch storage (a weight shared by all, an override
    scope in some threads, no_grad in others, second order in the rest): bit for bit the results of
    the same calls run serially."""
    rng = np.random.default_rng(4)
    inputs = [[rng.standard_normal(6).astype(np.float32) for _ in range(100)] for _ in range(8)]
    w = tp.tensor(rng.standard_normal((3, 2)).astype(np.float32))

    def job(i: int, a: np.ndarray) -> list[np.ndarray]:
        x = tp.tensor(a.reshape(2, 3))
        if i % 3 == 0:
            with tp.gradient_overrides({"Relu": doubled_relu}):
                gs = tp.grads(lambda x, w: tp.sum(tp.relu(tp.matmul(x, w)) * x[:, :2]))([x, w])
        elif i % 3 == 1:

            def f(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
                with tp.no_grad():
                    scale = tp.exp(x)
                return tp.sum(tp.tanh(tp.matmul(x * scale, w)))

            gs = tp.grads(f)([x, w])
        else:
            inner = tp.grad(lambda z: tp.sum(z * z * tp.sin(z)))
            h = tp.tanh(x * 2.0 + 1.0)
            gs = [tp.grad(lambda w: tp.sum(inner(tp.matmul(h * h, w))))(w)]  # second order, in the shared w only
        return [g.numpy().copy() for g in gs]

    serial = [[job(i, a) for a in inputs[i]] for i in range(8)]
    concurrent: list[list[list[np.ndarray]]] = [[] for _ in range(8)]
    errors: list[BaseException] = []
    start = threading.Barrier(8, timeout=30)

    def worker(i: int) -> None:
        try:
            start.wait()
            for a in inputs[i]:
                concurrent[i].append(job(i, a))
        except BaseException as exc:
            errors.append(exc)
            start.abort()

    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(before)
    if errors:
        raise errors[0]
    for i in range(8):
        assert len(concurrent[i]) == len(serial[i])
        for got, want in zip(concurrent[i], serial[i], strict=True):
            for g, s in zip(got, want, strict=True):
                assert np.array_equal(g, s), f"thread {i}"
