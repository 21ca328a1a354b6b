"""tp.function as outside users hit it: threads, aliased arguments, static zeros and NaNs, failed steps,
hyper-parameters changed between steps, the source of dropped traces, and what a replay raises and returns."""

from __future__ import annotations

import linecache
import struct
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

WAIT = 30.0  # seconds an event may take before the test fails (a hang, not a timing)


@pytest.fixture(autouse=True, params=["lowered", "plain"])
def replay_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with the numpy backend's lowering and with the plain replay."""
    if request.param == "plain":
        from tensorplug_numpy._backend import NumpyBackend

        monkeypatch.setattr(NumpyBackend, "lower_step", lambda self, program, index: None)
    return str(request.param)


def bits(t: tp.Tensor) -> bytes:
    return t.numpy().tobytes()


def wait(event: threading.Event) -> None:
    assert event.wait(WAIT), "the other thread never got there"


def run_in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def body() -> None:
        try:
            target()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=body)
    thread.start()
    return thread, errors


# -- a trace touches nothing other threads see ------------------------------------------------------------------


@pytest.mark.parametrize("when", ["while", "after"])
def test_a_trace_in_another_thread_does_not_freeze_the_variables_this_trace_reads(when: str) -> None:
    """Thread B's trace is paused before it reads its weight while thread A traces a step of its own (B reads
    its weight while A's trace runs, or after it ended): B's replays still read the weight (two threads
    training two models)."""
    wa, wb = tp.variable([4.0], name="wa"), tp.variable([4.0], name="wb")
    opt_a, opt_b = tp.train.SGD(0.1), tp.train.SGD(0.1)
    b_tracing, a_tracing, a_traced = threading.Event(), threading.Event(), threading.Event()

    @tp.function
    def step_a() -> tp.Tensor:
        a_tracing.set()
        return opt_a.minimize(lambda: tp.sum(wa * wa), [wa])

    @tp.function
    def step_b() -> tp.Tensor:
        b_tracing.set()
        wait(a_tracing if when == "while" else a_traced)
        return opt_b.minimize(lambda: tp.sum(wb * wb), [wb])

    def train_b() -> None:
        for _ in range(5):
            step_b()

    thread, errors = run_in_thread(train_b)
    wait(b_tracing)
    for _ in range(5):
        step_a()
        a_traced.set()
    thread.join()
    assert not errors, errors
    eager = tp.variable([4.0])
    eager_opt = tp.train.SGD(0.1)
    for _ in range(5):
        eager_opt.minimize(lambda: tp.sum(eager * eager), [eager])
    assert bits(wa) == bits(wb) == bits(eager)
    assert step_a.trace_count == step_b.trace_count == 1


def test_an_assign_from_another_thread_during_a_trace_is_not_taken_for_a_constant() -> None:
    w = tp.variable([1.0, 2.0])
    tracing, assigned = threading.Event(), threading.Event()

    @tp.function
    def f() -> tp.Tensor:
        tracing.set()
        wait(assigned)
        return w * 2.0

    thread, errors = run_in_thread(f)
    wait(tracing)
    w.assign(tp.tensor([5.0, 6.0]))
    assigned.set()
    thread.join()
    assert not errors, errors
    w.assign(tp.tensor([7.0, 8.0]))
    assert f().tolist() == [14.0, 16.0]
    assert f.trace_count == 1


def test_other_threads_read_and_assign_a_variable_while_a_trace_reads_it() -> None:
    """While a trace holds its own view of w, another thread reads w's value and assigns it as it would
    without the trace; the trace, and its replays, read w when they start."""
    w = tp.variable([1.0])
    read, go_on = threading.Event(), threading.Event()
    seen: list[float] = []

    @tp.function
    def f() -> tp.Tensor:
        y = w + 1.0
        read.set()
        wait(go_on)
        return y

    thread, errors = run_in_thread(lambda: seen.append(f().item()))
    wait(read)
    assert (w + 0.0).item() == 1.0
    w.assign(w * 10.0)
    assert w.item() == 10.0
    go_on.set()
    thread.join()
    assert not errors, errors
    assert seen == [2.0]
    assert f().item() == 11.0


# -- the same tensor passed twice -------------------------------------------------------------------------------


def grad_of_q_times_y(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
    return tp.grad(lambda q: tp.sum(q * y))(x)


def test_the_same_tensor_as_two_arguments_gives_the_eager_gradient() -> None:
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 5.0])
    f = tp.function(grad_of_q_times_y)
    for x, y in [(a, a), (a, b), (b, b), (b, a), (a, a)]:
        assert f(x, y).tolist() == grad_of_q_times_y(x, y).tolist()
    assert f(a, a).tolist() == [2.0, 4.0]
    assert f.trace_count == 2  # one trace with one tensor twice, one with two tensors


