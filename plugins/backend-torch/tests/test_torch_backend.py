"""The torch backend object: device choice, dtypes, priority, lazy import, memory, CUDA-only checks."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import tensorplug as tp
from tensorplug_torch import _probe


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=environment, capture_output=True, text=True, check=False
    )


def test_tensors_live_on_torch_storage() -> None:
    x = tp.tensor([[1.0, 2.0]])
    assert x.backend == "torch"
    assert isinstance(x.raw, torch.Tensor)
    assert x.device == str(tp.backend().torch_device)  # type: ignore[attr-defined]
    assert (x * 2).tolist() == [[2.0, 4.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_every_dtype_round_trips(dtype: str) -> None:
    values = np.array([0, 1, 1], dtype=dtype)
    t = tp.tensor(values)
    assert t.dtype == dtype
    assert t.raw.dtype == getattr(torch, "bool" if dtype == "bool" else dtype)
    np.testing.assert_array_equal(t.numpy(), values)


def test_device_option_and_errors() -> None:
    tp.set_backend("torch", device="cpu")
    assert tp.backend().device == "cpu"
    with pytest.raises(tp.BackendError, match="not a torch device"):
        tp.set_backend("torch", device="gpu-please")
    if not torch.cuda.is_available():
        with pytest.raises(tp.BackendError, match=r"sees no CUDA device.*TENSORPLUG_TORCH_DEVICE=cpu"):
            tp.set_backend("torch", device="cuda")
    tp.set_backend("torch", device="cpu")


def test_environment_variable_picks_the_device() -> None:
    out = run_python(
        """
        import tensorplug as tp
        tp.set_backend("torch")
        print(tp.tensor([1.0]).device)
        """,
        TENSORPLUG_TORCH_DEVICE="cpu",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cpu"


def test_priority_follows_the_device_without_importing_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_probe.ENV_DEVICE, "cuda:1")
    assert _probe.priority() == _probe.CUDA_PRIORITY
    monkeypatch.setenv(_probe.ENV_DEVICE, "cpu")
    assert _probe.priority() == _probe.CPU_PRIORITY
    monkeypatch.delenv(_probe.ENV_DEVICE)
    expected = _probe.CUDA_PRIORITY if _probe.cuda_present() else _probe.CPU_PRIORITY
    assert _probe.priority() == expected
    assert _probe.CPU_PRIORITY < 1 < _probe.CUDA_PRIORITY  # numpy's priority is 1


def test_importing_and_listing_do_not_import_torch() -> None:
    out = run_python(
        """
        import sys
        import tensorplug as tp
        after_import = "torch" in sys.modules
        tp.list_backends(); tp.kernels_for_backend("torch"); tp.coverage(); tp.plugins()
        after_listing = "torch" in sys.modules
        tp.set_backend("torch")
        print(after_import, after_listing, "torch" in sys.modules)
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "True"]


def test_memory_reports_torch_tensors_and_releases_them() -> None:
    gc.collect()
    before = tp.memory()["torch"]
    x = tp.zeros((256, 256), dtype="float64")
    during = tp.memory()["torch"]
    assert during["bytes"] - before["bytes"] == 256 * 256 * 8
    assert during["tensors"] - before["tensors"] == 1
    x.dispose()
    assert tp.memory()["torch"]["bytes"] == before["bytes"]


def test_kernels_do_not_build_torch_autograd_graphs() -> None:
    x = tp.tensor([1.0, 2.0])
    g = tp.grad(lambda x: tp.sum(tp.exp(x)))(x)
    assert not g.raw.requires_grad
    assert g.raw.grad_fn is None


def test_mlp_trains_on_torch() -> None:
    rng = np.random.default_rng(0)
    x = tp.tensor(rng.standard_normal((64, 4)).astype(np.float32))
    onehot = tp.tensor(np.eye(2, dtype=np.float32)[(rng.standard_normal(64) > 0).astype(int)])
    params = [
        tp.variable(rng.standard_normal((4, 16)).astype(np.float32) * 0.5, name="torch_w1"),
        tp.variable(np.zeros(16, np.float32), name="torch_b1"),
        tp.variable(rng.standard_normal((16, 2)).astype(np.float32) * 0.5, name="torch_w2"),
    ]

    def loss() -> tp.Tensor:
        return tp.losses.softmax_cross_entropy(onehot, tp.relu(x @ params[0] + params[1]) @ params[2])

    losses = []
    for _ in range(60):
        value, grads = tp.variable_grads(loss, params)
        losses.append(value.item())
        for p in params:
            p.assign(p - grads[p.name] * 0.5)
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.cuda
def test_cuda_device_memory_returns_to_its_start() -> None:
    tp.set_backend("torch", device="cuda")
    try:
        f = tp.grad(lambda x: tp.sum(tp.tanh(x @ x)))
        f(tp.random_normal((1024, 1024), seed=0))  # cuBLAS keeps its workspace (32 MiB on Hopper) from here on
        gc.collect()
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        x = tp.random_normal((1024, 1024), seed=0)
        y = f(x)
        assert y.device.startswith("cuda")
        del x, y
        gc.collect()
        torch.cuda.synchronize()
        assert torch.cuda.memory_allocated() == start
    finally:
        tp.set_backend("torch", device="cpu")
