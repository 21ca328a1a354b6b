"""Checked calls of the elementwise ops: once an op has checked a call on tensors of some dtypes, later calls
on tensors of those dtypes skip the dtype checks (``ops._checked``). Everything that may change what such a
call must do is shown here to reach it: kernels registered, backends switched or disposed, observers,
tapes and gradient overrides, tracing, other dtypes and shapes, other threads.

Each test first warms the op up (``warm``), which asserts that the entry the fast path uses is there, so
that what follows runs on that path and not on the one the first call took.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._engine import engine
from tensorplug.ops import _binary, _linalg, _reduction, _unary
from tensorplug.ops._checked import Site

TIMEOUT = 30.0


def warm(site: Site, dtype: str, call: Callable[[], Any]) -> Any:
    """Call ``call`` twice, so that ``site`` holds a current entry for ``dtype``; return the second result."""
    call()
    result = call()
    entry = site.entries.get(dtype)
    assert entry is not None, f"{site.op} made no entry for {dtype}"
    assert entry.table is engine.table
    return result


def override(kernel: str, fn: Callable[..., Any]) -> None:
    """Register ``fn`` for ``kernel`` on numpy over the plugin's own kernel (which says so with a warning)."""
    with pytest.warns(tp.PluginWarning, match="shadows"):
        tp.register_kernel(kernel, "numpy", fn, override=True)


