"""The named sets: off until enabled, then only for kernels recorded inside the scope, in that thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

import tensorplug as tp

DIST = "tensorplug-grads-extra"
X = [-1.7, -0.5, 0.3, 2.6]


def grad_of(f: Callable[[tp.Tensor], tp.Tensor], values: list[float] = X, dy: list[float] | None = None) -> list[float]:
    x = tp.tensor(values)
    return tp.grad(f)(x, None if dy is None else tp.tensor(dy)).tolist()


def test_the_sets_are_listed_with_their_distribution() -> None:
    sets = {s.name: s for s in tp.gradient_sets()}
    for name in ("straight_through", "guided_backprop", "sigmoid_surrogate", "clip"):
        assert sets[name].source == DIST
        assert sets[name].description
    with pytest.raises(tp.RegistrationError, match=r"known sets: .*straight_through"):
        tp.use_gradients("straight_trough")


# -- straight_through -------------------------------------------------------------

ROUNDING = {"Round": tp.round, "Floor": tp.floor, "Ceil": tp.ceil, "Sign": tp.sign}


@pytest.mark.parametrize("kernel", sorted(ROUNDING))
def test_straight_through_rounding_is_the_identity_only_inside_the_scope(kernel: str) -> None:
    op = ROUNDING[kernel]
    assert grad_of(op) == [0.0, 0.0, 0.0, 0.0]
    with tp.use_gradients("straight_through"):
        assert grad_of(op) == [1.0, 1.0, 1.0, 1.0]
        assert grad_of(op, dy=[2.0, -3.0, 0.5, 0.0]) == [2.0, -3.0, 0.5, 0.0]
        spec = tp.get_gradient(kernel)
        assert spec is not None
        assert spec.source == f"{DIST} (straight_through)"
        row = next(r for r in tp.coverage().rows if r.kernel == kernel)
        assert (row.gradient, row.shadows) == (f"{DIST} (straight_through)", ("tensorplug",))
    assert grad_of(op) == [0.0, 0.0, 0.0, 0.0]
    assert tp.get_gradient(kernel).source == "tensorplug"  # type: ignore[union-attr]


def test_straight_through_step_is_the_hard_tanh_estimator() -> None:
    values = [-2.0, -1.0, -0.5, 0.0, 0.7, 1.0, 1.5]
    with tp.use_gradients("straight_through"):
        assert grad_of(tp.step, values) == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
        assert grad_of(lambda x: tp.step(x, alpha=0.5), values) == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    assert grad_of(tp.step, values) == [0.0] * 7


def test_quantisation_aware_training_step() -> None:
    """Fake quantisation to steps of 1/4: the weights get the loss's gradient as if unquantised."""
    quantise = lambda w: tp.round(w * 4.0) / 4.0
    loss = lambda w: tp.sum(tp.square(quantise(w) - 1.0))
    w = [0.1, 0.9]
    with tp.use_gradients("straight_through"):
        assert grad_of(loss, w) == [2 * (0.0 - 1.0), 2 * (1.0 - 1.0)]
    assert grad_of(loss, w) == [0.0, 0.0]


def test_a_set_applies_to_what_was_recorded_inside_even_if_differentiated_outside() -> None:
    def half_inside(x: tp.Tensor) -> tp.Tensor:
        outside = tp.round(x)
        with tp.use_gradients("straight_through"):
            inside = tp.round(x) * 3.0
        return tp.sum(outside + inside)

    assert grad_of(half_inside) == [3.0, 3.0, 3.0, 3.0]


# -- guided_backprop --------------------------------------------------------------


def test_guided_backprop_passes_only_positive_gradients_where_the_input_was_positive() -> None:
    f = lambda x: tp.relu(x)
    dy = [5.0, 5.0, -1.0, 2.0]
    assert grad_of(f, dy=dy) == [0.0, 0.0, -1.0, 2.0]
    with tp.use_gradients("guided_backprop"):
        assert grad_of(f, dy=dy) == [0.0, 0.0, 0.0, 2.0]
        assert tp.get_gradient("Relu").source == f"{DIST} (guided_backprop)"  # type: ignore[union-attr]
    assert grad_of(f, dy=dy) == [0.0, 0.0, -1.0, 2.0]


def test_guided_backprop_through_a_small_network() -> None:
    w1 = tp.tensor([[1.0, -1.0], [0.5, 2.0]])
    w2 = tp.tensor([[3.0], [-1.0]])
    score = lambda x: tp.sum(tp.relu(tp.relu(x @ w1) @ w2))
    x = tp.tensor([[1.0, 1.0]])
    # hidden = relu([1.5, 1.0]), score = relu(3 * 1.5 - 1.0); the gradient reaching the hidden units is [3, -1]
    assert tp.grad(score)(x).tolist() == [[3.0 * 1.0 - 1.0 * -1.0, 3.0 * 0.5 - 1.0 * 2.0]]
    with tp.use_gradients("guided_backprop"):
        assert tp.grad(score)(x).tolist() == [[3.0 * 1.0, 3.0 * 0.5]]  # the -1 is stopped


