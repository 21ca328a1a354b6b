"""Checked calls on the torch backend: after an op's first call on tensors of a dtype, later calls run the torch
kernel's direct form (``torch.add(a, b)``, no inputs dict); what may change what they must do reaches them."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._engine import engine
from tensorplug.ops import _binary, _unary


def test_the_second_call_runs_the_torch_function_itself() -> None:
    x, y = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])
    x + y
    out = x + y
    entry = _binary._ADD.entries["float32"]
    assert entry.table is engine.table
    assert entry.direct is torch.add
    assert (out.backend, out.dtype, out.tolist()) == ("torch", "float32", [4.0, 6.0])
    assert type(out._data) is torch.Tensor
    assert (x * 2.0).tolist() == [2.0, 4.0]
    assert (x * 2.0).tolist() == [2.0, 4.0]
    assert tp.grad(lambda x: tp.sum(tp.tanh(x * y)))(x).tolist() == pytest.approx(
        ((1 - torch.tanh(torch.tensor([3.0, 8.0])) ** 2) * torch.tensor([3.0, 4.0])).tolist()
    )


@pytest.mark.usefixtures("tensorplug_registries")
def test_an_override_registered_after_the_warm_up_is_called() -> None:
    x = tp.tensor([1.0, -2.0])
    tp.abs(x)
    tp.abs(x)
    assert _unary._ABS.entries["float32"].direct is torch.abs

    def tripled(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return inputs["x"].abs() * 3

    with pytest.warns(tp.PluginWarning, match="shadows"):
        tp.register_kernel(K.ABS, "torch", tripled, override=True)
    assert tp.abs(x).tolist() == [3.0, 6.0]
    assert tp.abs(x).tolist() == [3.0, 6.0]
    tp.unregister_kernel(K.ABS, "torch")
    assert tp.abs(x).tolist() == [1.0, 2.0]
