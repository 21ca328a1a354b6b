"""tp.profile and tp.time: the kernels a call ran (forward and backward), their shapes, dtypes and bytes, the
memory totals, the table, and that profiling is per thread, nests, and leaves the dispatch tables as it found them.

Expected kernels, shapes and bytes are worked out by hand from the ops' definitions (float32: 4 bytes an element).
No assertion is about how long anything took, beyond kernel time <= wall time.
"""

from __future__ import annotations

import re
import threading
import time as time_module
import warnings
from typing import Any

import numpy as np
import pytest
from box_backend import BoxBackend, Boxed, box_add
from profile_expectation import EXPECTED, assert_unobserved, tanh_loss

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._engine import FallbackKernel, engine
from tensorplug._runtime._observe import ObservedKernel


def test_forward_and_backward_kernels_with_shapes_dtypes_bytes_and_phase() -> None:
    x_values, w_values = np.array([0.5, -1.0, 2.0], np.float32), np.array([1.5, 0.25, -0.75], np.float32)
    x, w = tp.tensor(x_values), tp.tensor(w_values)
    p = tp.profile(tp.grads(tanh_loss), [x, w])
    seen = [(k.name, k.phase, k.input_shapes, k.input_dtypes, k.output_shapes, k.new_bytes) for k in p.kernels]
    assert seen == EXPECTED
    for k in p.kernels:
        assert (k.backend, k.device) == ("numpy", "cpu")
        assert k.output_dtypes == ["float32"]
        assert k.new_tensors == 1
        assert k.seconds > 0
        assert k.ms == pytest.approx(k.seconds * 1e3)
    assert p.kernel_names == ["Multiply", "Tanh", "Sum", "OnesLike", "BroadcastTo", "Square", "Sub"]
    assert p.new_tensors == 10
    assert p.new_bytes == 8 * 12 + 2 * 4
    assert 0 < p.peak_bytes <= p.new_bytes
    assert p.kernel_seconds == pytest.approx(sum(k.seconds for k in p.kernels))
    assert 0 < p.kernel_seconds <= p.wall_seconds
    slope = 1.0 - np.tanh(x_values * w_values) ** 2  # the result is fn's, untouched
    dx, dw = p.result
    np.testing.assert_allclose(dx.numpy(), w_values * slope, rtol=1e-5)
    np.testing.assert_allclose(dw.numpy(), x_values * slope, rtol=1e-5)
    assert_unobserved("numpy")


def test_gradient_accumulation_belongs_to_the_gradient_that_made_it() -> None:
    x = tp.tensor([1.0, 2.0])
    p = tp.profile(tp.grad(lambda x: tp.sum(x * x)), x)  # x is both inputs of Multiply: its two gradients add up
    assert [(k.name, k.phase) for k in p.kernels][-3:] == [
        ("Multiply", "backward:Multiply"),
        ("Multiply", "backward:Multiply"),
        ("Add", "backward:Multiply"),
    ]
    assert p.result.tolist() == [2.0, 4.0]


def test_list_inputs_and_several_outputs() -> None:
    a, b = tp.tensor([[1.0, 2.0]]), tp.tensor([[3.0, 4.0], [5.0, 6.0]])
    p = tp.profile(lambda: (tp.concat([a, b], 0), tp.top_k(b, 1)))
    concat, top_k = p.kernels
    assert concat.name == K.CONCAT
    assert concat.input_shapes == {"tensors": [(1, 2), (2, 2)]}
    assert concat.input_dtypes == {"tensors": ["float32", "float32"]}
    assert (concat.output_shapes, concat.new_bytes, concat.new_tensors) == ([(3, 2)], 24, 1)
    assert top_k.name == K.TOP_K
    assert top_k.output_shapes == [(2, 1), (2, 1)]
    assert top_k.output_dtypes == ["float32", "int32"]
    assert (top_k.new_bytes, top_k.new_tensors) == (16, 2)
    assert (p.new_tensors, p.new_bytes) == (3, 40)


def test_a_call_without_kernels() -> None:
    def add(a: int, b: int = 1) -> int:
        return a + b

    p = tp.profile(add, 41)
    assert p.result == 42
    assert p.kernels == []
    assert p.kernel_names == []
    assert (p.new_tensors, p.new_bytes, p.peak_bytes, p.kept_bytes, p.kernel_seconds) == (0, 0, 0, 0, 0.0)
    assert p.summary() == []
    assert "0 kernel calls" in str(p)