def test_aliasing_through_keywords_and_nested_arguments() -> None:
    def f(pair: tuple[tp.Tensor, list[tp.Tensor]], y: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda q: tp.sum(q * pair[1][0] * y))(pair[0])

    traced = tp.function(f)
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])
    for args in [((a, [a]), a), ((a, [b]), a), ((a, [a]), b), ((b, [a]), b)]:
        assert traced(*args).tolist() == f(*args).tolist()
        assert traced(args[0], y=args[1]).tolist() == f(*args).tolist()


def test_a_view_of_an_argument_is_another_tensor_as_it_is_eagerly() -> None:
    """Only the same tensor object is one argument: a slice of it is a tensor of its own, eagerly too."""
    a = tp.tensor([1.0, 2.0])
    f = tp.function(grad_of_q_times_y)
    assert f(a, a[:]).tolist() == grad_of_q_times_y(a, a[:]).tolist() == [1.0, 2.0]


def test_a_variable_passed_as_an_argument_and_read_as_a_variable_is_one_tensor() -> None:
    w = tp.variable([1.0, 3.0])

    def f(x: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda q: tp.sum(q * w))(x)

    traced = tp.function(f)
    assert traced(w).tolist() == f(w).tolist() == [2.0, 6.0]
    w.assign(tp.tensor([2.0, 5.0]))
    assert traced(w).tolist() == f(w).tolist() == [4.0, 10.0]


def test_keyword_arguments_in_another_order_reach_the_same_parameters() -> None:
    def f(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        return x - tp.sum(y)

    traced = tp.function(f)
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([10.0, 20.0, 30.0])
    assert traced(y=b, x=a).tolist() == [-59.0, -58.0]
    assert traced(x=a, y=b).tolist() == [-59.0, -58.0]
    assert traced.trace_count == 1


# -- static arguments as NumPy tells them apart -----------------------------------------------------------------


@pytest.mark.parametrize(
    "zeros",
    [(0.0, -0.0), (np.float32(0.0), np.float32(-0.0)), (np.float64(0.0), np.float64(-0.0)), ((0.0,), (-0.0,))],
    ids=["float", "np.float32", "np.float64", "tuple"],
)
def test_a_static_zero_and_minus_zero_trace_apart(zeros: tuple[Any, Any]) -> None:
    def divide(x: tp.Tensor, s: Any) -> tp.Tensor:
        return x / (s[0] if isinstance(s, tuple) else s)

    traced = tp.function(divide)
    x = tp.tensor([1.0, -1.0])
    with np.errstate(divide="ignore"):
        for s in [*zeros, *zeros]:
            assert bits(traced(x, s)) == bits(divide(x, s))
    assert traced.trace_count == 2


def test_a_static_nan_traces_once_and_nans_of_other_bits_apart() -> None:
    quiet = float("nan")
    other = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    traced = tp.function(lambda x, s: x + s)
    x = tp.tensor([1.0, 2.0], "float64")
    for s in [quiet, float("nan"), other, struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]]:
        assert bits(traced(x, s)) == bits(x + s)
    assert traced.trace_count == 2


def test_numpy_scalars_of_other_dtypes_trace_apart() -> None:
    traced = tp.function(lambda x, s: x * s)
    x = tp.tensor([1.5], "float32")
    for s in [1.0, np.float32(1.0), np.float64(1.0), np.int32(1), 1]:
        assert traced(x, s).dtype == (x * s).dtype
    assert traced.trace_count == 5


def test_the_eager_scalar_cache_keeps_the_sign_of_a_numpy_zero() -> None:
    x = tp.tensor([1.0, -1.0], "float64")
    with np.errstate(divide="ignore"):
        expected = np.array([1.0, -1.0]) / np.float64(0.0)
        assert (x / np.float64(-0.0)).tolist() == [-np.inf, np.inf]
        assert (x / np.float64(0.0)).tolist() == expected.tolist() == [np.inf, -np.inf]
        assert (x * np.float64(-0.0)).numpy().tobytes() == (np.array([1.0, -1.0]) * np.float64(-0.0)).tobytes()


# -- a failed step changes nothing ------------------------------------------------------------------------------


def state_of(opt: tp.train.Optimizer, *variables: tp.Variable) -> list[Any]:
    """Iterations, the variables' values and the optimizer's slots (named by slot, not by variable)."""
    slots = [(name.rpartition("/")[2], bits(w)) for name, w in opt.get_weights()]
    return [opt.iterations, [bits(v) for v in variables], slots]


