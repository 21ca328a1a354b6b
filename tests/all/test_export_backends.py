"""``tp.export`` on the torch backend: the exporter gets the program of a torch trace, with the Variables' values and
the constants read back to NumPy arrays (an exporter never sees a backend's storage but through the program)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tensorplug as tp


@pytest.fixture
def on_torch(tensorplug_registries: None) -> Iterator[None]:
    before = tp.get_backend()
    tp.set_backend("torch")
    yield
    tp.set_backend(before)


@pytest.mark.usefixtures("on_torch")
def test_a_torch_trace_is_handed_over_with_host_values() -> None:
    tp.register_exporter("capture", lambda request: request)
    w = tp.variable([1.0, 2.0], name="w")
    request = tp.export(lambda x: x * w + 3.0, tp.tensor([1.0, 1.0]), format="capture")
    assert request.program.backend.name == "torch"
    assert isinstance(request.variable_values[0], np.ndarray)
    assert request.variable_values[0].tolist() == [1.0, 2.0]
    (constant,) = request.constant_values.values()
    assert isinstance(constant, np.ndarray)
    assert constant.tolist() == 3.0
    grown = tp.export(lambda x: tp.sum(x * 2.0, axis=1), tp.ones((3, 2)), format="capture", dynamic_axes={"x": [0]})
    assert grown.dynamic[grown.program.arguments[0]] == {0: "x_dim0"}
    assert grown.dynamic[grown.program.outputs[0]] == {0: "x_dim0"}
