"""Debug mode (tp.debug, TENSORPLUG_DEBUG=1): the first NaN or inf a kernel returns, or a gradient holds, raises
tp.NonFiniteError naming the kernel, backend, inputs, attrs and phase; nothing is checked outside it.

Which kernel is to blame is worked out by hand from the ops' definitions (log(-1) is NaN, 1/0 is inf, sqrt's
gradient dy / (2 sqrt(x)) is inf at 0 and 0/0 = NaN when dy is 0 there).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from profile_expectation import assert_unobserved

import tensorplug as tp
from tensorplug._inspection._debug import _CHECKER
from tensorplug._runtime._state import state

NAN = math.nan
INF = math.inf


@pytest.fixture(autouse=True)
def _quiet_numpy() -> Iterator[None]:
    """NumPy warns on log(-1), 1/0 and overflow: expected here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _assert_clean() -> None:
    """No observer is left, no tape, no backprop phase; the tables hold the kernels themselves; a grad works."""
    assert_unobserved("numpy")
    y = tp.log(tp.tensor([-1.0]))  # unchecked again: NaN, silently
    assert np.isnan(y.numpy()).all()
    assert tp.grad(lambda x: tp.sum(x * x))(tp.tensor([1.0, 3.0])).tolist() == [2.0, 6.0]


def _raises(fn: Callable[[], Any]) -> tp.NonFiniteError:
    with tp.debug(), pytest.raises(tp.NonFiniteError) as info:
        fn()
    return info.value


