"""tp.function and the optimizers on the lazy dask backend: a step whose values fail when persisted changes
nothing, and hyper-parameters changed between steps are honoured by replays (as on numpy)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp


def state_of(opt: tp.train.Optimizer, *variables: tp.Variable) -> list[Any]:
    slots = [(name.rpartition("/")[2], w.numpy().tobytes()) for name, w in opt.get_weights()]
    return [opt.iterations, [v.numpy().tobytes() for v in variables], slots]


def overflowing_step(opt: tp.train.Optimizer, w1: tp.Variable, w2: tp.Variable, s: tp.Tensor) -> tp.Tensor:
    """Adam's update of w2 squares a gradient of 1e30, which overflows float32 (found when the step persists)."""
    return opt.minimize(lambda: tp.sum(w1 * w1) + tp.sum(w2 * s), [w1, w2])


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "replay"])
def test_a_step_whose_values_fail_when_persisted_changes_nothing(traced: bool) -> None:
    w1, w2 = tp.variable(np.array([1.0, 2.0, 3.0], np.float32)), tp.variable(np.array([1.0], np.float32))
    opt = tp.train.Adam(0.1)
    step = tp.function(overflowing_step) if traced else overflowing_step
    step(opt, w1, w2, tp.tensor(np.array([1.0], np.float32)))
    before = state_of(opt, w1, w2)
    with tp.debug(), pytest.raises(tp.NonFiniteError, match="Square"):
        step(opt, w1, w2, tp.tensor(np.array([1e30], np.float32)))
    assert state_of(opt, w1, w2) == before
    step(opt, w1, w2, tp.tensor(np.array([2.0], np.float32)))
    assert opt.iterations == 2


def test_a_learning_rate_schedule_is_honoured_by_replays() -> None:
    results = []
    for traced in (False, True):
        w = tp.variable(np.array([1.0, -2.0, 3.0, 4.0, 5.0], np.float32))
        opt = tp.train.Momentum(0.1, 0.9)

        def step(w: tp.Variable = w, opt: tp.train.Optimizer = opt) -> tp.Tensor:
            return opt.minimize(lambda: tp.sum(tp.square(w - 0.5)), [w])

        run = tp.function(step) if traced else step
        losses = []
        for rate, momentum in [(0.1, 0.9), (0.05, 0.9), (0.05, 0.5), (0.01, 0.0)]:
            opt.learning_rate, opt.momentum = rate, momentum  # type: ignore[attr-defined]
            losses.append(run().numpy().tobytes())
        results.append((losses, w.numpy().tobytes()))
    assert results[0] == results[1]
