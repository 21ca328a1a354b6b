"""Bad input, differential: the same generated call gives the same outcome on the numpy and torch backends.

Every op of tests/bad_input_table.py, with the calls hypothesis draws there (valid and invalid): both backends
return tensors of equal dtype, shape and values (tolerances per dtype; shapes and dtypes only for random ops),
or both raise tensorplug errors of the same class; and on torch too, the outcome keeps the contract of
tests/unit/test_bad_input.py (no raw exception, no warning, a message naming the op and its arguments).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bad_input_table import SPECS, OpSpec, contract_violations, run
from hypothesis import given
from hypothesis import strategies as st

import tensorplug as tp

TOLERANCE = {"float32": 1e-4, "float64": 1e-10}
# Known divergences on non-finite inputs, compared for shapes and dtypes only (listed in the bad-input note):
# max_pool_grad: with several NaN in a window, torch's pooling indices keep the last NaN, numpy's argmax the first
# (documented in tensorplug_torch._nn.max_pool_grad); convolutions: numpy multiplies the zero padding by the
# filter (0 * NaN and 0 * inf give NaN), torch's convolutions skip padded taps.
# prod: with huge values, overflow to inf (then inf * 0 = NaN) depends on the order the axes are multiplied in.
NON_FINITE_DIFFER = {"max_pool_grad", "conv2d", "conv2d_transpose", "conv2d_backprop_input", "conv2d_backprop_filter"}
# cumprod: torch's CPU kernel accumulates float32 in float64, so a running product that overflows float32 (1e30 *
# 1e30) and then meets a zero gives 0 there, where numpy's float32 product is inf and then inf * 0 = NaN.
NON_FINITE_DIFFER |= {"prod", "cumprod"}


def has_non_finite(call: Any) -> bool:
    return any(
        isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size and not (np.abs(a) < 1e15).all() for a in call.args
    )


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@given(data=st.data())
def test_numpy_and_torch_agree_on_bad_input(spec: OpSpec, data: st.DataObject) -> None:
    call = data.draw(spec.calls, label="call")
    tp.set_backend("numpy")
    on_numpy = run(spec, call)
    tp.set_backend("torch")
    try:
        on_torch = run(spec, call)
    finally:
        tp.set_backend("numpy")
    where = f"tp.{spec.name}{call!r}: numpy {on_numpy.describe()}; torch {on_torch.describe()}"
    assert contract_violations(spec, call, on_torch, "torch") == [], where
    if on_numpy.error is not None or on_torch.error is not None:
        assert type(on_numpy.error) is type(on_torch.error), where
        return
    assert on_numpy.outputs is not None
    assert on_torch.outputs is not None
    assert len(on_numpy.outputs) == len(on_torch.outputs), where
    for n, t in zip(on_numpy.outputs, on_torch.outputs, strict=True):
        assert (n.dtype, n.shape) == (t.dtype, t.shape), where
        if spec.random or (spec.name in NON_FINITE_DIFFER and has_non_finite(call)):
            continue
        vn, vt = n.numpy(), t.numpy()
        if vn.dtype.kind in "biu":
            np.testing.assert_array_equal(vn, vt, err_msg=where)
        else:
            tol = TOLERANCE[n.dtype]
            np.testing.assert_allclose(vn, vt, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
