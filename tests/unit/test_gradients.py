"""check_grads itself: it must catch wrong first and second derivatives.

The numeric gradient checks of every kernel live in the conformance tables
(tensorplug.testing.cases, cases with ``grad=True``), run by test_conformance.py.
"""

from __future__ import annotations

from typing import Any

import pytest

import tensorplug as tp


@pytest.mark.usefixtures("tensorplug_registries")
def test_check_grads_catches_a_wrong_gradient() -> None:
    @tp.register_gradient("Tanh", outputs_to_save=[0], override=True)
    def off_by_a_bit(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        (y,) = saved
        return (dy * (1.0 - y * y) * 1.001,)

    with pytest.raises(AssertionError, match="differ"):
        tp.testing.check_grads(tp.tanh, [tp.tensor([0.3, -0.7])], order=1)


@pytest.mark.usefixtures("tensorplug_registries")
def test_check_grads_catches_a_wrong_second_derivative() -> None:
    # First derivative right, but written with a constant, so the second derivative is lost.
    @tp.register_gradient("Square", inputs_to_save=["x"], override=True)
    def detached(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        (x,) = saved
        return (dy * tp.stop_gradient(x) * 2.0,)

    tp.testing.check_grads(tp.square, [tp.tensor([0.3, -0.7])], order=1)
    with pytest.raises(AssertionError, match="order 1 left"):
        tp.testing.check_grads(tp.square, [tp.tensor([0.3, -0.7])], order=2)


def test_check_grads_passes_integer_arguments_through() -> None:
    seen: list[str] = []

    def f(x: tp.Tensor, n: tp.Tensor) -> tp.Tensor:
        seen.append(n.dtype)
        return x * tp.cast(n, "float64")

    tp.testing.check_grads(f, [tp.tensor([1.0, 2.0]), tp.tensor([3, 4])], order=2)
    assert set(seen) == {"int32"}
    with pytest.raises(ValueError, match="no float argument"):
        tp.testing.check_grads(lambda n: n, [tp.tensor([1])])
