"""Tape autodiff: the grad family, variables, custom_grad, higher order, pruning, errors, threads."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from in_threads import run_in_threads

import tensorplug as tp
from tensorplug._autodiff._backward import _Scope
from tensorplug._runtime._state import state


def test_grad_and_dy() -> None:
    x = tp.tensor([1.0, 2.0, 3.0])
    assert tp.grad(lambda x: tp.sum(x * x))(x).tolist() == [2.0, 4.0, 6.0]
    assert tp.grad(lambda x: x * x)(x, tp.tensor([1.0, 0.0, 2.0])).tolist() == [2.0, 0.0, 12.0]
    with pytest.raises(tp.GradientError, match="shapes must match"):
        tp.grad(lambda x: x * x)(x, tp.tensor([1.0]))


def test_grads_value_and_grads() -> None:
    a, b = tp.tensor(2.0), tp.tensor(5.0)
    ga, gb = tp.grads(lambda a, b: a * b + a)([a, b])
    assert (ga.item(), gb.item()) == (6.0, 2.0)
    value, (ga, gb) = tp.value_and_grads(lambda a, b: a * b)([a, b])
    assert (value.item(), ga.item(), gb.item()) == (10.0, 5.0, 2.0)
    value, g = tp.value_and_grad(lambda x: tp.square(x))(tp.tensor(3.0))
    assert (value.item(), g.item()) == (9.0, 6.0)


def test_gradient_accumulates_over_every_use() -> None:
    x = tp.tensor(3.0)
    # f = x*x + x*x*x -> 2x + 3x^2 = 33
    assert tp.grad(lambda x: x * x + x * x * x)(x).item() == 33.0


def test_broadcast_gradients_reduce_to_input_shape() -> None:
    w = tp.tensor([[1.0], [2.0]])  # (2, 1)
    b = tp.tensor([1.0, 2.0, 3.0])  # (3,)
    gw, gb = tp.grads(lambda w, b: tp.sum(w * b))([w, b])
    assert gw.shape == (2, 1)
    assert gw.tolist() == [[6.0], [6.0]]
    assert gb.tolist() == [3.0, 3.0, 3.0]


def test_higher_order_through_kernels_that_save_outputs() -> None:
    # TensorFlow.js fails the second derivatives of Exp, Tanh and Sigmoid; here they must work.
    x = tp.tensor(0.5, dtype="float64")
    d2_exp = tp.grad(tp.grad(tp.exp))(x).item()
    assert d2_exp == pytest.approx(math.exp(0.5), rel=1e-12)
    t = math.tanh(0.5)
    assert tp.grad(tp.grad(tp.tanh))(x).item() == pytest.approx(-2 * t * (1 - t * t), rel=1e-12)
    s = 1 / (1 + math.exp(-0.5))
    assert tp.grad(tp.grad(tp.sigmoid))(x).item() == pytest.approx(s * (1 - s) * (1 - 2 * s), rel=1e-9)
    assert tp.grad(tp.grad(tp.sqrt))(x).item() == pytest.approx(-0.25 * 0.5**-1.5, rel=1e-12)
    cube = tp.grad(tp.grad(tp.grad(lambda x: x * x * x)))(tp.tensor(2.0))
    assert cube.item() == 6.0


def test_mixed_partial_derivative() -> None:
    # d/dy of (d/dx of x*y*y) = d/dy (y*y) = 2y
    y = tp.tensor(3.0)
    x = tp.tensor(2.0)
    result = tp.grad(lambda y: tp.grad(lambda x: x * y * y)(x))(y)
    assert result.item() == 6.0


def test_unconnected_input_is_an_error() -> None:
    with pytest.raises(tp.GradientError, match="no recorded kernel connects"):
        tp.grad(lambda x: tp.tensor(1.0) * 2.0)(tp.tensor(1.0))
    with pytest.raises(tp.GradientError, match="argument 1"):
        tp.grads(lambda a, b: a * 2.0)([tp.tensor(1.0), tp.tensor(2.0)])


def test_only_floats_can_be_differentiated() -> None:
    with pytest.raises(tp.GradientError, match="int32"):
        tp.grad(lambda x: x * x)(tp.tensor(2))
    with pytest.raises(tp.GradientError, match="only float outputs"):
        tp.grad(lambda x: x > 0)(tp.tensor(2.0))
    with pytest.raises(tp.GradientError, match="must return a Tensor"):
        tp.grad(lambda x: 3.0)(tp.tensor(2.0))  # type: ignore[arg-type,return-value]


def test_gradient_does_not_flow_into_integer_inputs() -> None:
    x = tp.tensor([1.0, 2.0])
    n = tp.tensor([3, 4])
    assert tp.grad(lambda x: tp.sum(x * tp.cast(n, "float32")))(x).tolist() == [3.0, 4.0]


def test_records_only_kernels_touching_watched_tensors() -> None:
    x = tp.tensor([1.0, 2.0])
    c = tp.tensor([5.0, 6.0])
    with _Scope([x]) as scope:
        unrelated = c * 2.0 + 1.0
        y = x * unrelated
    assert [r.kernel_name for r in scope.tape.records] == ["Multiply"]
    assert y.tolist() == [11.0, 26.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_pruning_skips_branches_off_the_path() -> None:
    @tp.register_kernel("NoGradSquare", "numpy")
    def no_grad_square(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return inputs["x"] * inputs["x"]

    def f(x: tp.Tensor) -> tp.Tensor:
        tp.run_kernel("NoGradSquare", {"x": x})  # a dead branch with no gradient: never differentiated
        return x * 3.0

    assert tp.grad(f)(tp.tensor(2.0)).item() == 3.0

    with pytest.raises(tp.GradientError, match="no gradient is registered for kernel 'NoGradSquare'"):
        tp.grad(lambda x: tp.run_kernel("NoGradSquare", {"x": x}))(tp.tensor(2.0))


@pytest.mark.usefixtures("tensorplug_registries")
def test_not_differentiable_kernel_is_a_clear_error() -> None:
    tp.register_gradient("Relu", None, override=True)
    with pytest.raises(tp.GradientError, match="'Relu' is not differentiable"):
        tp.grad(tp.relu)(tp.tensor(1.0))


def test_exceptions_inside_f_leave_no_tape_behind() -> None:
    def failing(x: tp.Tensor) -> tp.Tensor:
        _ = x * 2.0
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        tp.grad(failing)(tp.tensor(1.0))
    assert state.tape is None
    with pytest.raises(RuntimeError, match="boom"):
        tp.grad(lambda x: tp.grad(failing)(x))(tp.tensor(1.0))
    assert state.tape is None


@pytest.mark.usefixtures("tensorplug_registries")
def test_gradient_contract_is_checked() -> None:
    @tp.register_gradient("Square", inputs_to_save=["x"], override=True)
    def wrong_shape(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return (tp.sum(dy),)

    with pytest.raises(tp.GradientError, match=r"kernel 'Square' for input 'x' is float32\[\]"):
        tp.grad(tp.square)(tp.tensor([1.0, 2.0]))

    @tp.register_gradient("Square", override=True)
    def wrong_count(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return (dy, dy)

    with pytest.raises(tp.GradientError, match=r"'Square' \(from runtime\) returned 2 entries for 1 inputs"):
        tp.grad(tp.square)(tp.tensor([1.0, 2.0]))


@pytest.mark.usefixtures("tensorplug_registries")
def test_gradient_may_return_a_dict_by_input_name() -> None:
    @tp.register_gradient("Sub", override=True)
    def sub_by_name(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return {"b": tp.neg(dy) * 10.0}

    ga, gb = tp.grads(lambda a, b: a - b + a)([tp.tensor(1.0), tp.tensor(2.0)])
    assert (ga.item(), gb.item()) == (1.0, -10.0)  # a gets only the "+ a" path


def test_no_grad_and_stop_gradient() -> None:
    x = tp.tensor(3.0)

    def f(x: tp.Tensor) -> tp.Tensor:
        with tp.no_grad():
            constant = x * x
        return x * constant

    assert tp.grad(f)(x).item() == 9.0
    assert tp.grad(lambda x: x * tp.stop_gradient(x))(x).item() == 3.0


def test_custom_grad_replaces_the_gradient() -> None:
    @tp.custom_grad
    def scaled(x: tp.Tensor) -> tuple[tp.Tensor, Any]:
        return x * x, lambda dy: dy * 100.0

    x = tp.tensor(2.0)
    assert scaled(x).item() == 4.0
    assert tp.grad(scaled)(x).item() == 100.0


def test_custom_grad_with_two_inputs_and_second_order() -> None:
    @tp.custom_grad
    def product(a: tp.Tensor, b: tp.Tensor) -> tuple[tp.Tensor, Any]:
        value = a * b
        return value, lambda dy: (dy * b, dy * a)

    a, b = tp.tensor(3.0), tp.tensor(4.0)
    ga, gb = tp.grads(product)([a, b])
    assert (ga.item(), gb.item()) == (4.0, 3.0)

    @tp.custom_grad
    def cube(x: tp.Tensor) -> tuple[tp.Tensor, Any]:
        return x * x * x, lambda dy: dy * 3.0 * x * x

    assert tp.grad(tp.grad(cube))(tp.tensor(2.0)).item() == 12.0  # d/dx 3x^2 through grad_fn's ops


def test_custom_grad_checks_what_f_returns() -> None:
    bad = tp.custom_grad(lambda x: x)
    with pytest.raises(tp.GradientError, match=r"must return \(value, grad_fn\)"):
        bad(tp.tensor(1.0))


def test_variable_grads_defaults_to_trainable_variables() -> None:
    w = tp.variable([1.0, 2.0], name="vg_w")
    b = tp.variable(0.5, name="vg_b")
    frozen = tp.variable(3.0, name="vg_frozen", trainable=False)
    unused = tp.variable(1.0, name="vg_unused")
    value, grads = tp.variable_grads(lambda: tp.sum(w * w) * frozen + b)
    assert value.item() == 15.5
    assert grads["vg_w"].tolist() == [6.0, 12.0]
    assert grads["vg_b"].item() == 1.0
    assert "vg_frozen" not in grads
    assert "vg_unused" not in grads
    del unused
    with pytest.raises(tp.GradientError, match="scalar"):
        tp.variable_grads(lambda: w * 2.0, [w])


def test_mlp_trains_with_variable_grads() -> None:
    rng = np.random.default_rng(0)
    x = tp.tensor(rng.standard_normal((64, 4)).astype(np.float32))
    labels = (rng.standard_normal(64) > 0).astype(np.int64)
    onehot = tp.tensor(np.eye(2, dtype=np.float32)[labels])
    w1 = tp.variable(rng.standard_normal((4, 16)).astype(np.float32) * 0.5, name="mlp_w1")
    b1 = tp.variable(np.zeros(16, np.float32), name="mlp_b1")
    w2 = tp.variable(rng.standard_normal((16, 2)).astype(np.float32) * 0.5, name="mlp_w2")
    b2 = tp.variable(np.zeros(2, np.float32), name="mlp_b2")
    params = [w1, b1, w2, b2]

    def loss() -> tp.Tensor:
        hidden = tp.relu(x @ w1 + b1)
        return tp.losses.softmax_cross_entropy(onehot, hidden @ w2 + b2)

    losses = []
    for _ in range(60):
        value, grads = tp.variable_grads(loss, params)
        losses.append(value.item())
        for p in params:
            p.assign(p - grads[p.name] * 0.5)
    assert losses[-1] < 0.5 * losses[0]


def test_tapes_are_per_thread() -> None:
    results: dict[int, float] = {}

    def work(i: int) -> None:
        x = tp.tensor(float(i + 1), dtype="float64")
        total = 0.0
        for _ in range(50):
            total += tp.grad(lambda x: x * x * x)(x).item()
        results[i] = total

    run_in_threads(work, 4)
    assert results == {i: 50 * 3.0 * (i + 1) ** 2 for i in range(4)}


# -- kernels that return a list of one output ---------------------------------------------------


def test_multi_output_kernels_giving_one_output_are_differentiable() -> None:
    x = tp.tensor([1.0, 2.0])
    assert tp.grad(lambda v: tp.sum(tp.split(v, 1)[0] * 3.0))(x).tolist() == [3.0, 3.0]  # SplitV
    row = tp.tensor([[1.0, 2.0]])
    assert tp.grad(lambda v: tp.sum(tp.unstack(v)[0] * 3.0))(row).tolist() == [[3.0, 3.0]]  # Unpack
    values = tp.tensor([[5.0], [7.0]])
    assert tp.grad(lambda v: tp.sum(tp.top_k(v, 1)[0] * 3.0))(values).tolist() == [[3.0], [3.0]]  # TopK


@pytest.mark.parametrize("join", [tp.concat, tp.stack])
def test_second_order_through_a_join_of_one_tensor(join: Any) -> None:
    # The gradient of concat([u]) is a split into one piece, of stack([u]) an unstack of one:
    # differentiating those again is the second order. d2/du2 sum(join(u)**3) = 6u.
    def first(v: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda w: tp.sum(join([w]) ** 3))(v)

    assert tp.grad(lambda v: tp.sum(first(v)))(tp.tensor([1.0, 2.0])).tolist() == [6.0, 12.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_runtime_kernel_returning_a_list_of_one_gets_a_list_of_dy() -> None:
    seen: list[Any] = []

    @tp.register_kernel("DoubledPieces", "numpy")
    def doubled_pieces(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return [inputs["x"] * 2.0]

    @tp.register_gradient("DoubledPieces")
    def doubled_pieces_grad(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        seen.append(dy)
        return (dy[0] * 2.0,)

    def f(v: tp.Tensor) -> tp.Tensor:
        (piece,) = tp.run_kernel("DoubledPieces", {"x": v})
        return tp.sum(piece)

    assert tp.grad(f)(tp.tensor([1.0])).tolist() == [2.0]
    assert isinstance(seen[0], list)
    assert len(seen[0]) == 1


def test_custom_grad_returning_a_list_of_one_gets_a_list_of_dy() -> None:
    @tp.custom_grad
    def pieces(x: tp.Tensor) -> tuple[list[tp.Tensor], Any]:
        return [tp.identity(x)], lambda dys: dys[0] * 5.0

    assert tp.grad(lambda v: tp.sum(pieces(v)[0]))(tp.tensor([1.0, 2.0])).tolist() == [5.0, 5.0]


# -- constant gradients and unconnected_gradients ------------------------------------------------


def test_higher_order_gradients_of_linear_functions_are_zero() -> None:
    x = tp.tensor([1.0, 2.0])
    c = tp.tensor([3.0, -4.0])
    assert tp.grad(tp.grad(tp.neg))(tp.tensor(1.0)).item() == 0.0
    assert tp.grad(lambda v: tp.sum(tp.grad(lambda w: tp.sum(w * c))(v)))(x).tolist() == [0.0, 0.0]
    assert tp.grad(tp.grad(tp.grad(lambda v: v * v)))(tp.tensor(3.0)).item() == 0.0  # third order of a quadratic
    assert tp.grad(tp.grad(tp.grad(tp.neg)))(tp.tensor(1.0)).item() == 0.0
    ga, gb = tp.grads(lambda a, b: tp.grad(lambda w: w * b)(a))([tp.tensor(2.0), tp.tensor(5.0)])
    assert (ga.item(), gb.item()) == (0.0, 1.0)  # d/da of b is 0, d/db of b is 1


def test_variable_grads_of_a_constant_gradient_is_zero() -> None:
    w = tp.variable([1.0, 2.0], name="cg_w")
    value, grads = tp.variable_grads(lambda: tp.sum(tp.grad(lambda v: tp.sum(v * 3.0))(w)), [w])
    assert value.item() == 6.0
    assert grads["cg_w"].tolist() == [0.0, 0.0]


def test_unconnected_gradients_choice() -> None:
    x, other = tp.tensor([1.0, 2.0]), tp.tensor(3.0)
    with pytest.raises(tp.GradientError, match="unconnected_gradients='zero'"):
        tp.grad(lambda v: tp.sum(other * 2.0))(x)
    assert tp.grad(lambda v: tp.sum(other * 2.0), unconnected_gradients="zero")(x).tolist() == [0.0, 0.0]
    ga, gb = tp.grads(lambda a, b: a * 2.0, unconnected_gradients="zero")([other, x])
    assert (ga.item(), gb.tolist()) == (2.0, [0.0, 0.0])
    value, g = tp.value_and_grad(lambda v: other * 2.0, unconnected_gradients="zero")(x)
    assert (value.item(), g.tolist()) == (6.0, [0.0, 0.0])
    value, (g,) = tp.value_and_grads(lambda v: other * 2.0, unconnected_gradients="zero")([x])
    assert g.tolist() == [0.0, 0.0]
    with pytest.raises(tp.InvalidArgumentError, match=r"use 'raise' \(the default\) or 'zero'"):
        tp.grad(tp.neg, unconnected_gradients="zeros")(x)  # type: ignore[arg-type]


def test_variable_grads_unconnected_gradients_choice() -> None:
    w = tp.variable([1.0, 2.0], name="ug_w")
    unused = tp.variable(1.0, name="ug_unused")
    assert set(tp.variable_grads(lambda: tp.sum(w), [w, unused]).grads) == {"ug_w"}  # "omit", the default
    grads = tp.variable_grads(lambda: tp.sum(w), [w, unused], unconnected_gradients="zero").grads
    assert grads["ug_unused"].item() == 0.0
    with pytest.raises(tp.GradientError, match="variable 'ug_unused'"):
        tp.variable_grads(lambda: tp.sum(w), [w, unused], unconnected_gradients="raise")
    with pytest.raises(tp.InvalidArgumentError, match="'omit'"):
        tp.variable_grads(lambda: tp.sum(w), [w], unconnected_gradients="none")  # type: ignore[arg-type]


def test_the_seed_is_never_recorded_by_an_outer_scope() -> None:
    # Without an outer scope the seed is made directly (nothing could record it); inside one, under no_grad.
    x = tp.tensor([0.5, 2.0])
    outer = _Scope([x])
    with outer:
        inner = tp.grad(lambda x: tp.sum(x * x))(x)
    names = [record.kernel_name for record in outer.tape.records]
    assert "OnesLike" not in names
    assert "Multiply" in names
    assert inner.tolist() == [1.0, 4.0]
    assert state.tape is None


def test_pruning_follows_list_inputs() -> None:
    x, c = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])
    g = tp.grad(lambda x: tp.sum(tp.add_n([c, x * 2.0, c])))(x)
    assert g.tolist() == [2.0, 2.0]
    with pytest.raises(tp.GradientError, match="no recorded kernel connects it to y"):
        tp.grad(lambda x: tp.sum(tp.add_n([c, c])) + tp.sum(c))(x)