def plus_ten(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["a"] + inputs["b"] + 10


def minus_x(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return -inputs["x"]


a, b = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)


# -- what the fast path runs ------------------------------------------------------------


def test_results_dtypes_and_tapes_are_those_of_the_first_call() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    assert warm(_binary._ADD, "float32", lambda: x + y).tolist() == [4.0, 6.0]
    less = warm(_binary._LESS, "float32", lambda: x < y)
    assert less._dtype == "bool"
    assert less.tolist() == [True, True]
    assert warm(_unary._TANH, "float32", lambda: tp.tanh(x)).tolist() == pytest.approx(np.tanh(a).tolist())
    out = x + y
    assert (out.dtype, out.backend, out._tape) == ("float32", "numpy", None)


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_registered_after_the_warm_up_is_the_one_called() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._ADD, "float32", lambda: x + y)
    warm(_unary._NEG, "float32", lambda: -x)
    override(K.ADD, plus_ten)
    override(K.NEG, minus_x)
    assert (x + y).tolist() == [14.0, 16.0]
    assert (x + y).tolist() == [14.0, 16.0]  # and its own entry, made by the call above, runs it too
    assert _binary._ADD.entries["float32"].fn is plus_ten
    assert (-x).tolist() == [-1.0, -2.0]
    tp.unregister_kernel(K.ADD, "numpy")
    assert (x + y).tolist() == [4.0, 6.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_error_on_the_fast_path_reads_as_on_the_first_call() -> None:
    calls = []

    def fails_second_time(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        if len(calls) >= 3:
            raise ValueError("kaboom")
        return inputs["a"] + inputs["b"]

    override(K.ADD, fails_second_time)
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._ADD, "float32", lambda: x + y)
    with pytest.raises(tp.KernelError) as info:
        x + y
    assert str(info.value) == (
        "kernel 'Add' on backend 'numpy' failed for inputs a=float32[2], b=float32[2] and attrs {}: ValueError: kaboom"
    )
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_tensorplug_error_of_a_kernel_passes_as_it_is_on_the_fast_path() -> None:
    cause = ValueError("inner")

    def refuses(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        if inputs["x"].size > 2:
            raise tp.ShapeError("refused") from cause
        return -inputs["x"]

    override(K.NEG, refuses)
    x = tp.tensor(a)
    warm(_unary._NEG, "float32", lambda: -x)
    with pytest.raises(tp.ShapeError, match=r"^refused$") as info:
        -tp.tensor([1.0, 2.0, 3.0])
    assert info.value.__cause__ is cause


def test_other_dtypes_shapes_and_operands_take_the_checked_path() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._SUB, "float32", lambda: x - y)
    warm(_binary._DIV, "float32", lambda: x / y)
    flags = tp.tensor([True, False])
    with pytest.raises(tp.DTypeError, match=r"sub: expects numeric tensors, got bool\[2\] and bool\[2\]"):
        flags - flags
    assert "bool" not in _binary._SUB.entries
    ints = tp.tensor([1, 3])
    assert (ints / ints).dtype == "float32"  # integers are divided in float32: converted, so no entry
    assert "int32" not in _binary._DIV.entries
    assert (ints / ints).tolist() == [1.0, 1.0]
    assert (x - tp.tensor([1.0, 1.0], "float64")).dtype == "float64"
    assert (x - 1).tolist() == [0.0, 1.0]
    assert (x - tp.tensor([[1.0], [2.0]])).shape == (2, 2)
    with pytest.raises(tp.ShapeError, match=r"sub: shapes \(2,\) and \(3,\) cannot be broadcast together"):
        x - tp.tensor([1.0, 2.0, 3.0])


def test_python_scalars_after_the_warm_up() -> None:
    x, ints, f64 = tp.tensor(a), tp.tensor([2, 3]), tp.tensor([1.0], "float64")
    warm(_binary._SUB, "float32", lambda: x - 1.0)  # a float meeting a float tensor: a cached tensor of its dtype
    assert (1.0 - x).tolist() == [0.0, -1.0]
    assert (x - 0.0).tolist() == [1.0, 2.0]
    assert (x - 3e39).tolist() == [-np.inf, -np.inf]  # past float32's range, as the checks make it
    assert (f64 - 0.5).dtype == "float64"
    assert (ints - 1.5).dtype == "float32"  # a float meeting integers: both become float32
    warm(_binary._POW, "int32", lambda: ints**ints)
    with pytest.raises(tp.DTypeError, match="integers to negative integer powers are not integers"):
        ints**-1
    assert tp.grad(lambda x: tp.sum(x * 3.0))(x).tolist() == [3.0, 3.0]
    assert tp.grad(lambda x: tp.sum(3.0 * x))(x).tolist() == [3.0, 3.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_reductions_after_the_warm_up() -> None:
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    warm(_reduction._SUM, "float32", lambda: tp.sum(x))
    warm(_reduction._MAX, "float32", lambda: tp.max(x, axis=1))
    assert tp.sum(x, axis=0, keepdims=True).tolist() == [[4.0, 6.0]]
    assert tp.sum(tp.tensor([True, True, False])).dtype == "int32"  # bool counts in int32: converted, no entry
    assert tp.mean(tp.tensor([1, 2])).dtype == "float32"
    with pytest.raises(tp.ShapeError, match="axis 2 is out of range for a tensor of rank 2"):
        tp.sum(x, axis=2)
    with pytest.raises(tp.ShapeError, match="max: cannot reduce float32\\[0, 2\\] over an axis of size 0"):
        tp.max(tp.zeros((0, 2)), axis=0)
    with pytest.raises(tp.DTypeError, match="max: expects a numeric tensor"):
        tp.max(tp.tensor([True]))
    override(K.SUM, lambda inputs, attrs, backend: inputs["x"].sum(axis=attrs["axis"]) * 0 - 1)
    assert tp.sum(x).tolist() == -1.0
    assert tp.grad(lambda x: tp.sum(x * x))(x).tolist() == [[2.0, 4.0], [6.0, 8.0]]


@pytest.mark.usefixtures("tensorplug_registries")
def test_matmul_after_the_warm_up() -> None:
    m, v = tp.tensor([[1.0, 2.0], [3.0, 4.0]]), tp.tensor([1.0, 1.0])
    warm(_linalg._MATMUL, "float32", lambda: m @ m)
    assert tp.matmul(m, m, transpose_b=True).tolist() == [[5.0, 11.0], [11.0, 25.0]]
    assert (m @ v).tolist() == [3.0, 7.0]  # a vector: reshaped, on the general path
    with pytest.raises(tp.ShapeError, match="matmul: inner dimensions differ"):
        m @ tp.ones((3, 2))
    with pytest.raises(tp.DTypeError, match="matmul: expects numeric tensors"):
        tp.tensor([[True]]) @ tp.tensor([[True]])
    assert (m @ tp.tensor([[1, 0], [0, 1]])).dtype == "float32"  # an integer meeting a float takes its dtype
    assert tp.grad(lambda m: tp.sum(m @ m))(m).tolist() == [[7.0, 11.0], [9.0, 13.0]]
    override(K.BATCH_MAT_MUL, lambda inputs, attrs, backend: inputs["a"] * 0)
    assert (m @ m).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_a_disposed_operand_is_still_a_clear_error() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._ADD, "float32", lambda: x + y)
    warm(_unary._EXP, "float32", lambda: tp.exp(x))
    y.dispose()
    with pytest.raises(tp.TensorplugError, match="disposed"):
        x + y
    x.dispose()
    with pytest.raises(tp.TensorplugError, match="disposed"):
        tp.exp(x)


def test_numpy_kernels_stay_quiet_on_the_fast_path() -> None:
    big = tp.tensor([3e38, -1.0])
    warm(_binary._ADD, "float32", lambda: big + big)
    warm(_unary._LOG, "float32", lambda: tp.log(big))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (big + big).tolist()[0] == np.inf
        assert np.isnan(tp.log(big).tolist()[1])


# -- backends -------------------------------------------------------------------------


class BoxedBackend(tp.Backend):
    """Storage is a numpy array in a box, so that a kernel of the numpy backend cannot take it."""

    def from_host(self, array: np.ndarray) -> Any:
        return _Boxed(array)

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw.array)

    def dtype_of(self, raw: Any) -> str:
        return str(raw.array.dtype.name)


