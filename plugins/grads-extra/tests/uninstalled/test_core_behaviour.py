"""With tensorplug-grads-extra uninstalled, every gradient it changes is the core's again, and its sets are gone."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import tensorplug as tp

CORE = "tensorplug"
SETS = ("straight_through", "guided_backprop", "sigmoid_surrogate", "clip")


@pytest.mark.parametrize("kernel", ["Sqrt", "Pow", "Log", "RealDiv", "FloorDiv"])
def test_only_the_core_gradient_is_registered(kernel: str) -> None:
    assert [s.source for s in tp.gradient_stack(kernel)] == [CORE]
    row = next(r for r in tp.coverage().rows if r.kernel == kernel)
    assert (row.gradient, row.shadows) == (CORE, ())
    assert row.differentiable is (kernel != "FloorDiv")


def test_the_core_gradients_at_the_singularities() -> None:
    zero = tp.tensor([0.0, 4.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        assert tp.grad(tp.sqrt)(zero).tolist() == [math.inf, 0.25]
        assert tp.grad(tp.log)(zero).tolist() == [math.inf, 0.25]
        assert tp.grad(lambda b: tp.div(1.0, b))(zero).tolist() == [-math.inf, -1.0 / 16]
        assert math.isnan(tp.grad(lambda a: tp.pow(a, 0.0))(zero).tolist()[0])
        assert np.isnan(tp.grad(lambda x: tp.norm(x))(tp.zeros((3,))).numpy()).all()


def test_floor_div_is_not_differentiable() -> None:
    with pytest.raises(tp.GradientError, match="'FloorDiv' is not differentiable \\(declared by tensorplug\\)"):
        tp.grad(lambda b: tp.floor_div(tp.tensor(3.0), b))(tp.tensor(2.0))


def test_rounding_has_the_core_zero_gradient() -> None:
    assert tp.grad(tp.round)(tp.tensor([0.3, 1.7])).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name", SETS)
def test_its_sets_are_gone(name: str) -> None:
    assert name not in [s.name for s in tp.gradient_sets()]
    with pytest.raises(tp.RegistrationError, match=f"use_gradients\\({name!r}\\): no gradient set of that name"):
        tp.use_gradients(name)


def test_the_package_is_gone() -> None:
    with pytest.raises(ImportError):
        importlib.import_module("tensorplug_grads_extra")
    assert [p.name for p in tp.plugins()] == ["tensorplug", "numpy"]