def _in_a_thread(fn: Callable[[], Any]) -> BaseException | None:
    """Run ``fn`` in a new thread; what it raised (None if nothing)."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return raised[0] if raised else None


# -- forward -------------------------------------------------------------------------------------------------------


def test_nan_from_log_of_a_negative_number_names_the_kernel_and_everything_about_the_call() -> None:
    x = tp.tensor([1.0, -1.0, 4.0])
    e = _raises(lambda: tp.log(x))
    assert (e.kernel, e.backend, e.gradient_of, e.nan, e.inf) == ("Log", "numpy", None, 1, 0)
    message = str(e)
    assert "kernel 'Log' on backend 'numpy' (device cpu) returned NaN in the forward pass" in message
    assert "1 NaN of 3 elements (the first at index (1,)) in its output float32[3]" in message
    assert "inputs: x=float32[3]\n" in message  # finite: no "holding"
    assert "attrs: {}" in message
    assert "Its inputs were finite, so 'Log' made the NaN" in message
    _assert_clean()


def test_nan_from_zero_over_zero_and_inf_from_one_over_zero() -> None:
    zero = tp.tensor([0.0, 2.0])
    e = _raises(lambda: tp.tensor([0.0, 1.0]) / zero)
    assert (e.kernel, e.nan, e.inf) == ("RealDiv", 1, 0)
    assert "inputs: a=float32[2], b=float32[2]" in str(e)
    e = _raises(lambda: tp.tensor([1.0, 1.0]) / zero)
    assert (e.kernel, e.nan, e.inf) == ("RealDiv", 0, 1)
    assert "returned inf in the forward pass: 1 inf of 2 elements (the first at index (0,))" in str(e)


def test_inf_from_exp_of_a_large_number_and_both_kinds_at_once() -> None:
    e = _raises(lambda: tp.exp(tp.tensor([[0.0, 1000.0]])))
    assert (e.kernel, e.nan, e.inf) == ("Exp", 0, 1)
    assert "(the first at index (0, 1)) in its output float32[1, 2]" in str(e)
    e = _raises(lambda: tp.log(tp.tensor([0.0, -1.0, 0.0])))
    assert (e.nan, e.inf) == (1, 2)
    assert "returned NaN and inf in the forward pass: 1 NaN and 2 inf of 3 elements" in str(e)


def test_attrs_and_a_0d_output_are_described() -> None:
    big = tp.tensor([[3e38, 3e38]])  # finite float32 whose sum overflows
    e = _raises(lambda: tp.sum(big, axis=1))
    assert e.kernel == "Sum"
    assert "attrs: {'axis': (1,), 'keep_dims': False}" in str(e)
    e = _raises(lambda: tp.sum(big))
    assert "1 inf of 1 element in its output float32[]" in str(e)  # a 0-d output has no index to give


def test_the_error_is_a_floating_point_error_and_a_tensorplug_error() -> None:
    e = _raises(lambda: tp.sqrt(tp.tensor(-1.0)))
    assert isinstance(e, FloatingPointError)
    assert isinstance(e, ArithmeticError)
    assert isinstance(e, tp.TensorplugError)
    assert not isinstance(e, tp.KernelError)  # raised as is, not wrapped as the kernel's own failure


def test_finite_computations_run_unchanged() -> None:
    x, w = tp.tensor([[0.5, -1.0], [2.0, 0.25]]), tp.tensor([[1.5], [-0.75]])

    def loss(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
        return tp.mean(tp.square(tp.tanh(tp.matmul(x, w)))) + tp.sum(tp.log(tp.exp(x)))

    expected_value = loss(x, w).item()
    expected_grads = [g.numpy() for g in tp.grads(loss)([x, w])]
    with tp.debug():
        value = loss(x, w).item()
        grads = [g.numpy() for g in tp.grads(loss)([x, w])]
    assert value == expected_value
    for g, expected in zip(grads, expected_grads, strict=True):
        np.testing.assert_array_equal(g, expected)
    _assert_clean()


# -- a NaN that came in ----------------------------------------------------------------------------------------------


def test_a_nan_passed_in_is_blamed_on_the_first_kernel_returning_it_which_says_it_got_it() -> None:
    x = tp.tensor([NAN, 1.0])  # host data: no kernel made it
    e = _raises(lambda: tp.exp(x * 2.0))
    assert (e.kernel, e.nan) == ("Multiply", 1)
    message = str(e)
    assert "inputs: a=float32[2] holding 1 NaN, b=float32[]" in message
    assert "Its input 'a' held NaN or inf already: 'Multiply' passed it on rather than made it" in message
    assert "made the NaN" not in message


def test_list_inputs_say_which_item_held_it() -> None:
    e = _raises(lambda: tp.concat([tp.tensor([1.0]), tp.tensor([INF])], 0))
    assert e.kernel == "Concat"
    assert "inputs: tensors=[float32[1], float32[1] holding 1 inf]" in str(e)
    assert "Its input 'tensors[1]' held NaN or inf already" in str(e)


def test_kernels_returning_integers_or_bools_are_not_checked() -> None:
    x = tp.tensor([NAN, 1.0, INF])
    with tp.debug():
        assert tp.isnan(x).tolist() == [True, False, False]  # bool output
        assert tp.isinf(x).tolist() == [False, False, True]
        assert tp.argmax(tp.tensor([1.0, 3.0])).item() == 1  # int output
        assert tp.cast(tp.tensor([1.0, 2.0]), "int32").tolist() == [1, 2]
        with pytest.raises(tp.NonFiniteError):
            tp.abs(x)  # a float output is


def test_all_finite_of_the_default_backend_method_and_the_numpy_override() -> None:
    class HostOnly(tp.Backend):  # only the required methods: all_finite comes from the base class
        name = "host-only"

        def from_host(self, array: np.ndarray) -> Any:
            return array

        def to_host(self, raw: Any) -> np.ndarray:
            return np.asarray(raw)

        def dtype_of(self, raw: Any) -> str:
            return str(raw.dtype)

    for backend in (HostOnly(), tp.backend("numpy")):
        assert backend.all_finite(np.array([1.0, -2.0], np.float32))
        assert not backend.all_finite(np.array([1.0, NAN], np.float32))
        assert not backend.all_finite(np.array([[-INF]], np.float64))
        assert not backend.all_finite(np.float32(INF))  # a 0-d result of NumPy is a scalar
        assert backend.all_finite(np.array([1, 2], np.int64))
        assert backend.all_finite(np.array([True]))
        assert backend.all_finite(np.zeros((0, 3), np.float32))
        for size in (1, 16, 17, 100):  # small arrays are checked element by element in Python, larger ones by numpy
            values = np.arange(size, dtype=np.float32).reshape(size, 1)
            assert backend.all_finite(values)
            for bad in (NAN, INF, -INF):
                values[-1, 0] = bad
                assert not backend.all_finite(values), (size, bad)


# -- backward --------------------------------------------------------------------------------------------------------


def test_inf_made_by_a_gradient_names_the_kernel_whose_gradient_it_was() -> None:
    x = tp.tensor([0.0, 4.0])
    with tp.debug():
        assert tp.sqrt(x).tolist() == [0.0, 2.0]  # the forward pass is finite
    e = _raises(lambda: tp.grad(lambda x: tp.sum(tp.sqrt(x)))(x))
    assert (e.kernel, e.gradient_of, e.nan, e.inf) == ("RealDiv", "Sqrt", 0, 1)
    message = str(e)
    assert "returned inf in the backward pass, in the gradient of 'Sqrt'" in message
    assert "Its inputs were finite, so the gradient of 'Sqrt' made the inf" in message
    _assert_clean()


def test_nan_from_zero_times_an_infinite_gradient() -> None:
    # d/dx sum(sqrt(x) * 0) at 0: Sqrt's gradient gets dy = 0 and divides it by 2 * sqrt(0) = 0: 0/0.
    e = _raises(lambda: tp.grad(lambda x: tp.sum(tp.sqrt(x) * 0.0))(tp.tensor([0.0, 1.0])))
    assert (e.kernel, e.gradient_of, e.nan, e.inf) == ("RealDiv", "Sqrt", 1, 0)
    _assert_clean()


def test_a_gradient_no_kernel_made_is_checked_where_it_is_handed_back() -> None:
    @tp.custom_grad
    def bad(x: tp.Tensor) -> Any:
        return tp.identity(x), lambda dy: tp.tensor([1.0, NAN])  # host data: no kernel runs

    x = tp.tensor([1.0, 2.0])
    e = _raises(lambda: tp.grad(bad)(x))
    assert (e.kernel, e.gradient_of, e.nan) == ("custom_grad(bad)", "custom_grad(bad)", 1)
    message = str(e)
    assert "in the backward pass, the gradient of 'custom_grad(bad)' returned 1 NaN of 2 elements" in message
    assert "for its input 'input0' (float32[2] on backend 'numpy', device cpu)" in message
    assert "No kernel that debug mode watched made it" in message
    assert np.isnan(tp.grad(bad)(x).numpy()[1])  # unchecked outside debug mode
    _assert_clean()


def test_an_error_inside_a_higher_order_gradient_leaves_the_outer_tape_usable() -> None:
    x = tp.tensor(0.0)
    inner = tp.grad(lambda x: tp.sqrt(x))
    e = _raises(lambda: tp.grad(lambda x: inner(x) * 2.0)(x))
    assert e.gradient_of == "Sqrt"
    _assert_clean()
    assert tp.grad(tp.grad(lambda x: x * x * x))(tp.tensor(2.0)).item() == 12.0  # 6x


# -- scope: nesting, decorators, threads, profiles, the environment --------------------------------------------------


def test_blocks_nest_and_check_once() -> None:
    with tp.debug():
        with tp.debug():
            assert state.observers is not None
            assert state.observers.count(_CHECKER) == 1
            with pytest.raises(tp.NonFiniteError):
                tp.log(tp.tensor(-1.0))
        with pytest.raises(tp.NonFiniteError):  # the outer block still checks
            tp.log(tp.tensor(-1.0))
    _assert_clean()


def test_one_instance_entered_twice() -> None:
    mode = tp.debug()
    with mode:
        with mode:
            pass
        with pytest.raises(tp.NonFiniteError):  # still in the outer block
            tp.log(tp.tensor(-1.0))
    _assert_clean()


def test_one_instance_in_two_threads_at_once_leaves_each_threads_own_block() -> None:
    mode = tp.debug()
    entered, main_left = threading.Event(), threading.Event()
    raised: list[BaseException] = []

    def other() -> None:
        with mode:
            entered.set()
            main_left.wait(10)
            try:
                tp.log(tp.tensor(-1.0))  # still in its own block
            except tp.NonFiniteError as exc:
                raised.append(exc)

    thread = threading.Thread(target=other)

    def profiled() -> None:
        with mode:  # entered before the other thread enters, left before it leaves
            thread.start()
            entered.wait(10)
        tp.exp(tp.tensor(1.0))  # the profile still sees this thread's kernels

    p = tp.profile(profiled)
    main_left.set()
    thread.join()
    assert p.kernel_names == ["Exp"]
    assert len(raised) == 1
    _assert_clean()


def test_as_a_decorator() -> None:
    @tp.debug()
    def step(x: tp.Tensor) -> tp.Tensor:
        return tp.log(x)

    assert step(tp.tensor(1.0)).item() == 0.0
    with pytest.raises(tp.NonFiniteError) as info:
        step(tp.tensor(-1.0))
    assert info.value.kernel == "Log"
    assert step.__name__ == "step"
    _assert_clean()


def test_a_block_checks_its_own_thread_only_unless_all_threads() -> None:
    def log_of_minus_one() -> None:
        tp.log(tp.tensor(-1.0))

    with tp.debug():
        assert _in_a_thread(log_of_minus_one) is None
    with tp.debug(all_threads=True):
        assert isinstance(_in_a_thread(log_of_minus_one), tp.NonFiniteError)
        with pytest.raises(tp.NonFiniteError):
            log_of_minus_one()
        with tp.debug():  # this thread's own block: it still checks if the other ends first
            assert state.observers is not None
            assert _CHECKER in state.observers
    assert _in_a_thread(lambda: tp.debug()(log_of_minus_one)()) is not None
    log_of_minus_one()  # the other thread's block did not check this one
    _assert_clean()


def test_with_a_profile_both_see_the_kernels() -> None:
    x = tp.tensor([1.0, 2.0])
    with tp.debug():
        p = tp.profile(lambda: tp.sum(tp.log(x)))
        assert p.kernel_names == ["Log", "Sum"]
        with pytest.raises(tp.NonFiniteError):
            tp.profile(lambda: tp.log(-x))

    def inside() -> None:
        tp.exp(x)
        with tp.debug():
            tp.log(-x)

    with pytest.raises(tp.NonFiniteError) as info:
        tp.profile(inside)
    assert info.value.kernel == "Log"
    _assert_clean()


def test_outside_debug_mode_nothing_is_checked_or_wrapped() -> None:
    with tp.debug():
        pass
    _assert_clean()
    assert np.isinf(tp.exp(tp.tensor(1000.0)).item())


def _python(code: str, debug: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("TENSORPLUG_DEBUG", None)
    if debug is not None:
        env["TENSORPLUG_DEBUG"] = debug
    return subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env)


CHECK_THREADS = """
import sys, threading
import tensorplug as tp
print("lazy:", "tensorplug._inspection._debug" in sys.modules, "torch" in sys.modules)
found = []
def run():
    try:
        tp.log(tp.tensor(-1.0))
    except tp.NonFiniteError as exc:
        found.append("thread: " + exc.kernel)
thread = threading.Thread(target=run)
thread.start()
thread.join()
try:
    tp.grad(tp.sqrt)(tp.tensor(0.0))
except tp.NonFiniteError as exc:
    found.append("main: " + exc.kernel + " in the gradient of " + exc.gradient_of)
print(found)
"""


def test_the_environment_variable_checks_every_thread() -> None:
    done = _python(CHECK_THREADS, "1")
    assert done.returncode == 0, done.stderr
    assert "lazy: True False" in done.stdout  # debug mode loaded, torch not imported
    assert "['thread: Log', 'main: RealDiv in the gradient of Sqrt']" in done.stdout
    for off in (None, "0", ""):
        done = _python(CHECK_THREADS, off)
        assert done.returncode == 0, done.stderr
        assert "lazy: False False" in done.stdout  # without it, debug mode is not even imported
        assert "[]" in done.stdout