class _Boxed:
    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.shape = array.shape


def boxed_add(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return _Boxed(np.add(inputs["a"].array, inputs["b"].array))


@pytest.mark.usefixtures("tensorplug_registries")
def test_switching_backends_after_the_warm_up() -> None:
    tp.register_backend("boxed", BoxedBackend, priority=-5)
    tp.register_kernel(K.ADD, "boxed", boxed_add)
    try:
        x, y = tp.tensor(a), tp.tensor(b)
        warm(_binary._ADD, "float32", lambda: x + y)
        tp.set_backend("boxed")
        out = x + y  # numpy tensors, moved to the active backend as run_kernel moves them
        assert (out.backend, out.tolist()) == ("boxed", [4.0, 6.0])
        bx, by = tp.tensor(a), tp.tensor(b)
        assert warm(_binary._ADD, "float32", lambda: bx + by).backend == "boxed"
        tp.set_backend("numpy")
        assert (x + y).backend == "numpy"
        assert (bx + by).backend == "numpy"  # moved back: the numpy entry is current again, the inputs are not its
        assert type(x._data) is np.ndarray
    finally:
        tp.set_backend("numpy")
        tp.remove_backend("boxed")


def test_a_tensor_of_another_backend_is_moved_while_the_entry_is_current() -> None:
    tp.register_backend("boxed", BoxedBackend, priority=-5)
    try:
        x, y = tp.tensor(a), tp.tensor(b)
        warm(_binary._ADD, "float32", lambda: x + y)
        boxed = x.to_backend("boxed")
        out = boxed + y
        assert (out.backend, out.tolist()) == ("numpy", [4.0, 6.0])
        assert type(out._data) is np.ndarray
    finally:
        tp.remove_backend("boxed")


# -- observers, tapes, tracing ------------------------------------------------------


def test_observers_see_calls_made_after_the_warm_up() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._MUL, "float32", lambda: x * y)
    warm(_unary._SQUARE, "float32", lambda: tp.square(x))
    # An observer coming puts a new dispatch table in place: the first call of each op in the block makes an
    # entry anew, which holds the observed kernel, and the second runs it.
    profile = tp.profile(lambda: tp.square(tp.square(x * y) * y))
    assert [k.name for k in profile.kernels] == [K.MULTIPLY, K.SQUARE, K.MULTIPLY, K.SQUARE]
    assert [k.name for k in tp.profile(lambda: x * y).kernels] == [K.MULTIPLY]  # again: a new observer
    assert [k.name for k in tp.profile(lambda: x * y * y).kernels] == [K.MULTIPLY, K.MULTIPLY]
    with tp.debug(), pytest.raises(tp.NonFiniteError, match="Log"):
        tp.log(-x)


def test_tapes_record_calls_made_after_the_warm_up() -> None:
    x, w = tp.tensor(a), tp.tensor(b)
    warm(_binary._MUL, "float32", lambda: x * w)
    warm(_unary._TANH, "float32", lambda: tp.tanh(x))
    grads = tp.grads(lambda x, w: tp.sum(tp.tanh(x * w)))([x, w])
    expected = (1 - np.tanh(a * b) ** 2) * b
    assert grads[0].tolist() == pytest.approx(expected.tolist())
    assert tp.grad(lambda x: tp.sum(tp.tanh(x * w)))(x).tolist() == pytest.approx(expected.tolist())
    for _ in range(2):  # the second time, x still carries the first tape's mark: the second watches it by id
        grad = tp.grad(lambda x: tp.sum(tp.tanh(x)))(x)
        assert grad.tolist() == pytest.approx((1 - np.tanh(a) ** 2).tolist())


def test_gradient_overrides_reach_calls_made_after_the_warm_up() -> None:
    x, w = tp.tensor(a), tp.tensor(b)
    warm(_binary._MUL, "float32", lambda: x * w)

    def tripled(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return dy * 3.0, dy * 3.0

    with tp.gradient_overrides({K.MULTIPLY: tripled}):
        grad = tp.grad(lambda x: tp.sum(x * w))(x)
    assert grad.tolist() == [3.0, 3.0]


def test_tracing_sees_calls_made_after_the_warm_up() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._ADD, "float32", lambda: x + y)
    warm(_unary._EXP, "float32", lambda: tp.exp(x))
    f = tp.function(lambda x, y: tp.exp(tp.exp(x - y) + y))
    assert [step.kernel for step in f.program(x, y).kernel_steps] == [K.SUB, K.EXP, K.ADD, K.EXP]
    assert f(x, y).tolist() == pytest.approx(np.exp(np.exp(a - b) + b).tolist())


