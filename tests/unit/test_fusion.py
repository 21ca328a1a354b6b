"""The fuse pass (``Backend.fuse``): a fused replay gives the bits of the same replay with every group run step by
step, on the numpy backend's groups (the relu gradient, chains of ufuncs over one temporary), with the values
that tell them apart (NaN, -0.0, inf, operands that are not C-contiguous, a dead buffer a later step reads)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._tracing._pipeline import plan

rng = np.random.default_rng(7)
LARGE = (160, 128)  # 20480 elements: above the numpy backend's threshold for chains and dead buffers


def tricky(shape: tuple[int, ...], dtype: str = "float32") -> np.ndarray:
    """Random values with zeros of both signs, infinities and NaNs spread through them."""
    values = rng.standard_normal(shape).astype(dtype)
    flat = values.reshape(-1)
    picks = rng.choice(flat.size, size=min(flat.size, 12), replace=False)
    flat[picks] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, np.nan, 5.0, -5.0])[
        : picks.size
    ].astype(dtype)
    return values


def replays(f: Callable[..., Any], *args: tp.Tensor) -> tuple[Any, Any, Any]:
    """``f``'s program replayed three ways: fused, lowered step by step with no group, and kernel by kernel."""
    program = tp.function(f).program(*args)
    backend = program.backend
    fused = tp.generate_replay(program, backend.lower_step, fuse=backend.fuse)
    unfused = tp.generate_replay(program, backend.lower_step)
    plain = tp.generate_replay(program)
    return program, (fused, unfused, plain), plan(program, backend.lower_step, fuse=backend.fuse)


def run(replay: tp.Replay, *args: tp.Tensor | np.ndarray) -> list[np.ndarray]:
    """The replay's outputs for ``args`` (arrays are passed as they are, in their memory order)."""
    raws = [a if isinstance(a, np.ndarray) else np.array(a.numpy()) for a in args]
    with np.errstate(all="ignore"):
        outputs, _ = replay(raws, [], [])
    return [np.asarray(o) for o in outputs]


