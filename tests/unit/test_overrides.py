"""Scoped gradient overrides and named override sets (gradient_overrides, use_gradients)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest

import tensorplug as tp
from tensorplug._runtime._state import state


def doubled_relu(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    (x,) = saved  # the same saved tensors as the core's Relu gradient: its input
    return (tp.where(x > 0, dy * 2.0, tp.zeros_like(dy)),)


def relu_sum(x: tp.Tensor) -> tp.Tensor:
    return tp.sum(tp.relu(x))


X = [-1.0, 2.0, 3.0]


def test_override_applies_only_to_kernels_recorded_inside_the_scope() -> None:
    x = tp.tensor(X)
    assert tp.grad(relu_sum)(x).tolist() == [0.0, 1.0, 1.0]
    with tp.gradient_overrides({"Relu": doubled_relu}):
        assert tp.grad(relu_sum)(x).tolist() == [0.0, 2.0, 2.0]
    assert tp.grad(relu_sum)(x).tolist() == [0.0, 1.0, 1.0]

    def half_inside(x: tp.Tensor) -> tp.Tensor:
        outside = tp.relu(x)
        with tp.gradient_overrides({"Relu": doubled_relu}):
            inside = tp.relu(x)
        return tp.sum(outside + inside)

    # the backward pass runs after the scope closed; the override still applies to what it recorded
    assert tp.grad(half_inside)(x).tolist() == [0.0, 3.0, 3.0]


def test_scopes_nest_and_are_undone_on_exceptions() -> None:
    x = tp.tensor(X)
    tripled = lambda dy, saved, attrs: (tp.where(saved[0] > 0, dy * 3.0, tp.zeros_like(dy)),)
    with tp.gradient_overrides({"Relu": doubled_relu}):
        with tp.gradient_overrides({"Relu": tripled}):
            assert tp.grad(relu_sum)(x).tolist() == [0.0, 3.0, 3.0]
        assert tp.grad(relu_sum)(x).tolist() == [0.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="boom"), tp.gradient_overrides({"Relu": doubled_relu}):
        raise RuntimeError("boom")
    assert state.overrides is None
    assert tp.grad(relu_sum)(x).tolist() == [0.0, 1.0, 1.0]


def test_overrides_are_per_thread() -> None:
    results: dict[str, list[float]] = {}
    inside, leave = threading.Event(), threading.Event()

    def scoped() -> None:
        with tp.gradient_overrides({"Relu": doubled_relu}):
            inside.set()
            leave.wait(10)
            results["scoped"] = tp.grad(relu_sum)(tp.tensor(X)).tolist()

    def plain() -> None:
        inside.wait(10)
        results["plain"] = tp.grad(relu_sum)(tp.tensor(X)).tolist()
        leave.set()

    threads = [threading.Thread(target=scoped), threading.Thread(target=plain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"scoped": [0.0, 2.0, 2.0], "plain": [0.0, 1.0, 1.0]}


def test_none_makes_a_kernel_not_differentiable_in_the_scope() -> None:
    with tp.gradient_overrides({"Relu": None}), pytest.raises(tp.GradientError, match="'Relu' is not differentiable"):
        tp.grad(relu_sum)(tp.tensor(X))


def test_provenance_inside_and_outside_a_scope() -> None:
    assert tp.get_gradient("Relu").source == "tensorplug"  # type: ignore[union-attr]
    with tp.gradient_overrides({"Relu": doubled_relu}):
        spec = tp.get_gradient("Relu")
        assert spec is not None
        assert (spec.source, spec.grad, spec.inputs_to_save) == ("scope", doubled_relu, ("x",))
        row = next(r for r in tp.coverage().rows if r.kernel == "Relu")
        assert (row.gradient, row.shadows) == ("scope", ("tensorplug",))
    assert tp.get_gradient("Relu").source == "tensorplug"  # type: ignore[union-attr]


def test_bad_override_values_are_refused() -> None:
    with pytest.raises(tp.RegistrationError, match="must be a gradient function"):
        tp.gradient_overrides({"Relu": 42})  # type: ignore[dict-item]
    with pytest.raises(tp.RegistrationError, match="GradientSpec for 'Exp'"):
        tp.gradient_overrides({"Relu": tp.GradientSpec("Exp", doubled_relu)})


def scaled_relu(factor: float = 2.0) -> Sequence[tp.GradientSpec]:
    def grad(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return (tp.where(saved[0] > 0, dy * factor, tp.zeros_like(dy)),)

    return [tp.GradientSpec("Relu", grad, inputs_to_save=("x",))]


@pytest.mark.usefixtures("tensorplug_registries")
def test_named_sets_with_parameters() -> None:
    tp.register_gradient_set("scaled_relu", scaled_relu, "Relu's gradient times a factor")
    assert "scaled_relu" in [s.name for s in tp.gradient_sets()]
    x = tp.tensor(X)
    with tp.use_gradients("scaled_relu", factor=5.0):
        assert tp.grad(relu_sum)(x).tolist() == [0.0, 5.0, 5.0]
        assert tp.get_gradient("Relu").source == "runtime (scaled_relu)"  # type: ignore[union-attr]
    assert tp.grad(relu_sum)(x).tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(tp.RegistrationError, match="bad parameters"):
        tp.use_gradients("scaled_relu", nonsense=1)
    with pytest.raises(tp.RegistrationError, match="already registered"):
        tp.register_gradient_set("scaled_relu", scaled_relu)
    tp.unregister_gradient_set("scaled_relu")
    with pytest.raises(tp.RegistrationError, match="no gradient set of that name"):
        tp.use_gradients("scaled_relu")


# -- kernel names: a misspelled one would override nothing, silently --------------------------------------------------


def test_an_override_scope_refuses_a_misspelled_kernel_name_with_a_suggestion() -> None:
    with pytest.raises(tp.RegistrationError, match=r"\{'Rleu': \.\.\.\}\): no kernel 'Rleu' .*did you mean 'Relu'\?"):
        tp.gradient_overrides({"Rleu": doubled_relu})
    with pytest.raises(tp.RegistrationError, match="'relu' differs from the kernel name 'Relu' only in case"):
        tp.gradient_overrides({"relu": doubled_relu})
    with pytest.raises(tp.RegistrationError, match="no kernel 'NoSuchKernelAnywhere' is registered on any backend"):
        tp.gradient_overrides({"NoSuchKernelAnywhere": None})
    assert state.overrides is None


@pytest.mark.usefixtures("tensorplug_registries")
def test_an_override_scope_accepts_a_users_own_kernel() -> None:
    tp.register_kernel("Gelu", "numpy", lambda inputs, attrs, backend: inputs["x"])  # close to Relu and Elu: fine
    with tp.gradient_overrides({"Gelu": None}):
        assert tp.get_gradient("Gelu").source == "scope"  # type: ignore[union-attr]


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_gradient_set_naming_a_misspelled_kernel_is_refused_when_enabled() -> None:
    def misspelled() -> Sequence[tp.GradientSpec]:
        return [tp.GradientSpec("Sigmiod", doubled_relu)]

    tp.register_gradient_set("misspelled", misspelled)
    with pytest.raises(
        tp.RegistrationError,
        match=r"use_gradients\('misspelled'\): the set \(from runtime\) overrides no kernel 'Sigmiod'.*'Sigmoid'",
    ):
        tp.use_gradients("misspelled")
