"""Debug mode on the torch backend (CPU, or CUDA where torch sees one): the same kernels blamed as on numpy, the
backend and device named, torch's all_finite on floats, integers and bools, and the tables unwrapped afterwards.

Which kernel is to blame is worked out by hand, as in tests/unit/test_debug.py.
"""

from __future__ import annotations

import math

import pytest
import torch
from profile_expectation import assert_unobserved

import tensorplug as tp

pytestmark = pytest.mark.usefixtures("on_torch")


def _assert_clean() -> None:
    assert_unobserved("torch")
    assert math.isnan(tp.log(tp.tensor(-1.0)).item())  # unchecked again
    assert tp.grad(lambda x: tp.sum(x * x))(tp.tensor([1.0, 3.0])).tolist() == [2.0, 6.0]


def test_forward_nan_names_the_torch_backend_and_its_device() -> None:
    device = tp.backend("torch").device
    with tp.debug(), pytest.raises(tp.NonFiniteError) as info:
        tp.log(tp.tensor([1.0, -1.0]))
    e = info.value
    assert (e.kernel, e.backend, e.gradient_of, e.nan, e.inf) == ("Log", "torch", None, 1, 0)
    assert f"kernel 'Log' on backend 'torch' (device {device}) returned NaN in the forward pass" in str(e)
    assert "1 NaN of 2 elements (the first at index (1,)) in its output float32[2]" in str(e)
    with tp.debug(), pytest.raises(tp.NonFiniteError) as info:
        tp.exp(tp.tensor([1000.0], "float64"))
    assert (info.value.kernel, info.value.inf) == ("Exp", 1)
    assert "in its output float64[1]" in str(info.value)
    _assert_clean()


def test_backward_inf_in_the_gradient_of_sqrt() -> None:
    with tp.debug(), pytest.raises(tp.NonFiniteError) as info:
        tp.grad(lambda x: tp.sum(tp.sqrt(x)))(tp.tensor([0.0, 4.0]))
    assert (info.value.kernel, info.value.gradient_of, info.value.inf) == ("RealDiv", "Sqrt", 1)
    assert "in the backward pass, in the gradient of 'Sqrt'" in str(info.value)
    _assert_clean()


def test_a_nan_passed_in_and_finite_work() -> None:
    x = tp.tensor([math.nan, 1.0])
    with tp.debug():
        assert tp.isnan(x).tolist() == [True, False]  # a bool output is not checked
        with pytest.raises(tp.NonFiniteError) as info:
            tp.add(x, 1.0)
        assert "a=float32[2] holding 1 NaN" in str(info.value)
        assert "Its input 'a' held NaN or inf already" in str(info.value)
        w = tp.tensor([0.5, -2.0])
        assert tp.grad(lambda w: tp.sum(tp.tanh(w) * w))(w).tolist() == pytest.approx(
            [math.tanh(0.5) + 0.5 * (1 - math.tanh(0.5) ** 2), math.tanh(-2.0) - 2.0 * (1 - math.tanh(-2.0) ** 2)]
        )
    _assert_clean()


def test_all_finite_of_the_torch_backend() -> None:
    backend = tp.backend("torch")
    device = backend.torch_device  # type: ignore[attr-defined]
    assert backend.all_finite(torch.tensor([1.0, -2.0], device=device))
    assert not backend.all_finite(torch.tensor([1.0, math.nan], device=device))
    assert not backend.all_finite(torch.tensor(-math.inf, dtype=torch.float64, device=device))
    assert backend.all_finite(torch.tensor([1, 2], device=device))
    assert backend.all_finite(torch.tensor([True, False], device=device))
    assert backend.all_finite(torch.zeros((0, 3), device=device))