# -- memory ----------------------------------------------------------------------------------------------------------


def _chain(x: tp.Tensor) -> tp.Tensor:
    """Five tanh in a row, each intermediate released as the next is made."""
    y = x
    for _ in range(5):
        y = tp.tanh(y)
    return y


def _chain_kept(x: tp.Tensor) -> list[tp.Tensor]:
    """The same, every intermediate kept."""
    ys = [x]
    for _ in range(5):
        ys.append(tp.tanh(ys[-1]))
    return ys


def test_peak_bytes_when_intermediates_are_released() -> None:
    x = tp.zeros((1000,))  # made before the profile: not counted
    p = tp.profile(_chain, x)
    assert p.new_tensors == 5
    assert p.new_bytes == 5 * 4000
    assert p.peak_bytes == 2 * 4000  # at most one input and one output alive at once
    assert p.kept_bytes == 4000  # the result


def test_peak_bytes_when_intermediates_are_kept() -> None:
    x = tp.zeros((1000,))
    p = tp.profile(_chain_kept, x)
    assert (p.new_tensors, p.new_bytes, p.peak_bytes, p.kept_bytes) == (5, 20000, 20000, 20000)
    del p
    q = tp.profile(lambda: len(_chain_kept(x)))  # kept inside, released before fn returns
    assert (q.new_bytes, q.peak_bytes, q.kept_bytes) == (20000, 20000, 0)


@pytest.mark.usefixtures("tensorplug_registries")
def test_an_output_that_is_an_input_is_no_new_storage() -> None:
    tp.register_kernel("ProfileIdentity", "numpy", lambda inputs, attrs, backend: inputs["x"])
    x = tp.zeros((10,))
    p = tp.profile(lambda: tp.run_kernel("ProfileIdentity", {"x": x}))
    (k,) = p.kernels
    assert (k.new_tensors, k.new_bytes, k.output_shapes) == (1, 0, [(10,)])
    assert (p.new_bytes, p.peak_bytes, p.kept_bytes) == (0, 0, 0)


# -- fallback kernels, synchronisation ------------------------------------------------------------------------------


@pytest.fixture
def box(tensorplug_registries: None) -> BoxBackend:
    tp.register_backend("profilebox", BoxBackend, priority=-5, fallback="numpy")  # the unit conftest removes it
    tp.register_kernel(K.ADD, "profilebox", box_add)
    tp.set_backend("profilebox")
    backend = tp.backend()
    assert isinstance(backend, BoxBackend)
    return backend


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_a_fallback_kernel_is_seen_once_as_the_home_backends(box: BoxBackend) -> None:
    x = tp.tensor([[0.5, 1.0, 2.0]])

    def fn() -> tp.Tensor:
        y = tp.exp(x)  # runs on numpy through the fallback
        wrapped = engine.table[K.EXP]
        assert isinstance(wrapped, ObservedKernel)
        assert isinstance(wrapped.fn, FallbackKernel)
        assert not isinstance(wrapped.fn.fn, ObservedKernel)  # numpy's kernel is not observed a second time
        return y + y  # native

    p = tp.profile(fn)
    assert [(k.name, k.backend, k.output_shapes, k.new_bytes) for k in p.kernels] == [
        ("Exp", "profilebox", [(1, 3)], 12),
        ("Add", "profilebox", [(1, 3)], 12),
    ]
    assert isinstance(p.result.raw, Boxed)
    np.testing.assert_allclose(p.result.numpy(), 2 * np.exp([[0.5, 1.0, 2.0]]), rtol=1e-6)
    assert engine.observing == 0
    tp.exp(x)
    assert isinstance(engine.table[K.EXP], FallbackKernel)  # plain again


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_a_fallback_kernel_says_which_backend_ran_it(box: BoxBackend) -> None:
    x = tp.tensor([[0.5, 1.0, 2.0]])
    p = tp.profile(lambda: tp.exp(x) + x)  # Exp runs on numpy through the fallback, Add on profilebox
    assert [(k.name, k.backend, k.ran_on, k.fallback) for k in p.kernels] == [
        ("Exp", "profilebox", "numpy", True),
        ("Add", "profilebox", "profilebox", False),
    ]
    rows = {line.split()[0]: line for line in p.table().splitlines()[1:3]}
    assert "profilebox (on numpy)" in rows["Exp"]
    assert "(on " not in rows["Add"]