def assert_same_bits(got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        assert g.shape == e.shape
        assert g.tobytes() == e.tobytes()
        assert g.flags.c_contiguous == e.flags.c_contiguous


def relu_gradient(x: tp.Tensor, dy: tp.Tensor) -> tp.Tensor:
    return dy * tp.step(x, 0.0)


@pytest.mark.parametrize("shape", [(3, 5), LARGE], ids=["small", "large"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("with_nan", [False, True])
def test_the_relu_gradient_runs_as_one_masked_multiply_with_the_steps_bits(
    shape: tuple[int, ...], dtype: str, with_nan: bool
) -> None:
    x = tricky(shape, dtype)
    if not with_nan:
        x[np.isnan(x)] = -0.0
    dy = tricky(shape, dtype)
    args = tp.tensor(x), tp.tensor(dy)
    _program, (fused, unfused, plain), steps = replays(relu_gradient, *args)
    assert [group.chain for group in steps.fused.values()] == [(0, 1)]
    expected = run(plain, *args)
    assert_same_bits(run(fused, *args), expected)
    assert_same_bits(run(unfused, *args), expected)
    assert_same_bits(expected, [relu_gradient(*args).numpy()])


def test_the_mask_may_come_first() -> None:
    x, dy = tp.tensor(tricky((4, 6))), tp.tensor(tricky((4, 6)))
    _program, (fused, _, plain), steps = replays(lambda x, dy: tp.step(x, 0.0) * dy, x, dy)
    assert steps.fused
    assert_same_bits(run(fused, x, dy), run(plain, x, dy))


def test_a_step_with_another_alpha_or_a_broadcast_is_not_fused() -> None:
    x, dy, row = tp.tensor(tricky((4, 6))), tp.tensor(tricky((4, 6))), tp.tensor(tricky((6,)))
    _, _, steps = replays(lambda x, dy: dy * tp.step(x, 0.5), x, dy)
    assert not steps.fused
    _, _, steps = replays(lambda row, dy: dy * tp.step(row, 0.0), row, dy)
    assert not steps.fused


def chain(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
    return tp.exp(x * 2.0 + y) - y


@pytest.mark.parametrize("transposed", ["", "x", "y", "xy"])
def test_a_chain_of_ufuncs_runs_over_one_temporary_with_the_steps_bits(transposed: str) -> None:
    """Also where an operand is not C-contiguous: a new array's memory order follows its operands'."""

    def operand(name: str) -> np.ndarray:
        values = tricky(LARGE)
        return np.asfortranarray(values) if name in transposed else values

    x, y = operand("x"), operand("y")
    _program, (fused, unfused, plain), steps = replays(chain, tp.tensor(x), tp.tensor(y))
    args = x, y
    assert [len(group.chain) for group in steps.fused.values()] == [4]
    expected = run(plain, *args)
    assert_same_bits(run(fused, *args), expected)
    assert_same_bits(run(unfused, *args), expected)


def test_small_chains_run_step_by_step() -> None:
    args = tp.tensor(tricky((4, 5))), tp.tensor(tricky((4, 5)))
    _, _, steps = replays(chain, *args)
    assert not steps.fused


def test_a_chain_into_a_dead_buffer_that_a_later_step_reads_still_gives_the_steps_bits() -> None:
    """``a`` dies inside the group (its second step reads it): the group may get it as ``into``'s buffer, and
    must not overwrite it before that step has read it."""

    def f(x: tp.Tensor) -> tp.Tensor:
        a = x * 2.0  # fresh storage only the replay sees
        return tp.exp(a) + a

    x = tp.tensor(tricky(LARGE))
    _program, (fused, _, plain), steps = replays(f, x)
    (group,) = steps.fused.values()
    assert len(group.chain) == 2
    assert steps.into
    assert_same_bits(run(fused, x), run(plain, x))
    traced = tp.function(f)
    traced(x)
    assert traced(x).numpy().tobytes() == f(x).numpy().tobytes()


def test_two_chains_into_one_step_make_one_group_and_the_other_step_runs_alone() -> None:
    """``exp(a) + log(b)``: both exp and log are read once, by the add; one group takes the add, the other
    step keeps its own line."""

    def f(a: tp.Tensor, b: tp.Tensor) -> tp.Tensor:
        return tp.exp(a) + tp.log(b)

    a, b = tp.tensor(np.abs(tricky(LARGE)) + 0.5), tp.tensor(np.abs(tricky(LARGE)) + 0.5)
    _, (fused, _, plain), steps = replays(f, a, b)
    assert [group.chain for group in steps.fused.values()] == [(0, 2)]
    assert steps.absorbed == {0}
    assert_same_bits(run(fused, a, b), run(plain, a, b))


def test_no_group_moves_a_read_past_the_last_use_of_what_it_reads() -> None:
    """``exp(x)``'s only reader comes after ``x * 2.0``, the last use of ``x``: run at the add, the exp would read
    ``x`` after it is released (or written into), so it keeps its own line."""

    def f(x: tp.Tensor) -> tp.Tensor:
        e = tp.exp(x)
        m = x * 2.0
        return e + m

    x = tp.tensor(tricky(LARGE))
    _, (fused, _, plain), steps = replays(f, x)
    assert [group.chain for group in steps.fused.values()] == [(1, 2)]
    assert_same_bits(run(fused, x), run(plain, x))
    traced = tp.function(f)
    traced(x)
    assert traced(x).numpy().tobytes() == f(x).numpy().tobytes()


def test_a_fused_tp_function_and_its_gradient_give_eager_bits() -> None:
    """A relu layer trained a step: forward and backward through tp.function and through eager backprop's
    gradient programs (which fuse too), against eager, NaN and signed zeros included."""
    w0 = tricky((96, 256)) * 0.1
    w0[np.isnan(w0)] = 0.0
    x = tp.tensor(tricky((128, 96)))

    def step(w: tp.Variable) -> tp.Tensor:
        loss, grads = tp.variable_grads(lambda: tp.sum(tp.relu(tp.matmul(x, w)) * 0.5), [w])
        w.assign(w - 0.1 * grads[w.name])
        return loss

    eager_w, traced_w = tp.variable(w0.copy(), name="eager"), tp.variable(w0.copy(), name="traced")
    traced = tp.function(step)
    for _ in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected, got = step(eager_w), traced(traced_w)
        assert got.numpy().tobytes() == expected.numpy().tobytes()
        assert traced_w.numpy().tobytes() == eager_w.numpy().tobytes()


def test_the_relu_gradient_of_eager_backprop_keeps_nan_where_the_input_is_nan() -> None:
    x = tricky(LARGE)
    w = rng.standard_normal(LARGE).astype(np.float32)
    tx = tp.tensor(x)
    for _ in range(3):  # the second call on replays the gradient program
        g = tp.grad(lambda t: tp.sum(tp.relu(t) * tp.tensor(w)))(tx)
    mask = np.where(np.isnan(x), np.float32(np.nan), (x > 0).astype(np.float32))
    with np.errstate(invalid="ignore"):
        assert g.numpy().tobytes() == (w * mask).tobytes()


def test_chain_inputs_lists_what_the_group_reads_in_order_once() -> None:
    x, y = tp.tensor(tricky(LARGE)), tp.tensor(tricky(LARGE))
    program = tp.function(chain).program(x, y)
    steps = [i for i, s in enumerate(program.steps) if isinstance(s, tp.Step)]
    ins = program.chain_inputs(steps)
    x_reg, y_reg = program.arguments
    assert ins[0] == x_reg
    assert ins[2] == y_reg
    assert len(ins) == len(set(ins)) == 3


def test_a_fuse_that_answers_something_else_warns_and_the_plain_replay_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(tp.backend()), "fuse", lambda self, program, chain: "fused!")
    x = tp.tensor(tricky(LARGE))
    traced = tp.function(lambda x: -tp.exp(x))
    with pytest.warns(tp.FunctionWarning, match=r"fuse returned 'fused!' for steps \(0, 1\) \(Exp, Neg\)"):
        got = traced(x)
    assert got.numpy().tobytes() == (-tp.exp(x)).numpy().tobytes()


def test_a_backend_that_declines_runs_every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[int, ...]] = []

    def decline(self: Any, program: tp.Program, chain: tuple[int, ...]) -> None:
        asked.append(chain)

    monkeypatch.setattr(type(tp.backend()), "fuse", decline)
    args = tp.tensor(tricky(LARGE)), tp.tensor(tricky(LARGE))
    traced = tp.function(chain)
    assert traced(*args).numpy().tobytes() == chain(*args).numpy().tobytes()
    assert asked
    assert all(len(c) == 2 for c in asked)
