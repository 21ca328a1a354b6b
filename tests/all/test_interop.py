"""numpy and torch side by side: switching backends mid-program, zero-copy DLPack, the same code on both."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

import tensorplug as tp


def test_numpy_stays_the_default_on_the_cpu() -> None:
    # torch ranks below numpy without CUDA (see tensorplug_torch._probe); with a GPU it ranks above.
    if not torch.cuda.is_available():
        assert tp.list_backends().index("numpy") < tp.list_backends().index("torch")


def test_switching_backends_mid_program_moves_tensors_created_before() -> None:
    a = tp.tensor([1.0, 2.0, 3.0])
    w = tp.variable([0.5, 0.5, 0.5], name="interop_w")
    assert (a.backend, w.backend) == ("numpy", "numpy")
    tp.set_backend("torch")
    y = a * w + 1.0
    assert y.backend == "torch"
    assert isinstance(y.raw, torch.Tensor)
    assert y.tolist() == [1.5, 2.0, 2.5]
    g = tp.grad(lambda x: tp.sum(x * x))(a)
    assert g.backend == "torch"
    assert g.tolist() == [2.0, 4.0, 6.0]
    tp.set_backend("numpy")
    z = y + a
    assert z.backend == "numpy"
    assert z.tolist() == [2.5, 4.0, 5.5]


def test_moving_between_cpu_backends_is_zero_copy() -> None:
    t = tp.tensor(np.arange(6, dtype=np.float32))
    on_torch = t.to_backend("torch")
    assert on_torch.backend == "torch"
    assert np.shares_memory(on_torch.numpy(), t.numpy())
    back = on_torch.to_backend("numpy")
    assert np.shares_memory(back.numpy(), t.numpy())


def test_dlpack_both_ways() -> None:
    source = torch.arange(4, dtype=torch.float64)
    t = tp.from_dlpack(source)  # on the active (numpy) backend, sharing torch's memory
    assert t.dtype == "float64"
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.shares_memory(t.numpy(), source.numpy())
    exported = torch.from_dlpack(t)
    assert exported.data_ptr() == source.data_ptr()
    tp.set_backend("torch")
    u = tp.from_dlpack(np.ones(3, dtype=np.int32))
    assert (u.backend, u.dtype, u.tolist()) == ("torch", "int32", [1, 1, 1])


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_same_training_code_runs_on_both(backend: str) -> None:
    tp.set_backend(backend)
    rng = np.random.default_rng(3)
    x = tp.tensor(rng.standard_normal((32, 3)).astype(np.float32))
    target = tp.tensor((rng.standard_normal((32, 1)) > 0).astype(np.float32))
    w = tp.variable(np.zeros((3, 1), np.float32), name=f"same_code_w_{backend}")

    def loss() -> tp.Tensor:
        return tp.losses.sigmoid_cross_entropy(target, x @ w)

    first = None
    for _ in range(40):
        value, grads = tp.variable_grads(loss, [w])
        first = value.item() if first is None else first
        w.assign(w - grads[w.name] * 0.5)
    assert value.item() < first
    assert w.backend == backend


def test_torch_is_imported_only_when_its_backend_starts() -> None:
    import subprocess

    code = (
        "import sys, tensorplug as tp; tp.ones(2); before = 'torch' in sys.modules; "
        "tp.set_backend('torch'); print(before, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
