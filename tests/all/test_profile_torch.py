"""tp.profile and tp.time on the torch backend (CPU, or CUDA where torch sees one): the same kernels, shapes,
dtypes, bytes and phases as on numpy, memory tracked through torch tensors, and the tables unwrapped afterwards.

Expected values are worked out by hand (float32: 4 bytes an element); no assertion is about how long anything took.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from profile_expectation import EXPECTED, assert_unobserved, tanh_loss

import tensorplug as tp

pytestmark = pytest.mark.usefixtures("on_torch")


def test_forward_and_backward_kernels_on_torch() -> None:
    x_values, w_values = np.array([0.5, -1.0, 2.0], np.float32), np.array([1.5, 0.25, -0.75], np.float32)
    p = tp.profile(tp.grads(tanh_loss), [tp.tensor(x_values), tp.tensor(w_values)])
    seen = [(k.name, k.phase, k.input_shapes, k.input_dtypes, k.output_shapes, k.new_bytes) for k in p.kernels]
    assert seen == EXPECTED
    device = tp.backend().device
    assert all((k.backend, k.device, k.output_dtypes) == ("torch", device, ["float32"]) for k in p.kernels)
    assert (p.new_tensors, p.new_bytes) == (10, 8 * 12 + 2 * 4)
    assert 0 < p.peak_bytes <= p.new_bytes
    assert 0 < p.kernel_seconds <= p.wall_seconds
    slope = 1.0 - np.tanh(x_values * w_values) ** 2
    dx, dw = p.result
    assert dx.backend == "torch"
    np.testing.assert_allclose(dx.numpy(), w_values * slope, rtol=1e-5)
    np.testing.assert_allclose(dw.numpy(), x_values * slope, rtol=1e-5)
    rows = [re.split(" {2,}", line) for line in str(p).splitlines()[1 : 1 + len(EXPECTED)]]
    assert [row[:4] for row in rows] == [[k[0], k[1], "torch", device] for k in EXPECTED]
    assert_unobserved("torch")


def test_memory_of_torch_tensors_is_tracked_to_their_release() -> None:
    x = tp.zeros((1000,))

    def chain(y: tp.Tensor) -> tp.Tensor:
        for _ in range(5):
            y = tp.tanh(y)
        return y

    p = tp.profile(chain, x)
    assert (p.new_tensors, p.new_bytes, p.peak_bytes, p.kept_bytes) == (5, 20000, 8000, 4000)

    def kept(y: tp.Tensor) -> list[tp.Tensor]:
        ys = [y]
        for _ in range(5):
            ys.append(tp.tanh(ys[-1]))
        return ys

    q = tp.profile(kept, x)
    assert (q.new_tensors, q.new_bytes, q.peak_bytes, q.kept_bytes) == (5, 20000, 20000, 20000)
    s = tp.profile(lambda: tp.sum(x).item())  # torch's 0-d result takes weak references: its release is seen
    assert (s.new_bytes, s.peak_bytes, s.kept_bytes) == (4, 4, 0)


def test_time_on_torch() -> None:
    x = tp.tensor([1.0, 2.0, 3.0])
    t = tp.time(lambda x: tp.sum(x * x), x)
    assert t.result.item() == 14.0
    assert t.kernels == 2
    assert 0 < t.kernel_seconds <= t.wall_seconds
    assert_unobserved("torch")


def test_exceptions_threads_and_nesting_on_torch() -> None:
    x = tp.tensor([0.5, 1.5])

    def failing() -> None:
        tp.exp(x)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        tp.profile(failing)
    assert_unobserved("torch")

    started, finished = threading.Event(), threading.Event()

    def other() -> None:
        started.wait(10)
        z = tp.ones((4, 4))
        for _ in range(20):
            z = tp.exp(z * 0.0)
        finished.set()

    def outer() -> tp.Profile[tp.Tensor]:
        started.set()
        assert finished.wait(10)
        return tp.profile(tp.tanh, x * x)

    thread = threading.Thread(target=other)
    thread.start()
    p = tp.profile(outer)
    thread.join()
    assert p.kernel_names == ["Multiply", "Tanh"]  # nothing of the other thread's
    assert p.result.kernel_names == ["Tanh"]
    assert_unobserved("torch")