# -- threads -------------------------------------------------------------------------


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_registered_by_another_thread_is_called_once_registered() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._ADD, "float32", lambda: x + y)
    registered = threading.Event()

    def register() -> None:
        override(K.ADD, plus_ten)
        registered.set()

    thread = threading.Thread(target=register)
    thread.start()
    assert registered.wait(TIMEOUT)
    thread.join(TIMEOUT)
    assert (x + y).tolist() == [14.0, 16.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_backend_switched_by_another_thread_is_the_one_used() -> None:
    tp.register_backend("boxed", BoxedBackend, priority=-5)
    tp.register_kernel(K.ADD, "boxed", boxed_add)
    try:
        x, y = tp.tensor(a), tp.tensor(b)
        warm(_binary._ADD, "float32", lambda: x + y)
        thread = threading.Thread(target=lambda: tp.set_backend("boxed"))
        thread.start()
        thread.join(TIMEOUT)
        assert tp.get_backend() == "boxed"
        assert (x + y).backend == "boxed"
    finally:
        tp.set_backend("numpy")
        tp.remove_backend("boxed")


def test_an_observer_of_another_thread_sees_only_that_threads_calls() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._ADD, "float32", lambda: x + y)
    observing, done = threading.Event(), threading.Event()
    seen: list[list[str]] = []

    def observed() -> None:
        def body() -> None:
            observing.set()
            assert done.wait(TIMEOUT)
            x * y * y

        seen.append([k.name for k in tp.profile(body).kernels])

    thread = threading.Thread(target=observed)
    thread.start()
    assert observing.wait(TIMEOUT)
    assert (x + y).tolist() == [4.0, 6.0]  # while the other thread observes: not its call
    done.set()
    thread.join(TIMEOUT)
    assert seen == [[K.MULTIPLY, K.MULTIPLY]]


# -- a kernel's output dtype is checked against the op's declaration ----------------------------


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_returning_another_dtype_than_the_op_declares_is_refused() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    override(K.ADD, lambda inputs, attrs, backend: (inputs["a"] + inputs["b"]).astype(np.float64))
    with pytest.raises(tp.KernelError, match=r"'Add' on backend 'numpy' returned float64\[2\] for add\(\) on float32 "):
        x + y
    learnt = _binary._ADD.entries.get("float32")
    assert learnt is None or learnt.table is not engine.table  # nothing learnt from the refused call
    with pytest.raises(tp.KernelError, match="float64"):  # and the next call is checked again
        x + y
    override(K.LESS, lambda inputs, attrs, backend: (inputs["a"] < inputs["b"]).astype(np.int32))
    with pytest.raises(tp.KernelError, match=r"'Less' on backend 'numpy'.*int32.*bool"):
        tp.less(x, y)
    override(K.SUM, lambda inputs, attrs, backend: np.sum(inputs["x"], dtype=np.float64))
    with pytest.raises(tp.KernelError, match=r"'Sum' on backend 'numpy'.*float64"):
        tp.sum(x)
    override(K.EXP, lambda inputs, attrs, backend: np.exp(inputs["x"].astype(np.float64)))
    with pytest.raises(tp.KernelError, match=r"'Exp' on backend 'numpy'.*float64"):
        tp.exp(x)


def test_the_sites_declare_what_the_kernel_reference_says() -> None:
    from tensorplug.kernel_reference import REFERENCE

    sites = [s for m in (_binary, _linalg, _reduction, _unary) for s in vars(m).values() if isinstance(s, Site)]
    assert len(sites) > 50
    for site in sites:
        declared = REFERENCE[site.kernel].outputs[0].dtype
        assert site.out == (None if declared.startswith("like:") else declared), site.op


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_returning_another_dtype_than_its_dtype_attr_is_refused() -> None:
    override(K.FILL, lambda inputs, attrs, backend: np.full(attrs["shape"], attrs["value"], np.float64))
    assert tp.zeros((2,), "float64").dtype == "float64"
    with pytest.raises(tp.KernelError, match=r"'Fill' on backend 'numpy' returned float64\[2\] for fill\(.*float32"):
        tp.zeros((2,))
    override(K.CAST, lambda inputs, attrs, backend: inputs["x"].astype(np.int64))
    with pytest.raises(tp.KernelError, match=r"'Cast' on backend 'numpy' returned int64\[2\] for cast\(.*int32"):
        tp.cast(tp.tensor([1.5, 2.5]), "int32")
    override(K.RANGE, lambda inputs, attrs, backend: np.arange(attrs["start"], attrs["stop"], attrs["step"]))
    with pytest.raises(tp.KernelError, match=r"'Range' on backend 'numpy' returned float64\[3\] for range\("):
        tp.range(0.0, 3.0)
