"""tp.function on the torch backend as outside users hit it: threads, aliased arguments, static zeros, failed
steps, hyper-parameters changed between steps, and what a replay raises and returns (as on numpy)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

import tensorplug as tp

pytestmark = pytest.mark.usefixtures("on_torch")

WAIT = 30.0  # seconds an event may take before the test fails (a hang, not a timing)


def bits(t: tp.Tensor) -> bytes:
    assert t.backend == "torch"
    return t.numpy().tobytes()


def test_a_trace_in_another_thread_does_not_freeze_the_variables_this_trace_reads() -> None:
    wa, wb = tp.variable([4.0]), tp.variable([4.0])
    opt_a, opt_b = tp.train.Adam(0.1), tp.train.Adam(0.1)
    b_tracing, a_tracing = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    @tp.function
    def step_a() -> tp.Tensor:
        a_tracing.set()
        return opt_a.minimize(lambda: tp.sum(wa * wa), [wa])

    @tp.function
    def step_b() -> tp.Tensor:
        b_tracing.set()
        assert a_tracing.wait(WAIT)
        return opt_b.minimize(lambda: tp.sum(wb * wb), [wb])

    def train_b() -> None:
        try:
            for _ in range(4):
                step_b()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=train_b)
    thread.start()
    assert b_tracing.wait(WAIT)
    for _ in range(4):
        step_a()
    thread.join()
    assert not errors, errors
    assert bits(wa) == bits(wb)
    assert wb.item() < 3.7  # four Adam steps of 0.1 from 4.0: the replays read wb


def test_the_same_tensor_as_two_arguments_gives_the_eager_gradient() -> None:
    def f(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda q: tp.sum(q * y))(x)

    traced = tp.function(f)
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 5.0])
    for x, y in [(a, a), (a, b), (a, a)]:
        assert bits(traced(x, y)) == bits(f(x, y))
    assert traced(a, a).tolist() == [2.0, 4.0]


def test_a_static_zero_and_minus_zero_trace_apart() -> None:
    traced = tp.function(lambda x, s: x / s)
    x = tp.tensor([1.0, -1.0])
    assert traced(x, 0.0).tolist() == [float("inf"), float("-inf")]
    assert traced(x, -0.0).tolist() == [float("-inf"), float("inf")]


def test_a_replay_that_raises_counts_no_step_and_assigns_nothing() -> None:
    w = tp.variable([1.0, 2.0, 3.0])
    opt = tp.train.Adam(0.1)
    step = tp.function(lambda i: opt.minimize(lambda: tp.sum(tp.square(w[i])), [w]))
    step(tp.tensor([0, 1]))
    before = (opt.iterations, bits(w), [bits(t) for _, t in opt.get_weights()])
    with pytest.raises(tp.IndexingError, match="out of bounds"):
        step(tp.tensor([0, 7]))
    assert (opt.iterations, bits(w), [bits(t) for _, t in opt.get_weights()]) == before


@pytest.mark.parametrize(
    ("make", "schedule"),
    [
        (lambda: tp.train.SGD(0.1), [{"learning_rate": r} for r in (0.1, 0.05, 0.2)]),
        (lambda: tp.train.Adam(0.1), [{"learning_rate": 0.05}, {"beta1": 0.5, "epsilon": 1e-3}, {"beta2": 0.9}]),
        (lambda: tp.train.RMSProp(0.1), [{"decay": 0.5}, {"momentum": 0.5}, {"learning_rate": 0.01}]),
    ],
    ids=["SGD", "Adam", "RMSProp"],
)
def test_hyper_parameters_changed_between_steps_are_honoured_by_replays(
    make: Callable[[], tp.train.Optimizer], schedule: list[dict[str, Any]]
) -> None:
    results = []
    for traced in (False, True):
        w = tp.variable([1.0, -2.0, 3.0])
        opt = make()

        def step(w: tp.Variable = w, opt: tp.train.Optimizer = opt) -> tp.Tensor:
            return opt.minimize(lambda: tp.sum(tp.square(w - 0.5)), [w])

        run = tp.function(step) if traced else step
        losses = []
        for changes in schedule:
            for name, value in changes.items():
                setattr(opt, name, value)
            losses.append(bits(run()))
        results.append((losses, bits(w), opt.iterations))
    assert results[0] == results[1]


def test_a_function_returning_a_variable_returns_the_variable_on_replay() -> None:
    w = tp.variable([1.0])

    @tp.function
    def bump() -> tp.Variable:
        return w.assign(w * 2.0)

    assert [bump() is w for _ in range(3)] == [True, True, True]
    assert w.tolist() == [8.0]