def test_a_replay_that_raises_counts_no_step_and_assigns_nothing() -> None:
    w = tp.variable([1.0, 2.0, 3.0])
    opt = tp.train.Adam(0.1)
    step = tp.function(lambda i: opt.minimize(lambda: tp.sum(tp.square(w[i])), [w]))
    step(tp.tensor([0, 1]))
    before = state_of(opt, w)
    with pytest.raises(tp.IndexingError):
        step(tp.tensor([0, 7]))
    assert state_of(opt, w) == before
    assert opt.iterations == 1
    step(tp.tensor([2, 1]))
    eager_w, eager_opt = tp.variable([1.0, 2.0, 3.0]), tp.train.Adam(0.1)
    for i in ([0, 1], [2, 1]):
        eager_opt.minimize(lambda i=i: tp.sum(tp.square(eager_w[tp.tensor(i)])), [eager_w])
    assert state_of(opt, w) == state_of(eager_opt, eager_w)
    assert step.trace_count == 1


def overflowing_step(opt: tp.train.Optimizer, w1: tp.Variable, w2: tp.Variable, s: tp.Tensor) -> tp.Tensor:
    """Adam's update of w2 squares a gradient of 1e30, which overflows float32 after w1 is assigned."""
    return opt.minimize(lambda: tp.sum(w1 * w1) + tp.sum(w2 * s), [w1, w2])


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "replay"])
def test_a_step_that_raises_after_assigning_some_variables_leaves_them_all_as_they_were(traced: bool) -> None:
    w1, w2 = tp.variable([1.0, 2.0]), tp.variable([1.0])
    opt = tp.train.Adam(0.1)
    step = tp.function(overflowing_step) if traced else overflowing_step
    step(opt, w1, w2, tp.tensor([1.0]))
    before = state_of(opt, w1, w2)
    with tp.debug(), pytest.raises(tp.NonFiniteError, match="Square"):
        step(opt, w1, w2, tp.tensor([1e30]))
    assert state_of(opt, w1, w2) == before


def test_a_first_step_that_raises_makes_no_slots() -> None:
    w1, w2 = tp.variable([1.0, 2.0]), tp.variable([1.0])
    opt = tp.train.Adam(0.1)
    with tp.debug(), pytest.raises(tp.NonFiniteError):
        overflowing_step(opt, w1, w2, tp.tensor([1e30]))
    assert opt.get_weights()[1:] == []
    assert (w1.tolist(), w2.tolist(), opt.iterations) == ([1.0, 2.0], [1.0], 0)


# -- hyper-parameters changed between steps ---------------------------------------------------------------------

SCHEDULES: dict[str, tuple[Callable[[], tp.train.Optimizer], list[dict[str, Any]]]] = {
    "SGD": (lambda: tp.train.SGD(0.1), [{"learning_rate": r} for r in (0.1, 0.05, 0.0, 0.2, 0.01)]),
    "Momentum": (
        lambda: tp.train.Momentum(0.1, 0.9),
        [{"learning_rate": 0.1}, {"learning_rate": 0.02, "momentum": 0.5}, {"momentum": 0.0}, {"learning_rate": 0.3}],
    ),
    "Adam": (
        lambda: tp.train.Adam(0.1),
        [{"learning_rate": 0.05}, {"beta1": 0.5}, {"beta2": 0.9, "epsilon": 1e-3}, {"learning_rate": 0.2}],
    ),
    "RMSProp": (
        lambda: tp.train.RMSProp(0.1, momentum=0.5),
        [{"learning_rate": 0.05}, {"decay": 0.5}, {"momentum": 0.9, "epsilon": 1e-3}, {"learning_rate": 0.2}],
    ),
    "RMSProp centered": (
        lambda: tp.train.RMSProp(0.1, centered=True),
        [{"learning_rate": 0.05}, {"decay": 0.5, "epsilon": 1e-3}, {"learning_rate": 0.2}],
    ),
    "Adagrad": (lambda: tp.train.Adagrad(0.5), [{"learning_rate": r} for r in (0.5, 0.1, 1.0, 0.25)]),
}


def train_with_schedule(
    make: Callable[[], tp.train.Optimizer], schedule: list[dict[str, Any]], traced: bool
) -> tuple[list[Any], int]:
    w = tp.variable([1.0, -2.0, 3.0])
    target = tp.tensor([0.5, 0.5, 0.5])
    opt = make()

    def step() -> tp.Tensor:
        return opt.minimize(lambda: tp.sum(tp.square(w - target) * tp.tensor([1.0, 2.0, 3.0])), [w])

    run = tp.function(step) if traced else step
    losses = []
    for changes in schedule:
        for name, value in changes.items():
            setattr(opt, name, value)
        losses.append(bits(run()))
    traces = run.trace_count if isinstance(run, tp.Function) else 0
    return [losses, state_of(opt, w)], traces


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_hyper_parameters_changed_between_steps_are_honoured_by_replays(name: str) -> None:
    make, schedule = SCHEDULES[name]
    traced, traces = train_with_schedule(make, schedule, traced=True)
    eager, _ = train_with_schedule(make, schedule, traced=False)
    assert traced == eager
    assert traces == 1