def test_the_device_is_synchronised_around_the_call_and_each_kernel(box: BoxBackend) -> None:
    x = tp.tensor([1.0, 2.0])
    before = box.synchronized
    t = tp.time(lambda: (x + x) + x)
    assert t.kernels == 2
    assert box.synchronized - before == 2 + 2 * 2  # start and end, before and after each kernel
    before = box.synchronized
    p = tp.profile(lambda: x + x)
    assert len(p.kernels) == 1
    assert box.synchronized - before == 2 + 2


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_a_failing_fallback_kernel_still_says_where_it_ran_while_profiled(box: BoxBackend) -> None:
    def broken(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        raise RuntimeError("no luck")

    tp.register_kernel("ProfileBroken", "numpy", broken)
    with pytest.raises(tp.KernelError, match=r"backend 'profilebox' \(run on its fallback backend 'numpy'\)"):
        tp.profile(lambda: tp.run_kernel("ProfileBroken", {"x": tp.tensor([1.0])}))
    assert engine.observing == 0


# -- exceptions, threads, nesting ---------------------------------------------------------------------------------


def test_an_exception_in_fn_propagates_and_leaves_no_observer() -> None:
    x = tp.tensor([1.0, 2.0])

    def failing(x: tp.Tensor) -> None:
        tp.exp(x * x)
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        tp.profile(failing, x)
    assert_unobserved("numpy")
    with pytest.raises(ValueError, match="boom"):
        tp.time(failing, x)
    assert_unobserved("numpy")
    with pytest.raises(tp.ShapeError):  # a tensorplug error from an op
        tp.profile(lambda: tp.matmul(tp.ones((2, 3)), tp.ones((2, 3))))
    assert_unobserved("numpy")


def test_kernels_of_another_thread_are_not_seen() -> None:
    started, finished = threading.Event(), threading.Event()
    seen_by_other: list[tuple[int, bool]] = []  # (engine.observing, whether the table held an ObservedKernel)
    errors: list[BaseException] = []

    def other() -> None:
        try:
            started.wait(10)
            z = tp.ones((7, 7))
            for _ in range(50):
                z = tp.exp(z * 0.0)
                seen_by_other.append((engine.observing, isinstance(engine.table.get(K.EXP), ObservedKernel)))
        except BaseException as exc:
            errors.append(exc)
        finally:
            finished.set()

    def fn(x: tp.Tensor) -> tp.Tensor:
        started.set()
        assert finished.wait(10)
        return x * x

    thread = threading.Thread(target=other)
    thread.start()
    p = tp.profile(fn, tp.tensor([1.0, 2.0]))
    thread.join()
    assert errors == []
    assert len(seen_by_other) == 50
    assert all(observing == 1 and wrapped for observing, wrapped in seen_by_other)  # it ran while observed
    assert [(k.name, k.input_shapes) for k in p.kernels] == [("Multiply", {"a": (2,), "b": (2,)})]
    assert_unobserved("numpy")


def test_profiles_nest_and_the_outer_one_sees_the_inner_kernels() -> None:
    x = tp.tensor([0.5, 1.5])

    def outer() -> tuple[tp.Tensor, tp.Profile[tp.Tensor], tp.Timing[tp.Tensor]]:
        a = x * x
        inner = tp.profile(tp.tanh, a)
        timing = tp.time(tp.exp, a)
        assert engine.observing == 1
        return tp.sum(a), inner, timing

    p = tp.profile(outer)
    _, inner, timing = p.result
    assert p.kernel_names == ["Multiply", "Tanh", "Exp", "Sum"]
    assert inner.kernel_names == ["Tanh"]
    assert timing.kernels == 1
    assert inner.kernels[0] is not p.kernels[1]
    assert inner.kernels[0].seconds == p.kernels[1].seconds  # one call, one measurement, seen by both
    assert inner.wall_seconds <= p.wall_seconds
    assert p.peak_bytes >= inner.peak_bytes
    assert_unobserved("numpy")


# -- the table and the summary --------------------------------------------------------------------------------------


def _made_up_profile() -> tp.Profile[None]:
    def kernel(name: str, phase: str, shapes: Any, dtypes: Any, out: Any, seconds: float, nbytes: int) -> Any:
        return tp.KernelProfile(name, "numpy", "cpu", phase, shapes, dtypes, out, ["float32"], seconds, nbytes, 1)

    matmul = ({"a": (2, 3), "b": (3, 4)}, {"a": "float32", "b": "float32"}, [(2, 4)])
    concat = ({"tensors": [(2,), (3,)]}, {"tensors": ["float32", "int32"]}, [(5,)])
    return tp.Profile(
        result=None,
        kernels=[
            kernel("BatchMatMul", "forward", *matmul, 0.0015, 32),
            kernel("Concat", "backward:Tanh", *concat, 2.5e-6, 20),
            kernel("BatchMatMul", "forward", *matmul, 0.0005, 32),
        ],
        new_tensors=3,
        new_bytes=84,
        peak_bytes=52,
        kept_bytes=32,
        kernel_seconds=0.0020025,
        wall_seconds=0.003,
    )


TABLE = """\
kernel       phase          backend  device  inputs                            outputs        new bytes    time
BatchMatMul  forward        numpy    cpu     a=float32[2, 3], b=float32[3, 4]  float32[2, 4]       32 B  1.5 ms
Concat       backward:Tanh  numpy    cpu     tensors=[float32[2], int32[3]]    float32[5]          20 B  2.5 µs
BatchMatMul  forward        numpy    cpu     a=float32[2, 3], b=float32[3, 4]  float32[2, 4]       32 B  500 µs

3 kernel calls: 2 ms in kernels, 3 ms wall; 3 new tensors, 84 B new, peak 52 B, kept 32 B

kernel       calls   total    mean  share  new bytes
BatchMatMul      2    2 ms    1 ms  99.9%       64 B
Concat           1  2.5 µs  2.5 µs   0.1%       20 B"""


def test_the_table_text() -> None:
    p = _made_up_profile()
    assert p.table() == TABLE
    assert str(p) == TABLE
    totals = "3 kernel calls: 2 ms in kernels, 3 ms wall; 3 new tensors, 84 B new, peak 52 B, kept 32 B"
    assert repr(p) == f"<Profile of {totals}>"
    assert p.kernel_names == ["BatchMatMul", "Concat"]
    narrow = p.table(max_width=20).splitlines()
    assert re.split(" {2,}", narrow[2])[4] == "tensors=[float32[..."


def test_summary_rows_add_up_the_calls_of_each_kernel_most_time_first() -> None:
    rows = _made_up_profile().summary()
    assert rows == [tp.KernelSummary("BatchMatMul", 2, 0.002, 64), tp.KernelSummary("Concat", 1, 2.5e-6, 20)]
    assert rows[0].mean_seconds == pytest.approx(0.001)

    p = tp.profile(tp.grads(tanh_loss), [tp.tensor([1.0, 2.0, 3.0]), tp.tensor([0.5, 0.5, 0.5])])
    rows = p.summary()
    assert {row.name: row.calls for row in rows} == {name: 4 if name == "Multiply" else 1 for name in p.kernel_names}
    assert [row.seconds for row in rows] == sorted((row.seconds for row in rows), reverse=True)
    assert sum(row.new_bytes for row in rows) == p.new_bytes
    lines = str(p).splitlines()
    assert len(lines) == 1 + 10 + 3 + 1 + len(rows)  # header, kernels, blank + totals + blank, header, rows
    assert lines[5].split()[:2] == ["BroadcastTo", "backward:Sum"]
    assert "10 kernel calls:" in lines[12]


# -- tp.time ----------------------------------------------------------------------------------------------------------


def test_time_counts_the_kernels_and_orders_the_times() -> None:
    x = tp.tensor([1.0, 2.0, 3.0])
    t = tp.time(lambda x: tp.sum(x * x), x)
    assert t.result.item() == 14.0
    assert t.kernels == 2
    assert 0 < t.kernel_seconds <= t.wall_seconds
    assert t.wall_ms == pytest.approx(t.wall_seconds * 1e3)
    assert t.kernel_ms == pytest.approx(t.kernel_seconds * 1e3)
    assert repr(t).endswith("in 2 kernel calls>")
    g = tp.time(tp.grads(tanh_loss), [x, tp.tensor([1.0, 1.0, 1.0])])
    assert g.kernels == len(EXPECTED)
    assert tp.time(lambda: None).kernels == 0
    assert_unobserved("numpy")


def test_tp_time_leaves_the_time_module_alone() -> None:
    assert tp.time is not time_module  # type: ignore[comparison-overlap]
    assert callable(time_module.perf_counter)
    assert "profile" in tp.__all__
    assert "time" not in tp.__all__  # `from tensorplug import *` must not shadow `import time`
    namespace: dict[str, Any] = {"time": time_module}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec("from tensorplug import *", namespace)
    assert namespace["time"] is time_module
    assert namespace["profile"] is tp.profile