# -- sigmoid_surrogate ------------------------------------------------------------


@pytest.mark.parametrize("slope", [1.0, 5.0])
def test_sigmoid_surrogate_for_step_and_sign(slope: float) -> None:
    values = [0.0, 1.0]
    bump = [slope * 0.25, slope * tp.sigmoid(tp.tensor(slope)).item() * (1 - tp.sigmoid(tp.tensor(slope)).item())]
    with tp.use_gradients("sigmoid_surrogate", slope=slope):
        assert grad_of(tp.step, values) == pytest.approx(bump, rel=1e-6)
        assert grad_of(lambda x: tp.step(x, alpha=-1.0), values) == pytest.approx([2 * b for b in bump], rel=1e-6)
        assert grad_of(tp.sign, values) == pytest.approx([2 * b for b in bump], rel=1e-6)
    assert grad_of(tp.step, values) == [0.0, 0.0]


def test_sigmoid_surrogate_refuses_a_bad_slope() -> None:
    for slope in (0.0, -1.0, float("inf"), "5"):
        with pytest.raises(tp.RegistrationError, match="slope must be a finite number > 0"):
            tp.use_gradients("sigmoid_surrogate", slope=slope)


# -- clip -------------------------------------------------------------------------


def test_clip_clips_every_gradient_by_default() -> None:
    f = lambda x: tp.sum(x * tp.tensor([10.0, -10.0, 0.5, 3.0]))
    with tp.use_gradients("clip", min=-1.0, max=2.0):
        assert grad_of(f) == [2.0, -1.0, 0.5, 2.0]
        assert tp.get_gradient("Multiply").source == f"{DIST} (clip)"  # type: ignore[union-attr]
        assert tp.get_gradient("Sqrt").source == f"{DIST} (clip)"  # type: ignore[union-attr]
        assert tp.get_gradient("Equal").source == "tensorplug"  # type: ignore[union-attr]  # not differentiable
    assert grad_of(f) == [10.0, -10.0, 0.5, 3.0]


def test_clip_only_the_chosen_kernels() -> None:
    f = lambda x: tp.sum(tp.exp(x) * 2.0)
    values = [0.0, 1.0, 3.0]
    with tp.use_gradients("clip", min=-5.0, max=5.0, kernels=["Exp"]):
        # Multiply's gradient (2) is not clipped; Exp's (2 e**x) is
        assert grad_of(f, values) == pytest.approx([2.0, 5.0, 5.0])
        assert tp.get_gradient("Multiply").source == "tensorplug"  # type: ignore[union-attr]
    with tp.use_gradients("clip", min=-1.0, max=1.0, kernels="Multiply"):
        assert grad_of(f, values) == pytest.approx([1.0, 2.718282, 20.085537], rel=1e-6)


def test_clip_keeps_the_always_on_override_it_wraps() -> None:
    with tp.use_gradients("clip", min=-1.0, max=1.0, kernels=["Sqrt"]):
        assert grad_of(tp.sqrt, [0.0, 0.01, 4.0]) == [0.0, 1.0, 0.25]


def test_clip_list_inputs() -> None:
    f = lambda x: tp.add_n([x, x * 2.0])
    with tp.use_gradients("clip", min=-1.0, max=1.0, kernels=["AddN"]):
        assert grad_of(f, [1.0, 2.0], dy=[5.0, -0.5]) == [1.0 + 2.0, -0.5 + -1.0]


def test_clip_with_bounds_that_never_bite_passes_numeric_checks_to_second_order() -> None:
    f = lambda x, y: tp.tanh(x) * tp.sqrt(y) / (x * x + 1.0) + tp.pow(y, 1.5)
    args = [tp.tensor([0.3, -1.2]), tp.tensor([0.5, 2.0])]
    with tp.use_gradients("clip", min=-100.0, max=100.0):
        tp.testing.check_grads(f, args, order=2)


