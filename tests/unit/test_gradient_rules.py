"""One-line gradient rules (tensorplug.gradients.unary / binary) make the GradientSpec a hand-written one would be."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.gradients import binary, unary


def _saved_from_plugin(kernel: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    spec = tp.get_gradient(kernel)
    assert spec is not None
    return spec.inputs_to_save, spec.outputs_to_save


@pytest.mark.parametrize(
    ("saves", "inputs_to_save", "outputs_to_save"), [("x", ("x",), ()), ("y", (), (0,)), (None, (), ())]
)
def test_a_unary_rule_saves_the_input_the_output_or_nothing(
    saves: Any, inputs_to_save: tuple[str, ...], outputs_to_save: tuple[int, ...]
) -> None:
    spec = unary(K.TANH, lambda dy, *saved: dy, saves=saves)
    assert (spec.kernel_name, spec.inputs_to_save, spec.outputs_to_save) == (K.TANH, inputs_to_save, outputs_to_save)
    assert spec.override is False
    assert callable(spec.grad)
    assert spec.grad.__name__ == "grad_Tanh"


def test_the_core_tables_written_with_rules_save_what_they_saved_before() -> None:
    # The gradients read the output for these kernels, the input for those, nothing for Neg and Identity.
    assert {k: _saved_from_plugin(k) for k in (K.TANH, K.EXP, K.SQRT, K.SIGMOID)} == dict.fromkeys(
        (K.TANH, K.EXP, K.SQRT, K.SIGMOID), ((), (0,))
    )
    assert {k: _saved_from_plugin(k) for k in (K.SIN, K.LOG, K.RELU, K.ABS)} == dict.fromkeys(
        (K.SIN, K.LOG, K.RELU, K.ABS), (("x",), ())
    )
    assert {k: _saved_from_plugin(k) for k in (K.NEG, K.IDENTITY, K.STEP)} == dict.fromkeys(
        (K.NEG, K.IDENTITY, K.STEP), ((), ())
    )
    assert _saved_from_plugin(K.MULTIPLY) == (("a", "b"), ())


def test_a_unary_rule_computes_the_gradient_from_what_it_saves(tensorplug_registries: None) -> None:
    spec = unary(K.TANH, lambda dy, y: tp.mul(dy, tp.sub(1.0, tp.square(y))), saves="y", override=True)
    tp.register_gradient(spec.kernel_name, spec.grad, outputs_to_save=spec.outputs_to_save, override=True)
    x = tp.tensor([0.5, -1.0], dtype="float64")
    np.testing.assert_allclose(tp.grad(tp.tanh)(x).numpy(), 1 - np.tanh([0.5, -1.0]) ** 2, rtol=1e-12)
    tp.testing.check_grads(tp.tanh, [x], order=2)


def test_a_unary_rule_refuses_an_unknown_saves() -> None:
    with pytest.raises(ValueError, match=r"unary\('Tanh'\): saves='z'; it is 'x' \(the input\), 'y'"):
        unary(K.TANH, lambda dy, z: dy, saves="z")  # type: ignore[arg-type]


def test_a_binary_rule_sums_each_gradient_to_its_input_and_computes_only_the_ones_asked_for() -> None:
    called: list[str] = []

    def da(dy: Any, a: Any, b: Any) -> Any:
        called.append("a")
        return tp.mul(dy, b)

    def db(dy: Any, a: Any, b: Any) -> Any:
        called.append("b")
        return tp.mul(dy, a)

    spec = binary(K.MULTIPLY, da, db)
    assert (spec.inputs_to_save, spec.outputs_to_save) == (("a", "b"), ())
    a, b = tp.tensor([[1.0, 2.0], [3.0, 4.0]]), tp.tensor([10.0, 20.0])
    dy = tp.ones_like(a)
    assert callable(spec.grad)
    lazy_a, lazy_b = spec.grad(dy, (a, b), {})
    assert called == []
    assert lazy_b().tolist() == [4.0, 6.0]  # dy * a, summed over the broadcast axis to b's shape
    assert called == ["b"]
    assert lazy_a().tolist() == [[10.0, 20.0], [10.0, 20.0]]
    assert binary(K.PRELU, da, db, inputs=("x", "alpha")).inputs_to_save == ("x", "alpha")