@pytest.mark.parametrize(
    ("make", "changes"),
    [
        (lambda: tp.train.Momentum(0.1, 0.9), [{}, {"use_nesterov": True}, {}, {"use_nesterov": False}]),
        (lambda: tp.train.RMSProp(0.1), [{}, {"momentum": 0.9}, {}, {"momentum": 0.0}]),
    ],
    ids=["Momentum nesterov", "RMSProp momentum"],
)
def test_a_hyper_parameter_that_changes_the_kernels_traces_again(
    make: Callable[[], tp.train.Optimizer], changes: list[dict[str, Any]]
) -> None:
    traced, traces = train_with_schedule(make, changes, traced=True)
    eager, _ = train_with_schedule(make, changes, traced=False)
    assert traced == eager
    assert traces == 3  # the first call, and each of the two changes that chose other kernels


# -- the source of dropped traces -------------------------------------------------------------------------------


def test_the_source_of_dropped_traces_leaves_linecache() -> None:
    def replay_sources() -> set[str]:
        return {name for name in linecache.cache if name.startswith("<tp.function scaled ")}

    def scaled(x: tp.Tensor, s: float) -> tp.Tensor:
        return tp.tanh(x * s) + 1.0

    f = tp.function(scaled, max_traces=2)
    x = tp.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tp.FunctionWarning)
        for i in range(40):
            f(x, float(i))
            assert len(replay_sources()) <= 2
    f.clear_cache()
    assert replay_sources() == set()


# -- what a replay raises and returns ---------------------------------------------------------------------------


def test_an_index_out_of_range_raises_an_indexing_error_in_a_replay_as_eagerly() -> None:
    def pick(x: tp.Tensor, i: tp.Tensor) -> tp.Tensor:
        return x[i] * 2.0

    traced = tp.function(pick)
    x = tp.tensor([1.0, 2.0, 3.0])
    assert traced(x, tp.tensor([2, 0])).tolist() == [6.0, 2.0]
    with pytest.raises(tp.IndexingError, match=r"out of bounds .*GatherV2.* index 5 is out of range"):
        pick(x, tp.tensor([0, 5]))
    with pytest.raises(tp.IndexingError, match=r"out of bounds .*GatherV2.* index 5 is out of range.*replaying"):
        traced(x, tp.tensor([0, 5]))
    assert traced.trace_count == 1


def test_tp_gather_out_of_range_stays_a_kernel_error_in_a_replay_as_eagerly() -> None:
    traced = tp.function(lambda x, i: tp.gather(x, i))
    x = tp.tensor([1.0, 2.0, 3.0])
    traced(x, tp.tensor([1]))
    with pytest.raises(tp.KernelError, match="GatherV2") as raised:
        traced(x, tp.tensor([4]))
    assert not isinstance(raised.value, tp.IndexingError)


def test_a_function_returning_a_variable_returns_the_variable_on_replay() -> None:
    w = tp.variable([1.0, 2.0])

    @tp.function
    def bump() -> tuple[tp.Variable, tp.Tensor]:
        w.assign(w + 1.0)
        return w, w * 1.0

    @tp.function
    def same() -> tp.Variable:
        return w

    for expected in ([2.0, 3.0], [3.0, 4.0], [4.0, 5.0]):
        v, t = bump()
        assert v is w
        assert (v.tolist(), t.tolist()) == (expected, expected)
        assert same() is w
    assert (bump.trace_count, same.trace_count) == (1, 1)


def test_a_user_kernel_that_declares_the_function_it_applies_runs_as_that_function(
    tensorplug_registries: Any, replay_kind: str
) -> None:
    """Lowered as the backend's own kernels are, decided by what the kernel declares (``kernel.applies``), not by
    who registered it: the replay calls np.tanh directly, with the eager bits."""
    calls: list[int] = []

    def user_tanh(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return np.tanh(inputs["x"])

    user_tanh.applies = np.tanh  # type: ignore[attr-defined]  # what kernel_factories.unary(np.tanh) declares
    tp.register_kernel("UserTanh", "numpy", user_tanh)
    x = tp.tensor(np.linspace(-3.0, 3.0, 1 << 15, dtype=np.float32))  # large: the replay may write into a buffer
    f = tp.function(lambda x: tp.run_kernel("UserTanh", {"x": x * 2.0}) + 1.0)
    eager = tp.run_kernel("UserTanh", {"x": x * 2.0}) + 1.0
    f(x)  # traced: the kernel runs
    calls.clear()
    for _ in range(3):
        assert bits(f(x)) == bits(eager)
    assert calls == ([] if replay_kind == "lowered" else [1, 1, 1])