def test_clipped_gradients_can_be_differentiated_again() -> None:
    cube = lambda x: x * x * x
    second = lambda values: tp.grad(tp.grad(lambda x: tp.sum(cube(x))))(tp.tensor(values)).tolist()
    assert second([1.0, 3.0]) == [6.0, 18.0]
    first = lambda values: tp.grad(lambda x: tp.sum(cube(x)))(tp.tensor(values)).tolist()
    with tp.use_gradients("clip", min=-4.0, max=4.0, kernels=["Multiply"]):
        # (x*x)*x at 3: the outer Multiply sends clip(x*x = 9) = 4 to x and clip(x = 3) = 3 to x*x, which
        # sends clip(3 * x = 9) = 4 to each of its operands: 12 in all, every term saturated (second order 0)
        assert first([1.0, 3.0]) == [3.0, 12.0]
        assert second([1.0, 3.0]) == [6.0, 0.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_clip_keeps_lazy_entries_lazy_and_dict_results() -> None:
    calls: list[str] = []

    @tp.register_kernel("GradsExtraScale", "numpy")
    def scale(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return inputs["x"] * inputs["k"]

    def scale_grad(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        x, k = saved

        def dx() -> tp.Tensor:
            calls.append("x")
            return dy * k

        def dk() -> tp.Tensor:
            calls.append("k")
            return dy * x

        return {"x": dx, "k": dk}

    tp.register_gradient("GradsExtraScale", scale_grad, inputs_to_save=["x", "k"])
    k = tp.tensor([10.0, 0.5])
    f = lambda x: tp.run_kernel("GradsExtraScale", {"x": x, "k": k})
    with tp.use_gradients("clip", min=-1.0, max=1.0, kernels=["GradsExtraScale"]):
        assert grad_of(f, [1.0, 2.0]) == [1.0, 0.5]
    assert calls == ["x"]  # the constant k never needed its gradient


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"min": 1.0, "max": -1.0}, "min .* must be less than or equal to max"),
        ({"min": float("nan"), "max": 1.0}, "must be less than or equal"),
        ({"min": "a", "max": 1.0}, "min must be a number"),
        ({"min": -1.0, "max": 1.0, "kernels": ["NoSuchKernel"]}, "'NoSuchKernel' has no gradient"),
        ({"min": -1.0, "max": 1.0, "kernels": ["Equal"]}, "'Equal' is declared not differentiable by tensorplug"),
        ({"min": -1.0}, "bad parameters"),
        ({"low": -1.0, "max": 1.0}, "bad parameters"),
    ],
)
def test_clip_refuses_bad_parameters(params: dict[str, Any], message: str) -> None:
    with pytest.raises(tp.RegistrationError, match=message):
        tp.use_gradients("clip", **params)


# -- nesting, exceptions, threads -------------------------------------------------


def test_sets_nest_and_clip_wraps_the_enclosing_sets_gradient() -> None:
    f = lambda x: tp.sum(tp.round(x) + tp.relu(x))
    dy_weights = lambda x: tp.sum((tp.round(x) + tp.relu(x)) * tp.tensor([-4.0, 4.0, -4.0, 4.0]))
    assert grad_of(f) == [0.0, 0.0, 1.0, 1.0]
    with tp.use_gradients("straight_through"):
        assert grad_of(f) == [1.0, 1.0, 2.0, 2.0]
        with tp.use_gradients("guided_backprop"):
            assert grad_of(dy_weights) == [-4.0, 4.0, -4.0, 8.0]
            with tp.use_gradients("clip", min=-1.0, max=1.0, kernels=["Round"]):
                assert grad_of(dy_weights) == [-1.0, 1.0, -1.0, 5.0]
            assert grad_of(dy_weights) == [-4.0, 4.0, -4.0, 8.0]
        assert grad_of(dy_weights) == [-4.0, 4.0, -8.0, 8.0]
    assert grad_of(f) == [0.0, 0.0, 1.0, 1.0]


def test_a_set_is_undone_when_an_exception_leaves_its_scope() -> None:
    def fail_inside() -> None:
        with tp.use_gradients("straight_through"):
            assert grad_of(tp.round) == [1.0] * 4
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail_inside()
    assert grad_of(tp.round) == [0.0] * 4
    assert tp.get_gradient("Round").source == "tensorplug"  # type: ignore[union-attr]


def test_a_concurrent_thread_outside_the_scope_keeps_the_core_gradients() -> None:
    results: dict[str, list[float]] = {}
    inside, done = threading.Event(), threading.Event()

    def scoped() -> None:
        with tp.use_gradients("straight_through"):
            inside.set()
            done.wait(10)
            results["scoped"] = grad_of(tp.round)

    def plain() -> None:
        inside.wait(10)
        results["plain"] = grad_of(tp.round)
        results["plain source"] = [tp.get_gradient("Round").source]  # type: ignore[union-attr, list-item]
        done.set()

    threads = [threading.Thread(target=scoped), threading.Thread(target=plain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {"scoped": [1.0] * 4, "plain": [0.0] * 4, "plain source": ["tensorplug"]}


def test_a_thread_started_inside_a_scope_does_not_inherit_it() -> None:
    results: list[list[float]] = []
    with tp.use_gradients("straight_through"):
        t = threading.Thread(target=lambda: results.append(grad_of(tp.round)))
        t.start()
        t.join(30)
        results.append(grad_of(tp.round))
    assert results == [[0.0] * 4, [1.0] * 4]


def test_the_always_on_overrides_apply_in_every_thread() -> None:
    results: list[list[float]] = []
    t = threading.Thread(target=lambda: results.append(grad_of(tp.sqrt, [0.0, 4.0])))
    t.start()
    t.join(30)
    assert results == [[0.0, 0.25]]
